"""eagle-tui's own requests in a server's access log, and benchmark windows on the timeline.

Every poll asks for ``PATH?eagle-tui`` (:func:`own_path`) and the log view folds the lines
that show it (:func:`is_own_access`): over SSH every client is 127.0.0.1, so only the request
line tells eagle-tui's polls apart from a user's ``curl``.

Benchmark windows: ``eagle-tui bench`` sends ``GET PATH?eagle-tui-bench=ID&at=start&t=T``
(PATH does no work: ``/ready`` or ``/health``) before its load and
``...&at=end&t=T&tokens=N&events=E&requests=R`` after it, so the markers are in the server's
own log and a bench run from any terminal is a window for every dashboard and ``report`` that
reads that log. Per window :class:`WindowTracker` adds up the log's stats
intervals, weighted by their work.

docs/architecture.md ("Module notes") has the reasons for the mark, each engine's arithmetic
and which stats lines belong to a window.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from eagle_tui.model.bench.tag import BENCH_TAG
from eagle_tui.model.events import DecodeStats, Event, LogLine, ServerInfo, SpecStats
from eagle_tui.model.numbers import strict_float
from eagle_tui.model.record import Record, record

OWN_TAG = "eagle-tui"
_OWN_SUFFIXES = (f"?{OWN_TAG} ", f"?{OWN_TAG}&")
_BENCH_RE = re.compile(
    rf"[?&]{BENCH_TAG}=([A-Za-z0-9_.-]{{1,40}})((?:&[a-z]{{1,12}}=[A-Za-z0-9_.-]{{1,40}})*)")
SGLANG_DEFAULT_LOG_INTERVAL = 40  # SGLang's --decode-log-interval default
# its ``server_args`` line (``decode_log_interval=10`` or ``'decode_log_interval': 10``) or the
# launch command echoed into the log (``--decode-log-interval 10``, ``=10``)
LOG_INTERVAL_RE = re.compile(
    r"(?:decode_log_interval['\"]?\s*[=:]\s*|--decode-log-interval(?:=|\s+)['\"]?)(\d{1,6})\b")


def interval_in(text: str) -> tuple[int, str] | None:
    """The decode-log interval a log line states, and where (``None``: it states none)."""
    if "log_interval" not in text and "log-interval" not in text:
        return None
    m = LOG_INTERVAL_RE.search(text)
    if m is None:
        return None
    return _found(m)


def last_interval(text: str) -> tuple[int, str] | None:
    """The last decode-log interval a stretch of log text states (:func:`interval_in`)."""
    found = list(LOG_INTERVAL_RE.finditer(text))
    return _found(found[-1]) if found else None


def _found(m: re.Match[str]) -> tuple[int, str]:
    return max(1, int(m.group(1))), ("the launch command" if m.group(0).startswith("--")
                                     else "the log's server_args")


def own_path(path: str) -> str:
    """``/health`` → ``/health?eagle-tui``: the path eagle-tui's own polls ask for."""
    return f"{path}{'&' if '?' in path else '?'}{OWN_TAG}"


def is_own_access(text: str) -> bool:
    """An access line of one of eagle-tui's own polls (not a bench marker or load request)."""
    return OWN_TAG in text and " HTTP/" in text and any(s in text for s in _OWN_SUFFIXES)


@record
class BenchMark(Record):
    """One bench marker, as the access line shows it (``at`` "" for a request only tagged)."""

    bench_id: str
    at: str = ""  # "start", "end", or "" for a load request
    fields: tuple[tuple[str, str], ...] = ()

    def number(self, key: str) -> float | None:
        for k, v in self.fields:
            if k == key:
                return strict_float(v)
        return None


def bench_mark(text: str) -> BenchMark | None:
    """The bench marker a log line carries, if any."""
    if BENCH_TAG not in text:
        return None
    m = _BENCH_RE.search(text)
    if m is None:
        return None
    kv = tuple((k, v) for k, _, v in (p.partition("=") for p in m.group(2).split("&") if p))
    at = next((v for k, v in kv if k == "at"), "")
    return BenchMark(m.group(1), at if at in ("start", "end") else "", kv)


def marker_query(bench_id: str, at: str = "", **numbers: float | int) -> str:
    """The query string bench puts on a marker (``at`` set) or on a load request."""
    q = f"{BENCH_TAG}={bench_id}"
    if at:
        q += f"&at={at}"
    for key, value in numbers.items():
        q += f"&{key}={value:.3f}" if isinstance(value, float) else f"&{key}={value}"
    return q


@record
class WindowFigures(Record):
    """One source's figures over one window; None where that source says nothing."""

    source: str  # "log", "/metrics", "client", or a results file's engine ("sglang.bench_serving")
    accept_len: float | None = None
    tok_s: float | None = None
    tokens: float | None = None
    weight: float | None = None  # what the acceptance is weighted by (drafts, verify steps...)
    note: str = ""
    intervals: int | None = None  # the log's stats intervals that went into it

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"source": self.source}
        for key in ("accept_len", "tok_s", "tokens", "weight", "intervals"):
            v = getattr(self, key)
            if v is not None:
                d[key] = round(v, 4)
        if self.note:
            d["note"] = self.note
        return d


@dataclass(slots=True)
class LogSums:
    """The log's stats intervals over one window, added up by their work."""

    drafts: float = 0.0
    accepted: float = 0.0
    spec_intervals: list[tuple[float, float]] = field(default_factory=list)  # (tok/s, dt): vLLM
    intervals: int = 0
    # SGLang: acceptance weighted by running requests, tokens estimated from the interval
    sg_weight: float = 0.0
    sg_accept: float = 0.0
    sg_tokens: float = 0.0
    sg_last: float = 0.0  # the last decode line's tokens per step (running × accept len)
    sg_interval: int = SGLANG_DEFAULT_LOG_INTERVAL
    interval_from: str = "the default"  # where ``sg_interval`` came from (said in the note)
    pending_tps: float | None = None  # the Engine line's tok/s, waiting for its SpecDecoding line

    @property
    def sglang(self) -> bool:
        return self.sg_weight > 0 and self.drafts == 0

    def add(self, ev: DecodeStats | SpecStats, decode_log_interval: int,
            interval_from: str = "the default") -> None:
        if isinstance(ev, DecodeStats):
            if ev.accept_len is not None:  # SGLang's decode line carries the acceptance
                running = float(ev.running or 1)
                self.intervals += 1
                self.sg_weight += running
                self.sg_accept += ev.accept_len * running
                self.sg_tokens += decode_log_interval * running * ev.accept_len
                self.sg_last, self.sg_interval = running * ev.accept_len, decode_log_interval
                self.interval_from = interval_from
            else:
                self.pending_tps = ev.gen_tps
            return
        if ev.accepted is None or ev.mean_accept_len is None or ev.mean_accept_len <= 1.0:
            return
        self.intervals += 1
        self.accepted += ev.accepted
        self.drafts += ev.accepted / (ev.mean_accept_len - 1.0)
        if self.pending_tps is not None and ev.accepted_tps:
            self.spec_intervals.append((self.pending_tps, ev.accepted / ev.accepted_tps))
        self.pending_tps = None

    def figures(self, duration_s: float | None) -> WindowFigures:
        dur = duration_s
        if self.drafts > 0:
            tokens = _vllm_tokens(self.spec_intervals) or None
            return WindowFigures("log", 1.0 + self.accepted / self.drafts,
                                 tokens / dur if tokens is not None and dur else None, tokens,
                                 self.drafts, "weighted by drafts", self.intervals)
        if self.sg_weight > 0:
            # the steps after the last decode line are never logged: half an interval expected
            tokens = self.sg_tokens + self.sg_interval / 2 * self.sg_last
            return WindowFigures("log", self.sg_accept / self.sg_weight,
                                 tokens / dur if dur else None, tokens, self.sg_weight,
                                 "weighted by running requests; tokens estimated as "
                                 "decode_log_interval x running x accept len, + half an "
                                 "interval for the unlogged tail (decode_log_interval "
                                 f"{self.sg_interval}, from {self.interval_from})",
                                 self.intervals)
        return WindowFigures("log", note="no stats interval in the window", intervals=0)


@dataclass(slots=True)
class BenchWindow:
    """A benchmark window: where it is in the log, and every source's figures over it."""

    bench_id: str
    start_lineno: int
    t_start: float | None = None
    end_lineno: int | None = None
    t_end: float | None = None
    sealed: bool = False
    requests: int = 0  # load requests the end marker counts (or tagged requests seen)
    client: WindowFigures | None = None
    sums: LogSums = field(default_factory=LogSums)
    _tail: int = 0  # stats intervals taken after the end marker

    @property
    def duration_s(self) -> float | None:
        if self.t_start is None or self.t_end is None or self.t_end <= self.t_start:
            return None
        return self.t_end - self.t_start

    def log_figures(self) -> WindowFigures:
        return self.sums.figures(self.duration_s)

    def figures(self) -> list[WindowFigures]:
        out = [self.log_figures()]
        if self.client is not None:
            out.append(self.client)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.bench_id, "start_line": self.start_lineno,
                "end_line": self.end_lineno, "t_start": self.t_start, "t_end": self.t_end,
                "duration_s": self.duration_s, "requests": self.requests,
                "figures": [f.as_dict() for f in self.figures()]}


def client_totals(tokens: float, events: float | None, requests: float | None,
                  verify: float | None, duration_s: float | None) -> WindowFigures:
    """The client's figures from its totals: the engine's own verify-step count where it gave
    one (SGLang's ``meta_info``), else tokens per streamed event without each request's first
    (prefill) event: one event per verify step carries that step's accepted tokens."""
    tok_s = tokens / duration_s if duration_s else None
    if verify:
        return WindowFigures("client", tokens / verify, tok_s, tokens, verify,
                             "tokens per verify step (meta_info.spec_verify_ct)")
    accept = None
    if events is not None and requests is not None and events > requests:
        accept = (tokens - requests) / (events - requests)
    return WindowFigures("client", accept, tok_s, tokens, events,
                         "tokens per streamed event, prefill event left out "
                         "(an approximation of the acceptance length)")


def client_figures(mark: BenchMark, duration_s: float | None) -> WindowFigures | None:
    """What the bench client saw, from its end marker's numbers."""
    tokens = mark.number("tokens")
    if tokens is None:
        return None
    return client_totals(tokens, mark.number("events"), mark.number("requests"),
                         mark.number("verify"), duration_s)


class WindowTracker:
    """Finds bench windows in the event stream and adds up the log's intervals per window.

    Feed every batch (:meth:`feed`); :attr:`windows` holds them oldest first. Bounded: at most
    ``max_windows`` are kept.
    """

    def __init__(self, *, decode_log_interval: int | None = None,
                 max_windows: int = 100, interval_from: str = "the caller") -> None:
        self.windows: list[BenchWindow] = []
        # the server's own interval wherever it is known (its log, its launch command, its
        # /server_info); the default only while none is
        self.decode_log_interval = decode_log_interval or SGLANG_DEFAULT_LOG_INTERVAL
        self.interval_from = interval_from if decode_log_interval else "the default"
        self.max_windows = max_windows
        self._open: BenchWindow | None = None

    def feed(self, events: Sequence[Event]) -> list[BenchWindow]:
        """Take a batch in; returns the windows that opened, closed or sealed in it."""
        changed: list[BenchWindow] = []
        for ev in events:
            w: BenchWindow | None
            if isinstance(ev, LogLine):
                w = self._line(ev)
            elif isinstance(ev, DecodeStats | SpecStats):
                w = self._stats(ev)
            else:
                if isinstance(ev, ServerInfo) and ev.decode_log_interval:
                    self.set_interval(ev.decode_log_interval, "/server_info")
                continue
            if w is not None and all(w is not c for c in changed):
                changed.append(w)
        return changed

    def set_interval(self, steps: int, source: str) -> None:
        """The server's decode-log interval, as ``source`` states it."""
        self.decode_log_interval, self.interval_from = max(1, steps), source

    def _line(self, ln: LogLine) -> BenchWindow | None:
        if (found := interval_in(ln.text)) is not None:
            self.set_interval(*found)
        mark = bench_mark(ln.text)
        if mark is None:
            return None
        if mark.at == "start":
            if self._open is not None and not self._open.sealed:
                self._open.sealed = True
            w = BenchWindow(mark.bench_id, ln.lineno, mark.number("t"))
            self.windows.append(w)
            del self.windows[:-self.max_windows]
            self._open = w
            return w
        o = self._open
        if o is None or o.bench_id != mark.bench_id or o.end_lineno is not None:
            return None
        w = o
        if mark.at == "end":
            w.end_lineno, w.t_end = ln.lineno, mark.number("t")
            w.client = client_figures(mark, w.duration_s)
            w.requests = max(w.requests, int(mark.number("requests") or 0))
            return w
        w.requests += 1
        return None

    def _stats(self, ev: DecodeStats | SpecStats) -> BenchWindow | None:
        w = self._open
        if w is None or w.sealed:
            return None
        if isinstance(ev, DecodeStats) and w.end_lineno is not None:
            w._tail += 1
            # the interval after the tail, or an idle one (vLLM logs one, then none):
            # nothing more of this window is to come
            if w._tail > 1 or (ev.gen_tps == 0 and ev.accept_len is None):
                w.sealed = True
                return w
        w.sums.add(ev, self.decode_log_interval, self.interval_from)
        return None

    def banners(self, events: Sequence[Event]) -> list[str]:
        """:meth:`feed`, as the separator lines the log view shows for what changed."""
        out: list[str] = []
        for w in self.feed(events):
            if w.sealed:
                out.append(f"──── bench window {w.bench_id} · " + " │ ".join(
                    _short(f) for f in w.figures()) + " ────")
            elif w.end_lineno is not None:
                dur = f"{w.duration_s:.1f} s" if w.duration_s else "?"
                out.append(f"──── bench window {w.bench_id} ended · {dur}, {w.requests} requests"
                           + (f" · {_short(w.client)}" if w.client else "") + " ────")
            else:
                out.append(f"──── bench window {w.bench_id} started ────")
        return out


def _vllm_tokens(intervals: list[tuple[float, float]]) -> float:
    """Σ tok/s × dt, each ``dt`` at most the usual interval (the median): vLLM's SpecDecoding
    logger times its interval from its own last line, and prints none while idle, so the first
    interval after an idle spell spans the idle time too (its tok/s, from the Engine line, does
    not)."""
    if not intervals:
        return 0.0
    dts = sorted(dt for _, dt in intervals)
    usual = dts[len(dts) // 2]
    return sum(tps * min(dt, usual) for tps, dt in intervals)


def _short(f: WindowFigures) -> str:
    accept = f"accept {f.accept_len:.2f}" if f.accept_len is not None else "accept n/a"
    tps = f"{f.tok_s:.1f} tok/s" if f.tok_s is not None else "tok/s n/a"
    return f"{f.source} {accept}, {tps}"


__all__ = [
    "BENCH_TAG",
    "LOG_INTERVAL_RE",
    "OWN_TAG",
    "BenchMark",
    "BenchWindow",
    "LogSums",
    "WindowFigures",
    "WindowTracker",
    "bench_mark",
    "client_figures",
    "client_totals",
    "interval_in",
    "is_own_access",
    "last_interval",
    "marker_query",
    "own_path",
]
