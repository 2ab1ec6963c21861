"""Read the fleet from a Prometheus server: ``/api/v1/query`` and ``/api/v1/query_range``.

One refresh sends the query groups of :mod:`eagle_tui.model.fleet.queries` concurrently (four
requests, whatever the number of instances) and hands their answers to the pure
:func:`~eagle_tui.model.fleet.snapshot.build_snapshot`. Every request is bounded twice: a total
deadline (connect + send + the whole body, not httpx's per-read timeout, which a server trickling
one byte a second never trips) and a body cap (a selector matching far more than meant must not
grow memory without limit). A failure of any kind — refused, timed out, HTTP error, Prometheus'
``"status": "error"``, a body that is not its JSON or not its shape (checked level by level in
:mod:`eagle_tui.model.fleet.answer`), a body over the cap — becomes the failed
group's error text; the snapshot then keeps the last good figures marked stale and says why.
Prometheus' ``warnings`` (partial data from a remote-read/federated store) are passed on too.

More in docs/architecture.md, "Module notes", ``sources/prometheus``.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx

from eagle_tui.model.fleet.answer import AnswerError
from eagle_tui.model.fleet.answer import parse_answer as check_body
from eagle_tui.model.fleet.queries import (
    DEFAULT_LOOKBACK,
    DEFAULT_WINDOW,
    QueryGroup,
    fleet_groups,
    sparkline_group,
)
from eagle_tui.model.fleet.snapshot import (
    Answers,
    FleetSnapshot,
    Labels,
    RatePlan,
    Vector,
    any_young,
    build_snapshot,
    split_tagged,
)
from eagle_tui.model.fleet.windows import format_duration, parse_duration, parse_targets, tiers
from eagle_tui.sources.base import paced
from eagle_tui.sources.http_budget import BodyTooLarge, DeadlineExceeded, get_bounded
from eagle_tui.transport.base import Transport, TransportError

DEFAULT_DEADLINE_S = 5.0
DEFAULT_MAX_BODY = 32 * 1024 * 1024  # far above what a thousand instances' groups take
DEFAULT_INTERVAL_S = 5.0
SPARK_POINTS = 30
TARGETS_EVERY_S = 60.0  # how often the scrape intervals (/api/v1/targets) are read again


class PrometheusError(TransportError):
    """Prometheus did not give a usable answer (the message says what it gave instead)."""


async def bounded_get(client: httpx.AsyncClient, path: str, params: Mapping[str, str], *,
                      deadline_s: float, max_body: int) -> bytes:
    """GET with a total deadline and a body cap (the shared
    :func:`~eagle_tui.sources.http_budget.get_bounded`); :class:`PrometheusError` on any
    failure, in the words the fleet's status line shows."""
    url = f"{path}?{urlencode(params)}" if params else path
    try:
        resp = await get_bounded(client, url, deadline_s=deadline_s, max_bytes=max_body)
    except DeadlineExceeded:
        raise PrometheusError(f"no answer within {deadline_s:g} s") from None
    except BodyTooLarge:
        raise PrometheusError(f"answer over {max_body:,} bytes (narrow --selector)") from None
    except httpx.ConnectError as exc:
        raise PrometheusError(f"unreachable: {exc}") from None
    except httpx.HTTPError as exc:
        raise PrometheusError(f"{type(exc).__name__}: {exc}") from None
    if resp.status_code != 200 and resp.status_code not in (400, 422, 503):
        raise PrometheusError(f"HTTP {resp.status_code} from {path}")
    return resp.content


def parse_answer(body: bytes,
                 expect: str | None = None) -> tuple[str, list[tuple[Labels, Any]], list[str]]:
    """Prometheus' JSON → (result type, [(labels, value or values)], warnings), every level
    checked (:mod:`eagle_tui.model.fleet.answer`); :class:`PrometheusError` saying what came
    instead of the answer (``expect``: the result type the query asks for)."""
    try:
        answer = check_body(body, expect)
    except AnswerError as exc:
        raise PrometheusError(str(exc)) from None
    return answer.result_type, answer.result, answer.warnings


@dataclass
class FleetPoller:
    """Refreshes the fleet from ``base_url`` every ``interval`` seconds."""

    base_url: str
    selector: str | None = None
    window: str = DEFAULT_WINDOW
    lookback: str = DEFAULT_LOOKBACK
    interval: float = DEFAULT_INTERVAL_S
    deadline_s: float = DEFAULT_DEADLINE_S
    max_body: int = DEFAULT_MAX_BODY
    sparklines: bool = False
    transport: Transport | None = None
    clock: Callable[[], float] = time.time
    hints: Callable[[], Mapping[str, str]] | None = None
    # called with each snapshot (the SSH prober starts its probes of the down rows from it)
    observe: Callable[[FleetSnapshot], None] | None = None
    last: FleetSnapshot | None = None
    # rate windows that adapt to each instance's scrape interval and serving age
    # (model/fleet/windows.py); False: every rate over ``window``
    adaptive: bool = True
    requests: int = 0  # query requests (the targets requests are counted apart)
    target_requests: int = 0
    bytes_received: int = 0
    groups: tuple[QueryGroup, ...] = field(default=())
    plan: RatePlan = field(default_factory=RatePlan)
    _targets_at: float | None = None
    _young: bool = True  # the first refresh asks the tiers: nothing is known of the ages yet

    def __post_init__(self) -> None:
        if self.interval <= 0 or self.deadline_s <= 0 or self.max_body <= 0:
            raise ValueError("interval, deadline and body cap must be positive")
        self._set_plan({})

    def _set_plan(self, scrape: Mapping[str, float], young: bool = True) -> None:
        """The window tiers for these scrape intervals, and the groups that ask them (no
        shorter tier when the last refresh found no instance younger than the window)."""
        self._young = young
        default_s = parse_duration(self.window)
        shorter: tuple[tuple[str, float], ...] = ()
        if self.adaptive and default_s is not None and young:
            shorter = tuple((format_duration(w), w) for w in tiers(scrape.values(), default_s)[:-1])
        self.plan = RatePlan(default_s, shorter, dict(scrape))
        fastest = min(scrape.values(), default=None)
        self.groups = fleet_groups(
            self.selector, self.window, self.lookback, tuple(name for name, _ in shorter),
            young_samples=math.ceil(default_s / fastest) if fastest and default_s else None,
            window_s=default_s)

    async def _scrape_intervals(self, client: httpx.AsyncClient) -> None:
        """Read every target's scrape interval, at the first refresh and every
        :data:`TARGETS_EVERY_S`; a Prometheus that does not answer it (a federated or
        remote-read front) keeps the last ones (none: every rate over ``window`` first)."""
        now = time.monotonic()
        if not self.adaptive or (self._targets_at is not None
                                 and now - self._targets_at < TARGETS_EVERY_S):
            return
        self._targets_at = now
        self.target_requests += 1
        try:
            body = await bounded_get(client, "/api/v1/targets", {"state": "active"},
                                     deadline_s=self.deadline_s, max_body=self.max_body)
        except PrometheusError:
            return
        found = parse_targets(body)
        if found and found != self.plan.scrape:
            self._set_plan(found, self._young)

    def client(self) -> httpx.AsyncClient:
        if self.transport is not None:
            return self.transport.http_client(self.base_url, self.deadline_s)
        return httpx.AsyncClient(base_url=self.base_url, timeout=self.deadline_s,
                                 trust_env=False)

    async def _query(self, client: httpx.AsyncClient, path: str,
                     params: dict[str, str]) -> tuple[list[tuple[Labels, Any]], list[str]]:
        self.requests += 1
        body = await bounded_get(client, path, params, deadline_s=self.deadline_s,
                                 max_body=self.max_body)
        self.bytes_received += len(body)
        _, result, warnings = parse_answer(body, "matrix" if path.endswith("_range") else "vector")
        return result, warnings

    async def _group(self, client: httpx.AsyncClient, g: QueryGroup,
                     now: float) -> tuple[dict[str, list[tuple[Labels, float]]], list[str]]:
        result, warnings = await self._query(client, "/api/v1/query",
                                             {"query": g.expr, "time": f"{now:.3f}"})
        return split_tagged(result), warnings

    async def _sparks(self, client: httpx.AsyncClient,
                      now: float) -> dict[str, dict[str, tuple[float, ...]]]:
        g = sparkline_group(self.selector, self.window)
        span = max(60.0, self.interval * SPARK_POINTS)
        result, _ = await self._query(client, "/api/v1/query_range", {
            "query": g.expr, "start": f"{now - span:.3f}", "end": f"{now:.3f}",
            "step": f"{span / SPARK_POINTS:.3f}"})
        out: dict[str, dict[str, tuple[float, ...]]] = {}
        for labels, values in result:
            inst, name = labels.get("instance"), labels.get("fleet_q")
            if inst and name:
                out.setdefault(name, {})[inst] = tuple(v for _, v in values if v == v)
        return out

    async def refresh(self, client: httpx.AsyncClient) -> FleetSnapshot:
        """One refresh; never raises for Prometheus' sake (failures are in the snapshot)."""
        if self._targets_at is None:  # the first refresh waits for the scrape intervals
            await self._scrape_intervals(client)
        # later ones read them alongside (a new plan serves the next refresh)
        intervals = asyncio.ensure_future(self._scrape_intervals(client))
        groups, plan = self.groups, self.plan
        started = time.perf_counter()
        now = self.clock()
        jobs: list[Any] = [self._group(client, g, now) for g in groups]
        if self.sparklines:
            jobs.append(self._sparks(client, now))
        done = await asyncio.gather(*jobs, return_exceptions=True)
        await intervals
        answers: dict[str, Vector] = {}
        failed: list[str] = []
        errors: list[str] = []
        for g, res in zip(groups, done, strict=False):
            if isinstance(res, PrometheusError):
                failed.append(g.name)
                errors.append(f"{g.name}: {res}")
            elif isinstance(res, BaseException):
                raise res
            else:
                figures, warnings = res
                answers.update(figures)
                errors.extend(f"{g.name}: warning: {w}" for w in warnings)
        snap = build_snapshot(_complete(answers, groups, failed), failed, now,
                              prev=self.last, errors=_dedupe(errors),
                              latency_s=time.perf_counter() - started,
                              hints=self.hints() if self.hints else None, plan=plan)
        if self.adaptive and "state" not in failed:
            # the tiers cost Prometheus a rate over every series even where no row reads
            # them: asked only while some instance is younger than the window
            young = any_young(answers, self.plan)
            if young != self._young:
                self._set_plan(self.plan.scrape, young)
        if self.sparklines:
            sparks = done[-1]
            if isinstance(sparks, dict):
                snap = _with_sparks(snap, sparks)
            elif isinstance(sparks, BaseException) and not isinstance(sparks, PrometheusError):
                raise sparks
        self.last = snap
        if self.observe is not None:
            self.observe(snap)
        return snap

    async def snapshots(self, count: int | None = None) -> AsyncIterator[FleetSnapshot]:
        """A snapshot per refresh, ``count`` of them (``None``: until cancelled)."""
        async with self.client() as client:
            async for _ in paced(self.interval, count=count):
                yield await self.refresh(client)


def _complete(answers: dict[str, Vector], groups: Sequence[QueryGroup],
              failed: Sequence[str]) -> Answers:
    """Figures of answered groups that matched nothing are empty vectors, not missing ones."""
    out = dict(answers)
    for g in groups:
        if g.name not in failed:
            for name, _ in g.figures:
                out.setdefault(name, [])
    return out


def _dedupe(errors: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(errors))


def _with_sparks(snap: FleetSnapshot,
                 sparks: Mapping[str, Mapping[str, tuple[float, ...]]]) -> FleetSnapshot:
    from dataclasses import replace

    return replace(snap, sparks=sparks)


__all__ = ["FleetPoller", "PrometheusError", "bounded_get", "parse_answer"]
