"""``LogParser``: complete log lines (one, or a chunk of them) in, typed events out.

The contract other layers code against::

    p = LogParser(host="")
    p.feed_line(raw)            # one line without newline → [LogLine, derived events...]
    p.feed_lines(data, emit_lines=True)   # complete lines (ends with a newline), fast path
    p.feed_lines(data, emit_lines=False)  # the same, derived events only (catching up)
    p.finish()                  # end of input: a pending crash
    p.reset()                   # the log restarted; line numbers start at 1 again
    p.lineno                    # lines seen so far

Bytes as read (a partial last line, an over-long line) are the framer's business
(:mod:`.framing`): the parser only ever sees whole lines. docs/architecture.md ("Module notes")
has the stages a line goes through, the bulk path, the bounds on work and the failure rule.
"""

from __future__ import annotations

import re
from itertools import chain
from typing import TYPE_CHECKING, cast

from eagle_tui.model.engines import UNKNOWN, EngineProfile, profile_of, profiles, run_first

# The bulk stats shapes (``classify.CLASS_B``) are SGLang's scheduler lines: their readers live
# with SGLang's parser, and the fast path reads them whichever engine is detected.
from eagle_tui.model.engines.sglang.logs import decode_stats, prefill_stats
from eagle_tui.model.events import (
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
    SourceFailed,
)
from eagle_tui.model.ingest.classify import (
    ACC_S,
    DIM_S,
    GEN_S,
    LineClass,
    classify,
    number,
    small_int,
)
from eagle_tui.model.ingest.crash import CrashTracker
from eagle_tui.model.ingest.framing import CUT_MARK, PARSE_CHARS, SCAN_CHARS
from eagle_tui.model.ingest.lines import odd_lines, split_lines
from eagle_tui.model.ingest.normalize import Reflow, normalize, sanitize, to_text
from eagle_tui.model.ingest.prefix import Prefixed, engine_of, split_prefix

if TYPE_CHECKING:
    from eagle_tui.model.engines.facets.logs import LineParser
    from eagle_tui.model.ingest.bulk import Row, Stretch

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


def _bulk_engine(cls: LineClass, text: str) -> Engine | None:
    """The engine a bulk line names (asked only while the engine is unknown): its stats lines,
    or the prefix it puts before a uvicorn access line."""
    for profile in profiles():
        logs = profile.logs
        if cls is LineClass.ACCESS:
            if logs.access_opener is not None and text.startswith(logs.access_opener):
                return profile.name
        elif cls is not LineClass.DEBUG and logs.bulk_stats:
            return profile.name
    return None


def reflow() -> Reflow:
    """A :class:`Reflow` that knows every registered engine's record starts."""
    starts = [p.logs for p in profiles() if p.logs.record_start]
    return Reflow("|".join(f"(?:{logs.record_start})" for logs in starts) or "(?!)",
                  tuple((logs.record_glue, logs.record_markers) for logs in starts
                        if logs.record_glue))


PARSER_SOURCE = "log parser"  # the SourceFailed name of a line the parser could not read


class LogParser:
    """Stateful parser of one log stream (see the module docstring for the contract)."""

    def __init__(self, host: str = "") -> None:
        self.host = host
        self.reset()

    def reset(self) -> None:
        self.lineno = 0
        self.engine: Engine = UNKNOWN
        self.phase = Phase.NONE  # furthest phase before any crash (for hints and policy)
        self.crashed = False
        self.last_dim: int | None = None
        self._parsers: dict[str, LineParser] = {}  # one per engine, made when first asked
        self.crash = CrashTracker()
        self.reflow = reflow()
        self.skipped = 0  # lines whose parsing raised (shown plain, reported)

    # ------------------------------------------------------------------ public API
    def repair(self, data: bytes) -> bytes:
        """Complete lines as the engine wrote them (:class:`~.normalize.Reflow`): what the
        live tail and ``report`` do to every block before parsing it."""
        return self.reflow.block(data)

    def feed_line(self, raw: str | bytes, *, cut: bool = False) -> list[Event]:
        """The events of the next line (without its newline), its ``LogLine`` first.

        ``cut``: the framer cut the line at ``framing.MAX_LINE_BYTES`` (its rest is the next
        line): its text is marked with ``framing.CUT_MARK``.
        """
        self.lineno += 1
        out = self.parse_line(raw, self.lineno, True)
        if cut:
            out = [LogLine(ev.lineno, ev.text + CUT_MARK, ev.kind, ev.host)
                   if type(ev) is LogLine else ev for ev in out]
        return out

    def feed_lines(self, data: bytes, emit_lines: bool = True) -> list[Event]:
        """The events of the complete lines ``data`` (it ends with a newline), exactly what
        :meth:`feed_line` on each would give; ``emit_lines=False`` (catching up) drops the
        ``LogLine`` s: building no line objects is the cheaper column-wise path.

        Whole clean stretches of common lines go through :mod:`.bulk` at once (imported here:
        ``report`` never feeds, and its start should not compile its regexes).
        """
        if not data:
            return []
        if data[-1] != 0x0A:
            raise ValueError("feed_lines takes complete lines: the data must end with a newline"
                             " (the partial last line is the framer's)")
        from eagle_tui.model.ingest import bulk

        out: list[Event] = []
        for piece in bulk.scan(data):
            if type(piece) is bytes:
                self.lineno += 1
                out.extend(self.parse_line(piece, self.lineno, True))
            else:
                self._stretch(cast("Stretch", piece), out)
        return out if emit_lines else [ev for ev in out if type(ev) is not LogLine]

    def finish(self) -> list[Event]:
        """The end of the log: a crash still pending (a traceback without its last line)."""
        return self._crash_events(self.crash.finish(self.engine, self.phase))

    # ------------------------------------------------------------------ bulk stretches
    def _stretch(self, stretch: Stretch, out: list[Event]) -> None:
        """The lines of a clean stretch (printable ASCII and TAB, whole lines) into ``out``:
        segments of common-shape rows column-wise, each other row alone, in order."""
        from eagle_tui.model.ingest import bulk

        rows, shapes, kinds, others = stretch
        if self.engine == UNKNOWN:  # a bulk line may detect the engine: one by one till known
            self._one_by_one(rows, out)
            return
        k = len(rows)
        start = 0
        for stop in chain(others, (k,)):
            if stop > start:
                built = bulk.build(rows[start:stop], shapes[start:stop], kinds[start:stop],
                                   self.lineno + 1, self.host, self.last_dim)
                if built is None:  # a new hidden size (rare): its event goes between the lines
                    self._one_by_one(rows[start:stop], out)
                else:
                    self.lineno += stop - start
                    if built[1]:
                        self._advance(Phase.SERVING)
                    out.extend(built[0])
            if stop < k:
                self.lineno += 1
                out.extend(self.parse_line(rows[stop][bulk.TEXT], self.lineno, True))
            start = stop + 1

    def _one_by_one(self, rows: list[Row], out: list[Event]) -> None:
        """Rows one at a time (a segment with a new hidden size, or the engine still unknown)."""
        from eagle_tui.model.ingest import bulk

        for row in rows:
            self.lineno += 1
            shape = row[bulk.SHAPE]
            if shape in ("D", "P") and self.engine != UNKNOWN:  # (access: the line path)
                built = bulk.build([row], [shape], [LineKind.STATS], self.lineno, self.host, None)
                assert built is not None  # (no dims in a stats row)
                out.extend(built[0])
                if built[1]:
                    self._advance(Phase.SERVING)
            elif row[bulk.DEBUG_SHAPE]:
                out.append(LogLine(self.lineno, row[bulk.TEXT], LineKind.DEBUG, self.host))
                self._dims([row[bulk.DIM]], self.lineno, out)
            else:
                out.extend(self.parse_line(row[bulk.TEXT], self.lineno, True))

    # ------------------------------------------------------------------ lines
    def parse_line(self, raw: str | bytes, lineno: int, emit_line: bool) -> list[Event]:
        """Events of one line with a given number (no state change for the line counter)."""
        try:
            cls = classify(raw)
            if cls is not LineClass.OTHER:
                return self._bulk(to_text(raw), cls, lineno, emit_line)
            return self._full(raw, lineno, emit_line)
        except Exception as exc:  # the one boundary: see "Failure" in the module docstring
            self.skipped += 1
            why = str(exc).splitlines()[0][:200] if str(exc) else ""
            note = SourceFailed(PARSER_SOURCE, f"line {lineno} not parsed "
                                f"({type(exc).__name__}{': ' if why else ''}{sanitize(why)}); "
                                f"{self.skipped} line(s) skipped so far", 0.0, self.skipped)
            text = sanitize(to_text(raw)[:PARSE_CHARS])
            return [LogLine(lineno, text, LineKind.PLAIN, self.host), note] if emit_line \
                else [note]

    def _detected(self, engine: Engine | None, lineno: int, out: list[Event]) -> None:
        if engine is not None and self.engine == UNKNOWN:
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
        text = text[:PARSE_CHARS]  # (what is read of an over-long line: see framing)
        if self.engine == UNKNOWN:
            self._detected(_bulk_engine(cls, text), lineno, out)
        m = _STAMP.match(text)
        time = (f"{m.group(1)} {m.group(2)}" if m.group(1) else m.group(2)) if m else None
        if cls is LineClass.DECODE:
            out.append(decode_stats(text, lineno, time, text))
            self._advance(Phase.SERVING)
        else:
            if cls is LineClass.PREFILL:
                out.append(prefill_stats(text, lineno, time))
            # a quoted stats line (see classify)
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
        long = len(norm.text) > PARSE_CHARS  # parse its prefix only (see framing.PARSE_CHARS)
        pre = split_prefix(norm.text[:PARSE_CHARS] if long else norm.text)
        msg, time = pre.msg, pre.time or norm.stamp
        scan = msg[:SCAN_CHARS]  # what the crash and kind scans read
        out: list[Event] = []
        line_at = len(out)
        if self.engine == UNKNOWN:  # (the engine's markers are read only till it is known)
            self._detected(engine_of(pre, norm.process), lineno, out)
        was_tb = self.crash.in_traceback
        source = self.crash.is_source_line(scan)
        kind: LineKind | None = None
        if not source:
            events, kind = self._engine_events(pre, msg, lineno, time)
            first = self._run_first(events)
            if first >= 0:
                if self._new_run():
                    events, kind = self._engine_events(pre, msg, lineno, time)
                    first = self._run_first(events)
                events.insert(0, events.pop(first))  # the line's other events are its run's
            if long:
                for parser in self._parsers.values():
                    parser.line_cut()
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
        crashes = self.crash.feed(scan, lineno, level=pre.level, prefixed=prefixed, time=time,
                                  engine=self.engine, phase=self.phase)
        out.extend(self._crash_events(crashes))
        if emit_line:
            line_kind = self._kind(kind, pre, scan, bool(crashes),
                                   was_tb or self.crash.in_traceback)
            out.insert(line_at, LogLine(lineno, norm.text, line_kind, self.host))
        return out

    def _run_first(self, events: list[Event]) -> int:
        """The index in ``events`` of the INIT of the server's once-per-start line
        (``engines.run_first``), -1 if they hold none."""
        for i, ev in enumerate(events):
            if type(ev) is PhaseEvent and ev.phase is Phase.INIT \
                    and ev.detail.startswith(run_first(self.engine)):
                return i
        return -1

    def _new_run(self) -> bool:
        """At the server's once-per-start line: whether a run of this log moved on before it
        (a later phase, or a crash), i.e. the server was started again into the log (``nohup
        ... >>``). What the engine parser knew of the old run (the roles of its loads, its
        models and settings) and the last hidden-state dim are then forgotten, for the line to
        be read again by a fresh engine parser. The furthest phase and the crash stay the
        log's (what ``report`` decides its bulk paths by, which a parallel report's workers
        assume for their whole chunk)."""
        if not self.crashed and self.phase.rank <= Phase.INIT.rank:
            return False
        self.last_dim = None
        self._parsers = {}
        return True

    def _engine_events(self, pre: Prefixed, msg: str, lineno: int,
                       time: str | None) -> tuple[list[Event], LineKind | None]:
        if pre.uvicorn:
            if _ACCESS_TEXT.match(msg):
                return [], LineKind.ACCESS
            if "Application startup complete" in msg:
                own = profile_of(self.engine)
                phase = Phase.READY if own is not None and own.logs.ready_at_app_startup \
                    else Phase.HTTP_SERVER
                return [PhaseEvent(phase, lineno, time, msg.strip())], LineKind.MILESTONE
            if any(t in msg for t in _UVICORN_HTTP):
                return [PhaseEvent(Phase.HTTP_SERVER, lineno, time, msg.strip())], \
                    LineKind.MILESTONE
            return [], None
        prefixed = pre.time is not None or pre.level is not None
        if self.engine != UNKNOWN:
            parser = self._parsers.get(self.engine) or self._parser(profile_of(self.engine))
            return parser.parse(msg, lineno, time, prefixed) if parser else ([], None)
        for profile in profiles():  # unknown: the first engine that recognises the message
            parser = self._parser(profile)
            if parser is not None:
                events, kind = parser.parse(msg, lineno, time, prefixed)
                if events or kind is not None:
                    return events, kind
        return [], None

    def _parser(self, profile: EngineProfile | None) -> LineParser | None:
        """The engine's parser of this stream (``None``: it has none, or is not registered)."""
        if profile is None or profile.logs.parser is None:
            return None
        parser = self._parsers.get(profile.name)
        if parser is None:
            parser = self._parsers[profile.name] = profile.logs.parser()
        return parser

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


__all__ = ["PARSER_SOURCE", "LogParser", "odd_lines", "split_lines"]
