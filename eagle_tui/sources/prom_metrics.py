"""One instance's ``MetricsSample`` events read from Prometheus instead of its own ``/metrics``.

Why: in a fleet, Prometheus often reaches servers that eagle-tui cannot (another network, a
firewall, nothing but the scrape port open to the monitoring host). The drill-down from the fleet
(and ``eagle-tui watch --prometheus URL --instance INSTANCE``) then still gets every figure of
the Metrics pane, the alerts and the speedup, from what Prometheus already stored.

How: each poll sends two instant queries for that ``instance`` label, concurrently, each through
the fleet's bounded GET (a total deadline and a body cap, :func:`~.prometheus.bounded_get`).

More in docs/architecture.md, "Module notes", ``sources/prom_metrics``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace

import httpx

from eagle_tui.model.events import Event, HealthSample
from eagle_tui.model.fleet.queries import stored_names
from eagle_tui.sources.base import paced, under_limit
from eagle_tui.sources.exposition import MAX_VALUE
from eagle_tui.sources.metrics import (
    DEFAULT_WINDOW_S,
    RateWindow,
    counter_names,
    snapshot_of,
    to_sample,
    wanted_names,
)
from eagle_tui.sources.prometheus import (
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_BODY,
    bounded_get,
    parse_answer,
)

DEFAULT_INTERVAL_S = 2.0
SOURCE = "prometheus"


_exposed: dict[tuple[str, ...], dict[str, str]] = {}


def exposed_names() -> dict[str, str]:
    """Every name Prometheus may store a wanted series under → its name as exposed (for the
    engines registered now; built once per set of names)."""
    wanted = wanted_names()
    if wanted in _exposed:
        return _exposed[wanted]
    counters = counter_names()
    out: dict[str, str] = {}
    for name in wanted:
        variants = (name, f"{name}_total") if name in counters else (name,)
        for exposed in variants:
            for stored in stored_names((exposed,)):
                out[stored] = exposed
    _exposed.clear()
    _exposed[wanted] = out
    return out


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def instance_queries(instance: str) -> tuple[str, str]:
    """(the ``up`` query, the series query) for one ``instance`` label value."""
    inst = f'instance="{_quote(instance)}"'
    up = (f'label_replace(max(up{{{inst}}}), "q", "up", "", "") or '
          f'label_replace(max(timestamp(up{{{inst}}})), "q", "t", "", "")')
    names = "|".join(sorted(exposed_names()))
    return up, f'{{__name__=~"{names}", {inst}}}'


@dataclass(frozen=True, slots=True)
class Reading:
    """What one poll found: ``up`` (None: no ``up`` series), the scrape time, the samples."""

    up: float | None
    scrape_t: float | None
    samples: tuple[tuple[str, dict[str, str], float], ...]
    skipped: tuple[str, ...] = ()  # series whose value is not a reading (±Inf, over MAX_VALUE)


def reading_of(up_body: bytes, series_body: bytes) -> Reading:
    """The two answers → a :class:`Reading` (:class:`PrometheusError` if either is unusable).

    Series names are turned back into their exposed spelling (``sglang_num_running_reqs`` →
    ``sglang:num_running_reqs``) and the labels Prometheus adds are dropped, so the samples
    are what the instance's own ``/metrics`` would have said.
    """
    _, up_result, _ = parse_answer(up_body, "vector")
    figures = {labels.get("q"): value for labels, value in up_result}
    _, series, _ = parse_answer(series_body, "vector")
    known = exposed_names()
    samples = []
    skipped: list[str] = []
    for labels, value in series:
        exposed = known.get(labels.get("__name__", ""))
        if exposed is None:
            continue
        number = float(value)
        if number == number and not abs(number) <= MAX_VALUE:  # /metrics' rule (NaN: no data)
            skipped.append(exposed)
            continue
        own = {k: v for k, v in labels.items() if k not in ("__name__", "instance", "job")}
        samples.append((exposed, own, number))
    return Reading(figures.get("up"), figures.get("t"), tuple(samples),
                   tuple(dict.fromkeys(skipped)))


def events_of(reading: Reading, t: float, rates: RateWindow,
              health: bool) -> list[Event]:
    """One new scrape's events: its ``MetricsSample`` (when it has engine series) and, with
    ``health``, the ``HealthSample`` that ``up`` implies."""
    out: list[Event] = []
    snap = snapshot_of(reading.samples, t, reading.skipped) if reading.up != 0 else None
    if snap is not None:
        out.append(replace(to_sample(snap, rates), source=SOURCE))
    if health:
        if reading.up is None and snap is None:
            out.append(HealthSample("unknown", t, error="no series of it in Prometheus"))
        elif reading.up == 0:
            out.append(HealthSample("unknown", t,
                                    error="up == 0 in Prometheus: down or starting"))
        elif snap is None:
            out.append(HealthSample("starting", t, error="up, no engine series yet"))
        else:
            out.append(HealthSample("ready", t))
    return out


@dataclass
class PromMetricsSource:
    """``MetricsSample`` (and, with ``health``, ``HealthSample``) events for ``instance``."""

    base_url: str
    instance: str
    health: bool = False
    interval: float = DEFAULT_INTERVAL_S
    window: float = DEFAULT_WINDOW_S
    deadline_s: float = DEFAULT_DEADLINE_S
    max_body: int = DEFAULT_MAX_BODY
    max_polls: int | None = None
    clock: Callable[[], float] = time.time
    name: str = "metrics (prometheus)"
    http_transport: httpx.AsyncBaseTransport | None = None  # tests: httpx.MockTransport
    polls: int = 0
    last_t: float | None = None
    rates: RateWindow = field(init=False)

    def __post_init__(self) -> None:
        if self.interval <= 0 or self.deadline_s <= 0:
            raise ValueError("interval and deadline must be positive")
        self.base_url = self.base_url.rstrip("/")
        self.rates = RateWindow(self.window)

    async def read(self, client: httpx.AsyncClient) -> Reading:
        """One poll's two queries, concurrently, each bounded."""
        up_q, series_q = instance_queries(self.instance)
        now = f"{self.clock():.3f}"

        async def ask(expr: str) -> bytes:
            return await bounded_get(client, "/api/v1/query", {"query": expr, "time": now},
                                     deadline_s=self.deadline_s, max_body=self.max_body)

        up_body, series_body = await asyncio.gather(ask(up_q), ask(series_q))
        return reading_of(up_body, series_body)

    def take(self, reading: Reading) -> list[Event]:
        """The events of a reading; none when it is the scrape already seen."""
        t = reading.scrape_t if reading.scrape_t is not None else self.clock()
        if self.last_t is not None and t <= self.last_t:
            return []
        self.last_t = t
        return events_of(reading, t, self.rates, self.health)

    async def events(self) -> AsyncIterator[Event | list[Event]]:
        async with httpx.AsyncClient(base_url=self.base_url, timeout=self.deadline_s,
                                     trust_env=False, transport=self.http_transport) as client:
            async for _ in paced(self.interval, under_limit(self)):
                self.polls += 1
                found = self.take(await self.read(client))
                if found:
                    yield found


__all__ = ["SOURCE", "PromMetricsSource", "Reading", "events_of", "exposed_names",
           "instance_queries", "reading_of"]
