"""Scrape ``/metrics`` and turn it into ``MetricsSample`` events.

Parsing is prometheus-client's own text parser (``text_string_to_metric_families``): the
exposition format has enough corner cases (escapes, ``_created`` series, histograms, ``NaN``)
that a hand-written parser would be a bug farm.

What is read, and how, is each engine's (its profile's :class:`MetricsFacet`): the names it
exports, which are lifetime counters, and the reading of one scrape (with the oldest scrape of
a sliding window behind it) into a sample. Here: the HTTP, the parsing, which engine a scrape
is (its names' prefix), and the window itself. A counter that goes *down* means the server
restarted: the window starts over and the sample says ``counter_reset``. Names with and
without ``_total``, old names, and ranks: docs/architecture.md ("Module notes").
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, replace

import httpx
from prometheus_client.parser import text_string_to_metric_families

from eagle_tui.model.engines import UNKNOWN, EngineProfile, profile_of, profiles
from eagle_tui.model.engines.facets.metrics import Scrape
from eagle_tui.model.events import Engine, Event, MetricsSample
from eagle_tui.model.events.live import idle_reading
from eagle_tui.sources.base import paced, under_limit
from eagle_tui.sources.cadence import backoff
from eagle_tui.sources.exposition import (
    base_name,
    filter_exposition,
    skipped_note,
)
from eagle_tui.sources.http_budget import (
    METRICS_MAX_BYTES,
    BodyTooLarge,
    DeadlineExceeded,
    get_bounded,
)
from eagle_tui.transport.base import Transport, TransportError

DEFAULT_INTERVAL_S = 2.0
DEFAULT_WINDOW_S = 10.0
DEFAULT_TIMEOUT_S = 5.0

# labels that repeat one value per parallel rank (a gauge per TP rank is one number, not a sum)
_RANK_LABELS = frozenset({"tp_rank", "pp_rank", "moe_ep_rank", "attn_cp_rank", "moe_dp_rank"})

Snapshot = Scrape  # one scrape, reduced to what eagle-tui uses (the engines' readers take it)


@dataclass(frozen=True, slots=True)
class _Names:
    """The registered engines' names, gathered once per set of profiles."""

    profiles: tuple[EngineProfile, ...]
    wanted: frozenset[str]
    counters: frozenset[str]  # lifetime counters, the per-position ones included
    per_position: frozenset[str]
    prefixes: tuple[tuple[str, Engine, int], ...]  # (prefix, engine, precedence)
    labelled: dict[str, str]  # gauge → the label its values are kept by (MetricsFacet.labelled)
    # gauges split into one gauge per value of one label (name → label): an engine's sleep gauge
    by_label: dict[str, str]


_known: list[_Names] = []


def _names() -> _Names:
    """The names of the engines registered now (a toy engine registered later included)."""
    current = tuple(profiles())
    if _known and len(_known[0].profiles) == len(current) and all(
            a is b for a, b in zip(_known[0].profiles, current, strict=True)):
        return _known[0]
    facets = [p.metrics for p in current]
    per_pos = frozenset(f.per_position for f in facets if f.per_position)
    counters = frozenset(n for f in facets for n in f.counters) | per_pos
    labelled = {name: label for f in facets for name, label in f.labelled}
    by_label = {p.hold.sleep_gauge: p.hold.sleep_label for p in current if p.hold.sleep_gauge}
    names = _Names(current, frozenset(n for f in facets for n in f.gauges) | counters
                   | frozenset(labelled) | frozenset(by_label), counters, per_pos,
                   tuple((p.metrics.prefix, p.name, p.metrics.precedence)
                         for p in current if p.metrics.prefix), labelled, by_label)
    _known[:] = [names]
    return names


def wanted_names() -> tuple[str, ...]:
    """The names read, as exposed (counters without ``_total``): what a Prometheus query asks
    for."""
    return tuple(sorted(_names().wanted))


def counter_names() -> frozenset[str]:
    """The wanted names that are counters (exposed with ``_total`` too)."""
    return _names().counters


class MetricsError(TransportError):
    """``/metrics`` answered with something that is not a usable exposition."""


def filter_lines(text: str) -> tuple[str, tuple[str, ...]]:
    """The series eagle-tui reads with usable values, and the names of the samples skipped
    (:func:`~eagle_tui.sources.exposition.filter_exposition` with the engines' names)."""
    return filter_exposition(text, _names().wanted)


def relevant_lines(text: str) -> str:
    """Only the series eagle-tui reads, with usable values (:func:`filter_lines`)."""
    return filter_lines(text)[0]


def _prefixes_shown() -> str:
    """The engines' prefixes, the highest precedence first (an error message's wording)."""
    ordered = sorted(_names().prefixes, key=lambda p: -p[2])
    return "/".join(prefix for prefix, _, _ in ordered)


def parse_metrics(text: str, t: float) -> Snapshot:
    """Parse exposition text; :class:`MetricsError` if it is not Prometheus text at all."""
    kept, skipped = filter_lines(text)
    try:
        families = list(text_string_to_metric_families(kept))
    except (ValueError, TypeError, IndexError, OverflowError) as exc:
        raise MetricsError(f"/metrics is not Prometheus text: {exc}") from None
    snap = snapshot_of(((s.name, s.labels, float(s.value)) for fam in families
                        for s in fam.samples), t, skipped)
    if snap is None:
        stripped = text.strip()
        head = stripped[:200].splitlines()[0][:80] if stripped else "an empty answer"
        raise MetricsError(f"no {_prefixes_shown()} metrics in the /metrics answer "
                           f"(starts: {head!r})")
    return snap


def _engine_of(name: str, prefixes: tuple[tuple[str, Engine, int], ...]) -> tuple[Engine, int]:
    for prefix, engine, precedence in prefixes:
        if name.startswith(prefix):
            return engine, precedence
    return UNKNOWN, -1


def snapshot_of(samples: Iterable[tuple[str, Mapping[str, str], float]], t: float,
                skipped: tuple[str, ...] = ()) -> Snapshot | None:
    """(name, labels, value) samples of one scrape → a :class:`Snapshot`; ``None`` without any
    engine series. Shared by the ``/metrics`` text and Prometheus' stored series
    (:mod:`eagle_tui.sources.prom_metrics`), so one instance's figures are the same maths
    whichever way they arrive. The engine is the one whose prefix the names carry (of two,
    the higher :attr:`~MetricsFacet.precedence`)."""
    known = _names()
    counter_set, per_pos_names = known.counters, known.per_position
    gauges: dict[str, float] = {}
    counters: dict[str, float] = {}
    per_pos: dict[int, float] = {}
    rank_seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    gauge_parts: dict[str, list[float]] = {}
    labelled: dict[str, dict[str, float]] = {}
    engine: Engine = UNKNOWN
    rank = -1
    for sample_name, labels, value in samples:
        name = base_name(sample_name)
        if name is None or value != value:  # NaN: no data yet
            continue
        named, precedence = _engine_of(name, known.prefixes)
        if named == UNKNOWN:
            continue
        if precedence > rank:
            engine, rank = named, precedence
        # one value per label set: the ranks of one TP/PP group are counted once
        key = tuple(sorted((k, v) for k, v in labels.items() if k not in _RANK_LABELS))
        if (name, key) in rank_seen:
            continue
        rank_seen.add((name, key))
        if name in per_pos_names:
            try:
                pos = int(labels.get("position", ""))
            except ValueError:
                continue
            per_pos[pos] = per_pos.get(pos, 0.0) + value
        elif name in known.labelled:
            _keep_labelled(labelled.setdefault(name, {}), labels.get(known.labelled[name]),
                           value)
        elif name in counter_set:
            counters[name] = counters.get(name, 0.0) + value
        elif name in known.by_label:  # one gauge per label value (the sleep state's)
            label = known.by_label[name]
            gauge_parts.setdefault(f"{name}{{{label}={labels.get(label, '')}}}", []).append(value)
        else:
            gauge_parts.setdefault(name, []).append(value)
    for name in skipped if engine == UNKNOWN else ():
        named, precedence = _engine_of(name, known.prefixes)
        if precedence > rank:
            engine, rank = named, precedence
    if engine == UNKNOWN:
        return None
    for name, vals in gauge_parts.items():
        gauges[name] = sum(vals)
        gauges[name + "#mean"] = sum(vals) / len(vals)
    return Snapshot(t, engine, gauges, counters, per_pos, skipped, labelled)


MAX_LABELLED = 64  # values kept per labelled gauge (a server lists a handful of phases)
MAX_LABEL = 64  # characters of a label value kept


def _keep_labelled(kept: dict[str, float], label: str | None, value: float) -> None:
    """One labelled sample: the largest value per label value (ranks report the same phase),
    at most :data:`MAX_LABELLED` label values of at most :data:`MAX_LABEL` characters."""
    if label is None or len(label) > MAX_LABEL or (label not in kept
                                                  and len(kept) >= MAX_LABELLED):
        return
    kept[label] = max(kept.get(label, value), value)


class RateWindow:
    """Counters → windowed rates over the snapshots of the last ``window`` seconds: each
    scrape is read by its engine's profile with the window's oldest scrape behind it."""

    def __init__(self, window: float = DEFAULT_WINDOW_S) -> None:
        if window <= 0:
            raise ValueError("window must be positive")
        self.window = window
        self._snaps: deque[Snapshot] = deque()

    @staticmethod
    def _went_down(old: Snapshot, new: Snapshot) -> bool:
        pairs: Iterable[tuple[float, float | None]] = [
            *((v, new.counters.get(k)) for k, v in old.counters.items()),
            *((v, new.per_pos.get(k)) for k, v in old.per_pos.items()),
        ]
        return any(n is None or n < o for o, n in pairs)

    def _push(self, snap: Snapshot) -> bool:
        """Add ``snap`` to the window (emptied first when a counter went down: a restart)."""
        reset = bool(self._snaps) and self._went_down(self._snaps[-1], snap)
        if reset:
            self._snaps.clear()
        self._snaps.append(snap)
        while len(self._snaps) > 2 and self._snaps[1].t <= snap.t - self.window:
            self._snaps.popleft()
        return reset

    def add(self, snap: Snapshot) -> MetricsSample:
        """The sample of ``snap`` as its engine reads it (an engine nobody registered: none of
        its figures, only the time)."""
        profile = profile_of(snap.engine)
        if profile is None:
            return MetricsSample(t=snap.t, engine=snap.engine)
        facet = profile.metrics
        if not facet.windowed(snap):
            return facet.read(snap, snap, False)
        reset = self._push(snap)
        return facet.read(snap, self._snaps[0], reset)


def run_counters(snap: Snapshot) -> tuple[tuple[str, float], ...]:
    """The counters of ``snap`` its engine reads a window's (and so a run's) figures from."""
    profile = profile_of(snap.engine)
    names = profile.metrics.window_counters if profile is not None else ()
    return tuple((n, snap.counters[n]) for n in names if n in snap.counters)


def to_sample(snap: Snapshot, rates: RateWindow) -> MetricsSample:
    """One scrape's snapshot → its sample, read by its engine over ``rates``' window."""
    sample = rates.add(snap)
    profile = profile_of(snap.engine)
    startup = profile.metrics.startup if profile is not None else None
    if startup is not None and snap.labelled:
        sample = replace(sample, startup=startup(snap))
    counters = run_counters(snap)
    if snap.skipped or counters:
        sample = replace(sample, skipped=skipped_note(snap.skipped) if snap.skipped else "",
                         counters=counters)
    profile = profile_of(snap.engine)
    sleep = profile.hold.sleep_of(snap.gauges) if profile is not None else None
    if sleep is not None:
        sample = replace(sample, asleep=sleep[0], sleep_level=sleep[1])
    return sample


class MetricsScraper:
    """Source of ``MetricsSample`` events from ``GET {base_url}/metrics``.

    While the server is not up (connection refused, 503, timeout) polls are skipped quietly:
    that state is the health poller's to report. A 404 (an engine that exports its metrics only
    when asked to: each profile's :attr:`~MetricsFacet.missing_hint` says how) or
    an answer that is not Prometheus text raises :class:`MetricsError`, which the session shows
    as a failing source and retries with backoff.
    """

    def __init__(
        self,
        transport: Transport,
        base_url: str,
        *,
        path: str = "/metrics",
        interval: float = DEFAULT_INTERVAL_S,
        window: float = DEFAULT_WINDOW_S,
        timeout: float = DEFAULT_TIMEOUT_S,
        name: str = "metrics",
        max_polls: int | None = None,
        clock: Callable[[], float] = time.time,
        max_bytes: int = METRICS_MAX_BYTES,
    ) -> None:
        if interval <= 0 or timeout <= 0:
            raise ValueError("interval and timeout must be positive")
        self.name = name
        self.transport = transport
        self.base_url = base_url
        self.path = path
        self.interval = interval
        self.every = interval  # the wait before the next scrape (longer while the server idles)
        self.timeout = timeout
        self.max_polls = max_polls
        self.rates = RateWindow(window)
        self.max_bytes = max_bytes
        self._clock = clock
        self.polls = 0

    def sample(self, text: str, t: float) -> MetricsSample:
        return to_sample(parse_metrics(text, t), self.rates)

    async def _scrape(self, client: httpx.AsyncClient) -> str | None:
        try:
            resp = await get_bounded(client, self.path, deadline_s=self.timeout,
                                     max_bytes=self.max_bytes)
        except (httpx.ConnectError, httpx.TimeoutException, httpx.RemoteProtocolError):
            return None
        except BodyTooLarge as exc:
            raise MetricsError(str(exc)) from None
        except DeadlineExceeded as exc:
            if exc.status_code is None:
                return None  # no answer at all: a slow or starting server, health's to say
            raise MetricsError(f"{self.path} answered but its body did not complete within "
                               f"{self.timeout:g} s") from None
        if resp.status_code == 503:
            return None
        if resp.status_code == 404:
            hints = "; ".join(p.metrics.missing_hint for p in profiles()
                              if p.metrics.missing_hint)
            raise MetricsError(f"{self.path} not found (HTTP 404)" + (f"; {hints}" if hints
                                                                      else ""))
        if resp.status_code != 200:
            raise MetricsError(f"{self.path} answered HTTP {resp.status_code}")
        return resp.text

    async def events(self) -> AsyncIterator[Event]:
        async with self.transport.http_client(self.base_url, self.timeout) as client:
            async for _ in paced(lambda: self.every, under_limit(self)):
                self.polls += 1
                text = await self._scrape(client)
                if text is None:
                    self.every = self.interval
                    continue
                sample = self.sample(text, self._clock())
                # an idle server's figures stand still: scraped less often (sources/cadence)
                self.every = backoff(sample.counter_reset or not idle_reading(
                    sample.running, sample.gen_tps, sample.queued), self.every, self.interval)
                yield sample


__all__ = [
    "MetricsError",
    "MetricsScraper",
    "RateWindow",
    "Snapshot",
    "counter_names",
    "filter_lines",
    "parse_metrics",
    "run_counters",
    "snapshot_of",
    "to_sample",
    "wanted_names",
]
