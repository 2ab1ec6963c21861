"""Ask a server whether it is held (asleep or paused), quietly: each engine's hold endpoints
(:class:`~eagle_tui.model.engines.facets.hold.HoldFacet`) after a readiness poll, never more
often than every ``HOLD_INTERVAL_S`` each, and never again after a 404 (the engine's endpoints
exist only in a mode of its own, such as vLLM's dev mode) until nothing listens any more.

An engine whose readiness path says 503 while paused (SGLang's ``/ready``) has an ``up_path``
that says 200 while it is up all the same: asked after a 503 once the server was ready (or at
the slow cadence before, for a server found paused), it tells paused from starting, and its
200 is believed only when the readiness path, asked once more, still says 503.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.engines import profile_of
from eagle_tui.model.engines.facets.hold import HoldFacet
from eagle_tui.model.events import HealthSample, HoldSample
from eagle_tui.sources.http_budget import (
    HEALTH_MAX_BYTES,
    BodyTooLarge,
    BoundedResponse,
    DeadlineExceeded,
    get_bounded,
)

HOLD_INTERVAL_S = 15.0  # each hold endpoint asked at most this often
MISSING = (404, 405)


class HoldWatch:
    """The hold endpoints of one server: which are missing, when each was last asked, and
    whether its readiness said "up" before (``ask`` after each readiness sample)."""

    def __init__(self, engine: Callable[[], str | None], *, clock: Callable[[], float] = time.time,
                 mark: Callable[[str], str] = str, interval: float = HOLD_INTERVAL_S,
                 timeout: float = 2.0, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._engine = engine
        self._clock = clock
        self._mark = mark
        self.interval = interval
        self.timeout = timeout
        self._mono = monotonic
        self.missing: set[str] = set()
        self._asked: dict[str, float] = {}
        self.was_ready = False
        self.paused_by_up = False  # the last word of ``up_path``: paused
        self.requests = 0

    def forget(self) -> None:
        """Nothing listens any more: the next server may be another engine or mode."""
        self.missing.clear()
        self._asked.clear()
        self.was_ready = self.paused_by_up = False

    def _due(self, path: str) -> bool:
        last = self._asked.get(path)
        return last is None or self._mono() - last >= self.interval

    async def _get(self, client: httpx.AsyncClient, path: str) -> BoundedResponse | None:
        self._asked[path] = self._mono()
        self.requests += 1
        try:
            resp = await get_bounded(client, self._mark(path), deadline_s=self.timeout,
                                     max_bytes=HEALTH_MAX_BYTES)
        except (httpx.HTTPError, DeadlineExceeded, BodyTooLarge):
            return None
        if resp.status_code in MISSING:
            self.missing.add(path)
            return None
        return resp

    async def _flag(self, client: httpx.AsyncClient, path: str, key: str) -> bool | None:
        resp = await self._get(client, path)
        if resp is None or resp.status_code != 200:
            return None
        try:
            body = load_json(resp.text, path)
        except LoadError:
            return None
        value = body.get(key) if isinstance(body, dict) else None
        return value if isinstance(value, bool) else None

    async def ask(self, client: httpx.AsyncClient, sample: HealthSample) -> list[HoldSample]:
        """The hold samples after one readiness sample (none most of the time)."""
        if sample.state == "no_listener":
            self.forget()
            return []
        profile = profile_of(self._engine())
        if profile is None or not profile.hold.any:
            return []
        facet = profile.hold
        out: list[HoldSample] = []
        if facet.up_path is not None and facet.up_path not in self.missing:
            out.extend(await self._up(client, facet, sample))
        if sample.state == "ready":
            self.was_ready = True
            out.extend(await self._queries(client, facet))
        return out

    async def _up(self, client: httpx.AsyncClient, facet: HoldFacet,
                  sample: HealthSample) -> list[HoldSample]:
        assert facet.up_path is not None
        if sample.state == "ready":
            if self.paused_by_up:  # the readiness path says ready again: resumed
                self.paused_by_up = False
                return [HoldSample(sample.t, paused=False, path=sample.path)]
            return []
        if sample.state != "starting" or not ((self.was_ready and not self.paused_by_up)
                                              or self._due(facet.up_path)):
            return []
        resp = await self._get(client, facet.up_path)
        paused = resp is not None and resp.status_code == 200
        if paused and not self.paused_by_up and sample.path and await self._came_up(client,
                                                                                  sample.path):
            return []
        if paused == self.paused_by_up:
            return []
        self.paused_by_up = paused
        return [HoldSample(self._clock(), paused=paused, path=facet.up_path)]

    async def _came_up(self, client: httpx.AsyncClient, path: str) -> bool:
        """Whether the readiness ``path``, asked again after the up path's 200, now says 200:
        the 503 before it was a start that ended between the two requests, not a pause (a
        server goes from starting to up once; only a 503 *after* the up path's 200 says
        paused)."""
        again = await self._get(client, path)
        return again is not None and again.status_code == 200

    async def _queries(self, client: httpx.AsyncClient, facet: HoldFacet) -> list[HoldSample]:
        said: dict[str, bool] = {}
        for q in facet.queries:
            if q.path in self.missing or not self._due(q.path):
                continue
            value = await self._flag(client, q.path, q.key)
            if value is not None:
                said[q.says] = value
        if not said:
            return []
        return [HoldSample(self._clock(), paused=said.get("paused"), sleeping=said.get("sleeping"),
                           path=",".join(q.path for q in facet.queries if q.says in said))]


__all__ = ["HOLD_INTERVAL_S", "HoldWatch"]
