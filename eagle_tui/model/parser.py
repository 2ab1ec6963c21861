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
may batch them: ``feed_chunk`` handles whole clean stretches of common lines at once
(:mod:`.fastlane`) and is tested to emit exactly the events of ``feed_line``, ``LogLine``
included (``emit_lines=False``, catching up, drops the ``LogLine``\\ s); ``report`` finds the
other lines of a chunk with one regex pass (:func:`split_lines`, ``\\n(?!SHAPES)``) and extracts
its numbers from the runs in between (with :func:`read_chunks`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import chain

from .crash import CrashTracker
from .detect import (
    ACC_S,
    DIM_S,
    GEN_S,
    LineClass,
    Prefixed,
    classify,
    engine_of,
    number,
    small_int,
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
_BULK_KIND = {
    LineClass.DECODE: LineKind.STATS,
    LineClass.PREFILL: LineKind.STATS,
    LineClass.ACCESS: LineKind.ACCESS,
    LineClass.DEBUG: LineKind.DEBUG,
}


def odd_lines(buf: bytes | bytearray, start: int, end: int) -> list[int]:
    """Starts of the lines of ``buf[start:end]`` that hold ESC or CR (never bulk lines)."""
    starts: set[int] = set()
    for byte in (b"\x1b", b"\r"):
        i = buf.find(byte, start, end)
        while i >= 0:
            starts.add(max(buf.rfind(b"\n", start, i) + 1, start))
            nl = buf.find(b"\n", i, end)
            i = buf.find(byte, nl + 1, end) if nl >= 0 else -1
    return sorted(starts)


def split_lines(buf: bytes | bytearray, start: int, end: int,
                special: re.Pattern[bytes]) -> Iterator[tuple[int, int, bool]]:
    """The complete lines of ``buf[start:end]`` (``end`` just past a newline), in order.

    ``special`` matches at a newline whose following line must be handled alone (such as
    ``\\n(?!BULK)``); lines holding ESC or CR always are. Yields ``(a, b, True)`` for such a
    line ``buf[a:b]`` (newline excluded) and ``(a, b, False)`` for each run ``buf[a:b]`` of other
    lines (whole lines). One regex pass finds them all, however long the runs.
    """
    odd = odd_lines(buf, start, end)
    k = 0
    pos = start
    lo = start - 1
    if start == 0 or buf[start - 1] != 0x0A:  # the first line follows no newline in ``buf``
        e = buf.index(b"\n", start, end)
        if special.match(b"\n" + bytes(buf[start:e])) is not None:
            yield start, e, True
            pos = e + 1
        lo = e
    for m in chain(special.finditer(buf, lo, end - 1), (None,)):
        s = end if m is None else m.start() + 1
        while k < len(odd) and odd[k] < s:
            if odd[k] >= pos:
                if odd[k] > pos:
                    yield pos, odd[k], False
                e = buf.index(b"\n", odd[k], end)
                yield odd[k], e, True
                pos = e + 1
            k += 1
        if s < pos:
            continue
        if s > pos:
            yield pos, s, False
        if s >= end:
            return
        e = buf.index(b"\n", s, end)
        yield s, e, True
        pos = e + 1


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
        # whole clean stretches at a time (see ``fastlane``); catching up drops the lines: the
        # column-wise path plus a filter is ~2x cheaper than parsing the lines without them.
        # Imported here: ``report`` never feeds, and its start should not compile this.
        from .fastlane import feed_visible

        events = feed_visible(self, complete)
        return events if emit_lines else [ev for ev in events if type(ev) is not LogLine]

    def finish(self) -> list[Event]:
        out: list[Event] = []
        if self._partial:
            pending, self._partial = self._partial, b""
            self.lineno += 1
            out.extend(self.parse_line(pending, self.lineno, True))
        out.extend(self._crash_events(self.crash.finish(self.engine, self.phase)))
        return out

    # ------------------------------------------------------------------ lines
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
            dim = small_int(d)
            if dim is not None and dim != self.last_dim:
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
            # a quoted stats line (see detect)
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


__all__ = ["MAX_PARTIAL", "LogParser", "odd_lines", "split_lines"]
