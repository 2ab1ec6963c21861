"""``LogParser``: raw log lines (or chunks) in, typed events out.

The contract other layers code against::

    p = LogParser(host="")
    p.feed_line(raw)            # one line without newline → [LogLine, derived events...]
    p.feed_chunk(data, emit_lines=True)   # bytes; splits lines, buffers a partial last line
    p.feed_chunk(data, emit_lines=False)  # fast path: derived events only (catching up)
    p.finish()                  # end of input: the partial line, a pending crash
    p.reset()                   # the log restarted; line numbers start at 1 again
    p.lineno                    # lines seen so far

Every line is first classified by :func:`detect.classify`. *Bulk* lines (``Decode batch`` /
``Prefill batch`` stats, uvicorn access lines, ``[EAGLE3-DEBUG]`` prints — 99 % of a busy log)
only yield stats / hidden-dims events read from their raw text, and never touch the crash or
phase machinery. Every other line is normalized, its logger prefix split off, and handed to the
engine parser and the crash tracker. Because bulk lines cannot change any state, the fast path
may skip or batch them: :func:`scan_chunk` finds the other lines of a chunk with one regex pass
(``\\n(?!BULK)``) and hands the runs of bulk lines in between to a callback. ``feed_chunk(...,
emit_lines=False)`` skips access-line runs that way and is tested to emit exactly the derived
events of ``feed_line``; ``report`` goes further and extracts its numbers from whole runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .crash import CrashTracker
from .detect import (
    ACC_S,
    DIM_S,
    GEN_S,
    NON_ACCESS_AFTER_NL,
    LineClass,
    Prefixed,
    classify,
    engine_of,
    number,
    split_prefix,
)
from .events import (
    CrashEvent,
    DecodeStats,
    Engine,
    EngineDetected,
    Event,
    HiddenStateDims,
    LineKind,
    LogLine,
    Phase,
    PhaseEvent,
)
from .normalize import normalize, sanitize, to_text
from .sglang import SglangParser, decode_stats, prefill_stats
from .vllm import VllmParser

WINDOW = 1 << 20  # bytes scanned per regex pass in the fast path
MAX_PARTIAL = 1 << 20  # a "line" still unterminated after this many bytes is emitted as is
_STAMP = re.compile(r"\[(?:(\d{4}-\d\d-\d\d) )?(\d\d:\d\d:\d\d)", re.ASCII)
_DEBUG_DIM = re.compile(
    r"hidden[_ ]?states?(?:\.shape|\s+shape)?\s*[=:]\s*(?:torch\.Size\()?[\[(]"
    r"(?:\d+,\s*)*(\d+)\s*[\])]"
)
_ERROR_TEXT = re.compile(r"^(?:[\w.]*(?:Error|Exception|Exit)\b|Killed\b|Fatal|Segmentation)")
_WARN_TEXT = re.compile(r"(?:^|[\s:])\w*Warning: |NCCL WARN|^\[rank\d+\]:\[W|^\[W\d{4}")
_ACCESS_TEXT = re.compile(r"^\S+:\d+ - \"[A-Z]+ ")
_TRACE_TEXT = ("Traceback (most recent call last)", "During handling of the above exception",
               "The above exception was the direct cause")
_UVICORN_HTTP = ("Started server process", "Waiting for application startup", "Uvicorn running on")
# Text without which a non-Decode bulk line yields nothing (``_bulk``): runs lacking all of these
# can be skipped whole.
_BULK_TEXT = (b"(token/s)", b"accept len", b"_states")
_BULK_KIND = {
    LineClass.DECODE: LineKind.STATS,
    LineClass.PREFILL: LineKind.STATS,
    LineClass.ACCESS: LineKind.ACCESS,
    LineClass.DEBUG: LineKind.DEBUG,
}


def scan_chunk(
    data: bytes,
    first_lineno: int,
    special: re.Pattern[bytes],
    on_line: Callable[[bytes, int], None],
    on_run: Callable[[bytes, int, int, int], None],
    end: int | None = None,
) -> int:
    """Walk the complete lines of ``data[:end]`` (ending with ``\\n``); return the line count.

    ``special`` matches at a newline whose following line must be handled one by one
    (``\\n(?!BULK)``); lines containing ESC or CR are always special. ``on_line(raw, lineno)``
    gets those; ``on_run(data, start, end, lineno)`` gets each run of other lines
    ``data[start:end]`` (whole lines) with the number of its first line.
    """
    lineno = first_lineno
    n = len(data) if end is None else end
    w0 = 0
    while w0 < n:
        limit = w0 + WINDOW
        if limit >= n:
            w1 = n
        else:
            # windows end at a newline so a line is never split between two regex passes
            w1 = data.rfind(b"\n", w0, limit) + 1
            if w1 <= w0:  # one line longer than a window
                w1 = data.index(b"\n", limit, n) + 1
        lineno = _scan_window(data, w0, w1, lineno, special, on_line, on_run)
        w0 = w1
    return lineno - first_lineno


def _special_starts(data: bytes, w0: int, w1: int, special: re.Pattern[bytes]) -> list[int]:
    starts = [m.start() + 1 for m in special.finditer(data, w0, w1 - 1)]
    prev = data[w0 - 1 : w0] if w0 else b"\n"
    if special.match(prev + data[w0 : min(w1, w0 + 256)].split(b"\n", 1)[0]) is not None:
        starts.insert(0, w0)
    extra: list[int] = []
    for byte in (b"\x1b", b"\r"):
        i = data.find(byte, w0, w1)
        while i >= 0:
            s = data.rfind(b"\n", w0, i) + 1 if i > w0 else w0
            s = max(s, w0)
            extra.append(s)
            i = data.find(byte, data.find(b"\n", i, w1) + 1 or w1, w1)
    if extra:
        starts = sorted(set(starts).union(extra))
    return starts


def _scan_window(data: bytes, w0: int, w1: int, lineno: int, special: re.Pattern[bytes],
                 on_line: Callable[[bytes, int], None],
                 on_run: Callable[[bytes, int, int, int], None]) -> int:
    pos = w0
    for s in _special_starts(data, w0, w1, special):
        if s < pos:
            continue
        if s > pos:
            on_run(data, pos, s, lineno)
            lineno += data.count(b"\n", pos, s)
        e = data.index(b"\n", s, w1)
        on_line(data[s:e], lineno)
        lineno += 1
        pos = e + 1
    if pos < w1:
        on_run(data, pos, w1, lineno)
        lineno += data.count(b"\n", pos, w1)
    return lineno


class LogParser:
    """Stateful parser of one log stream (see the module docstring for the contract)."""

    def __init__(self, host: str = "") -> None:
        self.host = host
        self.reset()

    def reset(self) -> None:
        self.lineno = 0
        self.engine: Engine = "unknown"
        self.phase = Phase.NONE  # furthest phase before any crash (for hints and policy)
        self.crashed = False
        self.last_dim: int | None = None
        self._partial = b""
        self._sglang = SglangParser()
        self._vllm = VllmParser()
        self.crash = CrashTracker()

    # ------------------------------------------------------------------ public API
    def feed_line(self, raw: str | bytes) -> list[Event]:
        out: list[Event] = []
        if self._partial:
            pending, self._partial = self._partial, b""
            self.lineno += 1
            out.extend(self.parse_line(pending, self.lineno, True))
        self.lineno += 1
        out.extend(self.parse_line(raw, self.lineno, True))
        return out

    def feed_chunk(self, data: bytes, emit_lines: bool = True) -> list[Event]:
        if self._partial:
            data = self._partial + data
        cut = data.rfind(b"\n") + 1
        if len(data) - cut > MAX_PARTIAL:  # binary garbage or a runaway line: bounded memory
            data = data + b"\n"
            cut = len(data)
        self._partial = bytes(data[cut:])
        complete = data[:cut]
        out: list[Event] = []
        if not complete:
            return out
        if emit_lines:
            start = 0
            while (end := complete.find(b"\n", start)) >= 0:
                self.lineno += 1
                out.extend(self.parse_line(complete[start:end], self.lineno, True))
                start = end + 1
            return out

        def on_line(raw: bytes, lineno: int) -> None:
            out.extend(self.parse_line(raw, lineno, False))

        def on_run(buf: bytes, a: int, b: int, lineno: int) -> None:
            # only access lines here: they matter only while the engine is unknown, or if
            # (absurdly) they quote stats or a hidden-states shape (see ``_bulk``)
            if self.engine == "unknown" or any(buf.find(t, a, b) >= 0 for t in _BULK_TEXT):
                self._lines(buf, a, b, lineno, out)

        self.lineno += scan_chunk(complete, self.lineno + 1, NON_ACCESS_AFTER_NL, on_line, on_run)
        return out

    def finish(self) -> list[Event]:
        out: list[Event] = []
        if self._partial:
            pending, self._partial = self._partial, b""
            self.lineno += 1
            out.extend(self.parse_line(pending, self.lineno, True))
        out.extend(self._crash_events(self.crash.finish(self.engine, self.phase)))
        return out

    # ------------------------------------------------------------------ lines
    def _lines(self, buf: bytes, a: int, b: int, lineno: int, out: list[Event]) -> None:
        while a < b:
            e = buf.index(b"\n", a, b)
            out.extend(self.parse_line(buf[a:e], lineno, False))
            lineno += 1
            a = e + 1

    def parse_line(self, raw: str | bytes, lineno: int, emit_line: bool) -> list[Event]:
        """Events of one line with a given number (no state change for the line counter)."""
        cls = classify(raw)
        if cls is not LineClass.OTHER:
            return self._bulk(to_text(raw), cls, lineno, emit_line)
        return self._full(raw, lineno, emit_line)

    def _detected(self, engine: Engine | None, lineno: int, out: list[Event]) -> None:
        if engine is not None and self.engine == "unknown":
            self.engine = engine
            out.append(EngineDetected(engine, lineno))

    def _advance(self, phase: Phase) -> None:
        if not self.crashed and phase.rank > self.phase.rank:
            self.phase = phase

    def _dims(self, dims: list[str], lineno: int, out: list[Event]) -> None:
        for d in dims:
            dim = int(d)
            if dim != self.last_dim:
                self.last_dim = dim
                out.append(HiddenStateDims(dim, lineno))

    def _bulk(self, text: str, cls: LineClass, lineno: int, emit_line: bool) -> list[Event]:
        out: list[Event] = []
        if emit_line:
            out.append(LogLine(lineno, sanitize(text), _BULK_KIND[cls], self.host))
        if self.engine == "unknown":
            if cls in (LineClass.DECODE, LineClass.PREFILL) or (
                cls is LineClass.ACCESS and text.startswith("[")
            ):
                self._detected("sglang", lineno, out)
            elif cls is LineClass.ACCESS and text.startswith("("):
                self._detected("vllm", lineno, out)
        m = _STAMP.match(text)
        time = (f"{m.group(1)} {m.group(2)}" if m.group(1) else m.group(2)) if m else None
        if cls is LineClass.DECODE:
            out.append(decode_stats(text, lineno, time, text))
            self._advance(Phase.SERVING)
        else:
            if cls is LineClass.PREFILL:
                out.append(prefill_stats(text, lineno, time))
            # a quoted stats line (see detect); keep in step with _BULK_TEXT
            if "(token/s)" in text or "accept len" in text:
                stats = DecodeStats(lineno, time, number(GEN_S, text), number(ACC_S, text))
                if stats.gen_tps is not None or stats.accept_len is not None:
                    out.append(stats)
                    self._advance(Phase.SERVING)
        if "_states" in text:
            self._dims(DIM_S.findall(text), lineno, out)
        return out

    def _crash_events(self, events: list[CrashEvent]) -> list[Event]:
        if events:
            self.crashed = True
        return list(events)

    def _full(self, raw: str | bytes, lineno: int, emit_line: bool) -> list[Event]:
        norm = normalize(raw)
        pre = split_prefix(norm.text)
        msg, time = pre.msg, pre.time or norm.stamp
        out: list[Event] = []
        line_at = len(out)
        self._detected(engine_of(pre, norm.process), lineno, out)
        was_tb = self.crash.in_traceback
        source = self.crash.is_source_line(msg)
        kind: LineKind | None = None
        if not source:
            events, kind = self._engine_events(pre, msg, lineno, time)
            for ev in events:
                if isinstance(ev, PhaseEvent):
                    self._advance(ev.phase)
                elif isinstance(ev, DecodeStats):
                    self._advance(Phase.SERVING)
            out.extend(events)
            if "[EAGLE3-DEBUG]" in msg:
                kind = LineKind.DEBUG
                self._dims([m.group(1) for m in _DEBUG_DIM.finditer(msg)], lineno, out)
        prefixed = pre.time is not None or pre.level is not None
        crashes = self.crash.feed(msg, lineno, level=pre.level, prefixed=prefixed, time=time,
                                  engine=self.engine, phase=self.phase)
        out.extend(self._crash_events(crashes))
        if emit_line:
            line_kind = self._kind(kind, pre, msg, bool(crashes), was_tb or self.crash.in_traceback)
            out.insert(line_at, LogLine(lineno, norm.text, line_kind, self.host))
        return out

    def _engine_events(self, pre: Prefixed, msg: str, lineno: int,
                       time: str | None) -> tuple[list[Event], LineKind | None]:
        if pre.uvicorn:
            if _ACCESS_TEXT.match(msg):
                return [], LineKind.ACCESS
            if "Application startup complete" in msg:
                phase = Phase.READY if self.engine == "vllm" else Phase.HTTP_SERVER
                return [PhaseEvent(phase, lineno, time, msg.strip())], LineKind.MILESTONE
            if any(t in msg for t in _UVICORN_HTTP):
                return [PhaseEvent(Phase.HTTP_SERVER, lineno, time, msg.strip())], \
                    LineKind.MILESTONE
            return [], None
        prefixed = pre.time is not None or pre.level is not None
        if self.engine == "vllm":
            return self._vllm.parse(msg, lineno, time)
        events, kind = self._sglang.parse(msg, lineno, time, prefixed)
        if events or kind is not None or self.engine == "sglang":
            return events, kind
        return self._vllm.parse(msg, lineno, time)

    def _kind(self, kind: LineKind | None, pre: Prefixed, msg: str, crashed: bool,
              in_tb: bool) -> LineKind:
        if kind is LineKind.DEBUG:
            return kind
        if crashed or pre.level in ("ERROR", "CRITICAL"):
            return LineKind.TRACEBACK if in_tb and not crashed else LineKind.ERROR
        stripped = msg.strip()
        if in_tb or stripped.startswith(_TRACE_TEXT) or _TRACE_TEXT[0] in stripped:
            return LineKind.TRACEBACK
        if kind is not None:
            return kind
        if pre.level == "WARNING" or _WARN_TEXT.search(stripped):
            return LineKind.WARNING
        if _ERROR_TEXT.match(stripped):
            return LineKind.ERROR
        if _ACCESS_TEXT.match(stripped):
            return LineKind.ACCESS
        return LineKind.PLAIN


__all__ = ["MAX_PARTIAL", "WINDOW", "LogParser", "scan_chunk"]
