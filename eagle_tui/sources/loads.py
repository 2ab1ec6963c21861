"""Each data-parallel rank's load, from the engine's load endpoint (SGLang's ``/v1/loads``).

Asked at the ``/metrics`` cadence, quietly: an engine known to have none is not asked; a 404
(an older SGLang, or another engine not known yet) is not asked again for ``forget_after``
seconds and is no failure, nor is an answer that does not read (the dashboard has the same
figures elsewhere). The path that answered is kept for this server, and forgotten when it stops
answering (a restart may be another engine). The answer must be complete within ``timeout``
and :data:`INFO_MAX_BYTES`, and its JSON goes through the bounded loader. An answer equal to
the last one is not repeated (its accept lengths move only at the engine's stats lines).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

import httpx

from eagle_tui.model.bench.windows import own_path
from eagle_tui.model.boundary.loaders import LoadError
from eagle_tui.model.engines import profile_of, profiles
from eagle_tui.model.events import Event, RankLoads
from eagle_tui.sources.base import paced, under_limit
from eagle_tui.sources.cadence import backoff
from eagle_tui.sources.http_budget import (
    INFO_MAX_BYTES,
    BodyTooLarge,
    DeadlineExceeded,
    get_bounded,
)
from eagle_tui.sources.metrics import DEFAULT_INTERVAL_S
from eagle_tui.transport.base import Transport

DEFAULT_TIMEOUT_S = 5.0
FORGET_404_S = 300.0
LoadsReader = Callable[[object, float], RankLoads]


def load_paths(engine: str | None = None) -> tuple[tuple[str, LoadsReader], ...]:
    """The engine's load endpoint (the query included) and its reader; every registered
    engine's while the engine is not known (an engine known to have none: nothing to ask)."""
    out: dict[str, LoadsReader] = {}
    known = profile_of(engine)
    for p in [known] if known is not None else profiles():
        e = p.endpoints
        if e.loads is not None and e.read_loads is not None:
            # our mark first: the access line then ends the way the log view folds
            path = own_path(e.loads) + (f"&{e.loads_query}" if e.loads_query else "")
            out.setdefault(path, e.read_loads)
    return tuple(out.items())


class LoadsSource:
    """Source of :class:`RankLoads` events; silent where the server has no load endpoint."""

    def __init__(self, transport: Transport, base_url: str, *,
                 interval: float = DEFAULT_INTERVAL_S, timeout: float = DEFAULT_TIMEOUT_S,
                 name: str = "loads", max_polls: int | None = None,
                 clock: Callable[[], float] = time.time,
                 forget_after: float = FORGET_404_S,
                 engine: Callable[[], str | None] = lambda: None) -> None:
        self.name = name
        self._engine = engine
        self.transport = transport
        self.base_url = base_url
        self.interval = interval
        self.every = interval  # the wait before the next poll (longer while nothing moves)
        self.timeout = timeout
        self.max_polls = max_polls
        self.forget_after = forget_after
        self._clock = clock
        self.missing: dict[str, float] = {}  # path → when it answered 404 (monotonic)
        self.path: str | None = None
        self.polls = 0
        self._last: RankLoads | None = None

    async def _ask(self, client: httpx.AsyncClient, path: str,
                   read: LoadsReader) -> RankLoads | None:
        """One path's reading; ``None`` for no usable answer (404 remembered)."""
        try:
            resp = await get_bounded(client, path, deadline_s=self.timeout,
                                     max_bytes=INFO_MAX_BYTES)
        except (BodyTooLarge, DeadlineExceeded):
            return None
        if resp.status_code == 404:
            self.missing[path] = time.monotonic()
            return None
        if resp.status_code != 200:
            return None
        try:
            return read(resp.json(f"the {path} answer"), self._clock())
        except (LoadError, ValueError):
            return None

    async def fetch(self, client: httpx.AsyncClient) -> RankLoads | None:
        now = time.monotonic()
        self.missing = {p: t for p, t in self.missing.items() if now - t < self.forget_after}
        paths = load_paths(self._engine())
        if self.path is not None:
            paths = tuple(pr for pr in paths if pr[0] == self.path) or paths
        try:
            for path, read in paths:
                if path in self.missing:
                    continue
                got = await self._ask(client, path, read)
                if got is not None:
                    self.path = path
                    return got
        except (httpx.ConnectError, httpx.TimeoutException, httpx.RemoteProtocolError):
            self.path = None
            self.missing.clear()  # not answering: it may come back as another server
        return None

    async def events(self) -> AsyncIterator[Event]:
        async with self.transport.http_client(self.base_url, self.timeout) as client:
            async for _ in paced(lambda: self.every, under_limit(self)):
                self.polls += 1
                got = await self.fetch(client)
                if got is not None and (self._last is None or (got.accept, got.running) != (
                        self._last.accept, self._last.running)):
                    self._last = got
                    self.every = self.interval
                    yield got
                else:  # an answer that stands still (an idle server's) is asked less often
                    self.every = backoff(got is None, self.every, self.interval)


__all__ = ["LoadsSource", "load_paths"]
