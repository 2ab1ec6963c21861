"""The summary of a log's lines before the dashboard's in-memory tail, in a child process.

A dashboard that opens a big log at its end (``LogOpened``: the tail begins at byte ``start``)
still shows what the whole file says: its phases, crash, series and alerts. This module makes
that summary with the report's machinery (:func:`.parallel.fold_parallel`: the same default
number of worker processes as ``eagle-tui report``), in a process of its own so the dashboard's
interpreter lock stays free for keys, and so no worker is forked from a threaded process:

    python -m eagle_tui.report.prefix PATH START OUT [--workers N]
    python -m eagle_tui.report.prefix - START OUT          (the bytes on stdin: over SSH)

More in docs/architecture.md, "Module notes", ``report/prefix``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pickle
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import BinaryIO

from eagle_tui.console import say, warn
from eagle_tui.files import open_regular
from eagle_tui.model.boundary.termtext import Inert, inert
from eagle_tui.model.events import (
    CrashEvent,
    DecodeStats,
    Event,
    LogOpened,
    Phase,
    SpecStats,
)
from eagle_tui.model.fold.prefix import PrefixSummary
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.crash import CANDIDATE_WINDOW
from eagle_tui.model.ingest.framing import LineFramer
from eagle_tui.model.ingest.logfeed import STATS_KEEP, LogFeed
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.model.state import DashboardState

from .builder import ReportBuilder
from .parallel import fold_parallel
from .reader import read_chunks

PROGRESS_S = 0.1
NICE = 10  # background work: the dashboard's process (keys, frames) comes first for the CPU
COUNT_CHUNK = 8 << 20
STATS_FIRST = 256 << 10  # the stretch re-read for the stats first, doubled until enough
STATS_MAX = 64 << 20
# the crash tracker's context reaches this far below a line (crash.CANDIDATE_WINDOW): the
# prefix's parser reads on past ``start`` for its crash events (the tail's parser, which
# began at ``start``, knew nothing of the traceback above it)
CONT_LINES = CANDIDATE_WINDOW + 100
CONT_BYTES = 1 << 20
_STATS = (DecodeStats, SpecStats)


def count_lines(fd: int, size: int) -> int:
    """The newlines in ``fd``'s first ``size`` bytes (``bytes.count``, a chunk at a time)."""
    total = pos = 0
    while pos < size:
        data = os.pread(fd, min(COUNT_CHUNK, size - pos), pos)
        if not data:
            break
        total += data.count(b"\n")
        pos += len(data)
    return total


def last_stats(data: bytes, first_lineno: int, b: ReportBuilder) -> tuple[list[Event], bool]:
    """The last ``STATS_KEEP`` stats events of each kind in ``data`` (whole lines whose first is
    line ``first_lineno``), in their order; and whether every kind had that many."""
    parser = LogParser()
    parser.engine = b.parser.engine  # the banner is far above: parse as the fold did
    parser.phase = b.parser.phase
    parser.lineno = first_lineno - 1
    feed = LogFeed(parser, LineFramer(visible_from=len(data) + 1), thin=False)
    kept: dict[type, deque[tuple[int, Event]]] = {}
    seq = 0
    for ev in feed.feed(data):
        if isinstance(ev, _STATS):
            kept.setdefault(type(ev), deque(maxlen=STATS_KEEP)).append((seq, ev))
            seq += 1
    enough = bool(kept) and all(len(q) == STATS_KEEP for q in kept.values())
    items = sorted((item for q in kept.values() for item in q), key=lambda item: item[0])
    return [ev for _, ev in items], enough


def fold_prefix(f: BinaryIO, start: int, *, workers: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> PrefixSummary:
    """The summary of the regular file ``f``'s lines before byte ``start`` (a line start)."""
    name = getattr(f, "name", "log")
    fd = f.fileno()
    b = fold_parallel(f, name, workers=workers, size=start, progress=progress,
                      opened=_opened(name, start, os.fstat(fd).st_size))
    return _finish(b, lambda at, n: os.pread(fd, n, at), start)


def _opened(name: str, start: int, size: int) -> LogOpened:
    """What the dashboard said when it opened the log at ``start``: the summary folds the lines
    before it as that view does (a server started again into the log begins a new run there,
    ``fold.restarts.after_an_end``), not as ``report`` folds a file's runs together."""
    return LogOpened(str(name), "", start, max(size, start))


def _crash_context(b: ReportBuilder, after: bytes,
                   at_eof: bool) -> tuple[tuple[tuple[int, CrashEvent], ...], int]:
    """The crash events the prefix's parser finds in the lines ``after`` the prefix (at most
    ``CONT_LINES``), each with the line that decided it, and how many lines it read: a
    traceback cut by ``start`` ends there, a death adopts the traceback above it. The log's
    end (``at_eof``) settles a pending one. Line numbers count from the tail's start."""
    lines = after.split(b"\n")
    whole = lines[:-1][:CONT_LINES]
    out: list[tuple[int, CrashEvent]] = []
    base = b.lines

    def parse(raw: bytes, n: int) -> None:
        for ev in b.parser.parse_line(raw, base + n, False):
            if isinstance(ev, CrashEvent):
                out.append((n, dataclasses.replace(ev, lineno=ev.lineno - base)))

    for i, raw in enumerate(whole):
        parse(raw, i + 1)
    if at_eof and len(whole) == len(lines) - 1:
        if lines[-1]:
            parse(lines[-1], len(whole) + 1)
        out.extend((len(lines), dataclasses.replace(ev, lineno=ev.lineno - base))
                   for ev in b.parser.finish() if isinstance(ev, CrashEvent))
    return tuple(out), len(whole)


def _finish(b: ReportBuilder, read: Callable[[int, int], bytes], start: int,
            floor: int = 0, after: bytes | None = None) -> PrefixSummary:
    """The fold's state, the crash context below ``start``, then the last stats of the prefix
    reduced onto it (``read(offset, n)`` reads the file; nothing before ``floor`` can be
    read; ``after``: the bytes after ``start`` when they cannot be read, ``None``)."""
    if after is None:
        after = read(start, CONT_BYTES)
    crashes, covered = _crash_context(b, after, len(after) < CONT_BYTES)
    size = STATS_FIRST
    while True:
        a = max(floor, start - size)
        data = read(a, start - a)
        if a > 0:
            nl = data.find(b"\n")
            data, a = (data[nl + 1 :], a + nl + 1) if nl >= 0 else (b"", start)
        before = b.lines - data.count(b"\n")
        events, enough = last_stats(data, before + 1, b)
        if enough or a <= floor or size >= STATS_MAX:
            break
        size *= 2
    # the fold reduced a first stats line itself (when serving began): not twice; and a run
    # started again into the log (``restarts``) shows only its own lines' stats
    st = b.state
    stats = st.stats
    first = st.startup.phase_mark(Phase.INIT) if st.startup.restarts else None
    done = max([ev.lineno for ev in (stats.last_decode, stats.last_spec, first) if ev is not None],
               default=0)
    events = [ev for ev in events if getattr(ev, "lineno", 0) > done]
    state = reduce(b.state, events) if events else b.state
    return PrefixSummary(_with_lines(state, b.lines), b.lines, covered, crashes)


def _with_lines(state: DashboardState, lines: int) -> DashboardState:
    return dataclasses.replace(state, log=dataclasses.replace(state.log, lines=lines))


class _Recent:
    """A binary stream (stdin) read through, keeping its last ``keep`` bytes for the stats
    re-read; at most ``size`` bytes are read of it."""

    def __init__(self, stream: BinaryIO, size: int, keep: int = STATS_MAX) -> None:
        self.stream, self.left, self.keep = stream, size, keep
        self.tail = bytearray()
        self.pos = 0

    def read(self, n: int) -> bytes:
        data = self.stream.read(min(n, self.left))
        self.left -= len(data)
        self.pos += len(data)
        self.tail += data
        if len(self.tail) > 2 * self.keep:
            del self.tail[: len(self.tail) - self.keep]
        return data

    def read_at(self, at: int, n: int) -> bytes:
        lo = self.pos - len(self.tail)
        return bytes(self.tail[max(0, at - lo) : at - lo + n])


def fold_stream(stream: BinaryIO, start: int,
                progress: Callable[[int, int], None] | None = None) -> PrefixSummary:
    """:func:`fold_prefix` of the first ``start`` bytes of a stream (one process, serial)."""
    src = _Recent(stream, start)
    b = ReportBuilder("log", opened=_opened("log", start, start))
    done = 0
    for buf, end, last in read_chunks(src, 4 << 20):  # type: ignore[arg-type]
        b.chunk(buf, end, last)
        done += end - 1
        if progress is not None:
            progress(done, b.lines)
    # the bytes after ``start`` are not on stdin: a traceback cut there keeps the tail's view
    return _finish(b, src.read_at, start, floor=src.pos - len(src.tail), after=b"")


class _Reporter:
    """The child's progress lines on stdout, at most one per ``PROGRESS_S``."""

    def __init__(self) -> None:
        self.last = 0.0
        self._lock = threading.Lock()  # the count's thread says its line too

    def say(self, line: Inert) -> None:
        with self._lock:
            say(line, flush=True)

    def progress(self, done: int, lines: int) -> None:
        now = time.monotonic()
        if now - self.last >= PROGRESS_S:
            self.last = now
            self.say(inert(f"progress {done} {lines}"))


def main(argv: list[str]) -> int:
    """``PATH START OUT [--workers N]`` (see the module docstring); the exit status."""
    workers: int | None = None
    if len(argv) == 5 and argv[3] == "--workers" and argv[4].isdigit():
        workers = int(argv[4])
        argv = argv[:3]
    if len(argv) != 3 or not argv[1].isdigit():
        warn(Inert("usage: python -m eagle_tui.report.prefix PATH|- START OUT [--workers N]"))
        return 2
    path, start, out = argv[0], int(argv[1]), argv[2]
    with contextlib.suppress(OSError, AttributeError):  # (the workers inherit it)
        os.nice(NICE)
    rep = _Reporter()
    try:
        if path == "-":
            summary = fold_stream(sys.stdin.buffer, start, rep.progress)
        else:
            with open_regular(path) as f:
                # the count beside the fold, not before it: its reads let go of the interpreter
                # lock, and the fold's parent mostly waits on its workers (on 16 cores a serial
                # count first was a third of the summary's time)
                counter = threading.Thread(
                    target=lambda: rep.say(inert(f"count {count_lines(f.fileno(), start)}")),
                    name="count", daemon=True)
                counter.start()
                summary = fold_prefix(f, start, workers=workers, progress=rep.progress)
                counter.join()
        with open(out, "wb") as fh:
            pickle.dump(summary, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError as exc:
        warn(inert(f"cannot summarize {path}: {exc.strerror or exc}"))
        return 1
    rep.say(inert(f"progress {start} {summary.lines}"))
    rep.say(Inert("done"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


__all__ = ["count_lines", "fold_prefix", "fold_stream", "last_stats", "main"]
