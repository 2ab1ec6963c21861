"""Scrape ``/metrics`` and turn it into ``MetricsSample`` events.

Parsing is prometheus-client's own text parser (``text_string_to_metric_families``): the
exposition format has enough corner cases (escapes, ``_created`` series, histograms, ``NaN``)
that a hand-written parser would be a bug farm.

The two engines need different maths (FORMATS.md §1.7, §2.5, §3):

* **SGLang** exports gauges that are already interval values (``sglang:gen_throughput``,
  ``sglang:spec_accept_length``, ``sglang:spec_accept_rate``, ``sglang:num_running_reqs``,
  ``sglang:num_queue_reqs``, ``sglang:token_usage``): they are passed through, except where the
  newer counters exist: ``sglang:spec_verify_calls_total`` with ``sglang:generation_tokens_total``
  give the accept length over the window as Δgeneration_tokens / Δverify_calls (SGLang's own
  per-request ``completion_tokens / spec_verify_ct``) and tok/s as Δgeneration_tokens / Δt. A
  window with no verify call has no accept length (the gauge then still holds the last busy
  interval's value: not a reading).
* **vLLM** exports lifetime counters. Rates over a sliding window of snapshots give the numbers
  that match its own log line: acceptance length = 1 + Δaccepted / Δdrafts, per-position
  acceptance = Δaccepted_per_pos / Δdrafts, acceptance rate = Δaccepted / Δdraft_tokens,
  tok/s = Δgeneration_tokens / Δt. A counter that goes *down* means the server restarted: the
  window starts over and the sample says ``counter_reset``.

Counter names are matched with and without the ``_total`` suffix, and old names
(``vllm:gpu_cache_usage_perc``) are accepted where the new ones are missing.

Ranks: a series that differs from another only in a rank label (``tp_rank``, ``pp_rank``, ...)
is the same number seen by each rank of one engine, counted once (gauges and counters alike);
series of different engines (vLLM's ``engine="0"``, ``"1"`` of data parallelism) are summed.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

import httpx
from prometheus_client.parser import text_string_to_metric_families

from eagle_tui.model.events import Engine, Event, MetricsSample
from eagle_tui.sources.exposition import (
    MAX_VALUE,
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

_V_DRAFTS = "vllm:spec_decode_num_drafts"
_V_DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"
_V_ACCEPTED = "vllm:spec_decode_num_accepted_tokens"
_V_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"
_V_GEN = "vllm:generation_tokens"
_S_VERIFY = "sglang:spec_verify_calls"
_S_GEN = "sglang:generation_tokens"
_V_COUNTERS = (_V_DRAFTS, _V_DRAFT_TOKENS, _V_ACCEPTED, _V_GEN, _S_VERIFY, _S_GEN)


_GAUGES = (
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "sglang:gen_throughput",
    "sglang:spec_accept_length",
    "sglang:spec_accept_rate",
    "sglang:num_running_reqs",
    "sglang:num_queue_reqs",
    "sglang:num_requests_running",
    "sglang:num_requests_waiting",
    "sglang:token_usage",
)
_WANTED = frozenset((*_GAUGES, *_V_COUNTERS, _V_PER_POS))
# the names read, as exposed (counters without ``_total``): what a Prometheus query asks for
WANTED_NAMES: tuple[str, ...] = tuple(sorted(_WANTED))
COUNTER_NAMES: frozenset[str] = frozenset((*_V_COUNTERS, _V_PER_POS))


class MetricsError(TransportError):
    """``/metrics`` answered with something that is not a usable exposition."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One scrape, reduced to what eagle-tui uses. ``counters`` are lifetime totals (vLLM)."""

    t: float
    engine: Engine
    gauges: dict[str, float] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)
    per_pos: dict[int, float] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()  # samples whose value cannot be represented (not read)


def filter_lines(text: str) -> tuple[str, tuple[str, ...]]:
    """The series eagle-tui reads with usable values, and the names of the samples skipped
    (:func:`~eagle_tui.sources.exposition.filter_exposition` with this module's names)."""
    return filter_exposition(text, _WANTED)


def relevant_lines(text: str) -> str:
    """Only the series eagle-tui reads, with usable values (:func:`filter_lines`)."""
    return filter_lines(text)[0]


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
        raise MetricsError(f"no vllm:/sglang: metrics in the /metrics answer (starts: {head!r})")
    return snap


def snapshot_of(samples: Iterable[tuple[str, Mapping[str, str], float]], t: float,
                skipped: tuple[str, ...] = ()) -> Snapshot | None:
    """(name, labels, value) samples of one scrape → a :class:`Snapshot`; ``None`` without any
    engine series. Shared by the ``/metrics`` text and Prometheus' stored series
    (:mod:`eagle_tui.sources.prom_metrics`), so one instance's figures are the same maths
    whichever way they arrive."""
    gauges: dict[str, float] = {}
    counters: dict[str, float] = {}
    per_pos: dict[int, float] = {}
    rank_seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    gauge_parts: dict[str, list[float]] = {}
    engine: Engine = "unknown"
    for sample_name, labels, value in samples:
        name = base_name(sample_name)
        if name is None or value != value:  # NaN: no data yet
            continue
        if name.startswith("vllm:"):
            engine = "vllm"
        elif name.startswith("sglang:"):
            engine = "sglang" if engine == "unknown" else engine
        else:
            continue
        # one value per label set: the ranks of one TP/PP group are counted once
        key = tuple(sorted((k, v) for k, v in labels.items() if k not in _RANK_LABELS))
        if (name, key) in rank_seen:
            continue
        rank_seen.add((name, key))
        if name == _V_PER_POS:
            try:
                pos = int(labels.get("position", ""))
            except ValueError:
                continue
            per_pos[pos] = per_pos.get(pos, 0.0) + value
        elif name in _V_COUNTERS:
            counters[name] = counters.get(name, 0.0) + value
        else:
            gauge_parts.setdefault(name, []).append(value)
    if engine == "unknown" and skipped:
        engine = "vllm" if any(n.startswith("vllm:") for n in skipped) else "sglang"
    if engine == "unknown":
        return None
    for name, vals in gauge_parts.items():
        gauges[name] = sum(vals)
        gauges[name + "#mean"] = sum(vals) / len(vals)
    return Snapshot(t, engine, gauges, counters, per_pos, skipped)


def _int(v: float | None) -> int | None:
    return int(v) if v is not None and abs(v) <= MAX_VALUE else None


def _first(gauges: dict[str, float], *names: str) -> float | None:
    for n in names:
        if n in gauges:
            return gauges[n]
    return None


def sglang_sample(snap: Snapshot) -> MetricsSample:
    g = snap.gauges
    return MetricsSample(
        t=snap.t,
        engine="sglang",
        gen_tps=_first(g, "sglang:gen_throughput"),
        accept_len=_first(g, "sglang:spec_accept_length#mean"),
        acceptance_rate=_first(g, "sglang:spec_accept_rate#mean"),
        running=_int(_first(g, "sglang:num_running_reqs", "sglang:num_requests_running")),
        queued=_int(_first(g, "sglang:num_queue_reqs", "sglang:num_requests_waiting")),
        kv_usage=_first(g, "sglang:token_usage#mean"),
    )


class RateWindow:
    """vLLM counters → windowed rates over the snapshots of the last ``window`` seconds."""

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

    def add_sglang(self, snap: Snapshot) -> MetricsSample:
        """SGLang with ``spec_verify_calls``: accept length and tok/s from counter deltas."""
        reset = self._push(snap)
        gauge = sglang_sample(snap)
        base = self._snaps[0]
        dt = snap.t - base.t
        gen_tps = accept = None
        if base is not snap and dt > 0:
            gen = snap.counters.get(_S_GEN, 0.0) - base.counters.get(_S_GEN, 0.0)
            verify = snap.counters[_S_VERIFY] - base.counters.get(_S_VERIFY, 0.0)
            if _S_GEN in snap.counters:
                gen_tps = gen / dt
                accept = gen / verify if verify > 0 else None
        return MetricsSample(
            t=snap.t, engine="sglang", gen_tps=gen_tps if gen_tps is not None else gauge.gen_tps,
            accept_len=accept, acceptance_rate=gauge.acceptance_rate if accept else None,
            running=gauge.running, queued=gauge.queued,
            kv_usage=gauge.kv_usage, counter_reset=reset,
        )

    def add(self, snap: Snapshot) -> MetricsSample:
        reset = self._push(snap)
        g = snap.gauges
        sample = MetricsSample(
            t=snap.t,
            engine="vllm",
            running=_int(_first(g, "vllm:num_requests_running")),
            queued=_int(_first(g, "vllm:num_requests_waiting")),
            kv_usage=_first(g, "vllm:kv_cache_usage_perc#mean", "vllm:gpu_cache_usage_perc#mean"),
            counter_reset=reset,
        )
        base = self._snaps[0]
        dt = snap.t - base.t
        if base is snap or dt <= 0:
            return sample

        def delta(name: str) -> float | None:
            if name not in snap.counters or name not in base.counters:
                return None
            return snap.counters[name] - base.counters[name]

        gen = delta(_V_GEN)
        drafts = delta(_V_DRAFTS)
        accepted = delta(_V_ACCEPTED)
        draft_tokens = delta(_V_DRAFT_TOKENS)
        accept_len = per_position = rate = None
        if drafts and accepted is not None:
            accept_len = 1.0 + accepted / drafts
        if drafts and snap.per_pos:
            per_position = tuple(
                (snap.per_pos[p] - base.per_pos.get(p, 0.0)) / drafts for p in sorted(snap.per_pos)
            )
        if draft_tokens and accepted is not None:
            rate = accepted / draft_tokens
        return MetricsSample(
            t=sample.t,
            engine="vllm",
            gen_tps=gen / dt if gen is not None else None,
            accept_len=accept_len,
            acceptance_rate=rate,
            per_position=per_position or (),
            running=sample.running,
            queued=sample.queued,
            kv_usage=sample.kv_usage,
            counter_reset=reset,
        )


def to_sample(snap: Snapshot, rates: RateWindow) -> MetricsSample:
    """One scrape's snapshot → its sample: SGLang's gauges (or its counters' deltas, when it
    has ``spec_verify_calls``), vLLM's counters' deltas over ``rates``' window."""
    if snap.engine == "sglang":
        sample = rates.add_sglang(snap) if _S_VERIFY in snap.counters else sglang_sample(snap)
    else:
        sample = rates.add(snap)
    if snap.skipped:
        sample = replace(sample, skipped=skipped_note(snap.skipped))
    return sample


class MetricsScraper:
    """Source of ``MetricsSample`` events from ``GET {base_url}/metrics``.

    While the server is not up (connection refused, 503, timeout) polls are skipped quietly:
    that state is the health poller's to report. A 404 (SGLang without ``--enable-metrics``) or
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
            raise MetricsError(
                f"{self.path} not found (HTTP 404); SGLang needs --enable-metrics for it"
            )
        if resp.status_code != 200:
            raise MetricsError(f"{self.path} answered HTTP {resp.status_code}")
        return resp.text

    async def events(self) -> AsyncIterator[Event]:
        loop = asyncio.get_running_loop()
        async with self.transport.http_client(self.base_url, self.timeout) as client:
            while self.max_polls is None or self.polls < self.max_polls:
                started = loop.time()
                self.polls += 1
                text = await self._scrape(client)
                if text is not None:
                    yield self.sample(text, self._clock())
                await asyncio.sleep(max(0.0, self.interval - (loop.time() - started)))


__all__ = [
    "COUNTER_NAMES",
    "WANTED_NAMES",
    "MetricsError",
    "MetricsScraper",
    "RateWindow",
    "Snapshot",
    "filter_lines",
    "parse_metrics",
    "sglang_sample",
    "snapshot_of",
    "to_sample",
]
