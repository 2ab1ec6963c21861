"""The file part of the log: what the view knows of the lines before its in-memory buffer.

A log opened at its end (:class:`~eagle_tui.model.events.LogOpened`) keeps only its tail in
memory (:mod:`.logbuffer`); the lines before it exist only in the file. Scrolling up past the
oldest buffered line continues into the file: the view shows ``rows`` file rows above the
buffer, and asks the line store (``sources/linestore.py``, through the session's side of the
app, never itself) for the lines on screen. This module is the pure half of that: the rows,
their lines and what to ask for.

More in docs/architecture.md, "Module notes", ``model/buffers/linewindow``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from eagle_tui.model.buffers.logbuffer import ENTRY_BYTES
from eagle_tui.model.buffers.query import Matcher
from eagle_tui.model.events import LineKind, LogLine
from eagle_tui.model.ingest.framing import CUT_MARK
from eagle_tui.model.ingest.normalize import sanitize
from eagle_tui.model.record import Record, record

READ_LINES = 256  # lines per read: a few screenfuls for one pread / one exec
DEFAULT_WINDOW_BYTES = 16 << 20  # decoded file lines kept by the view
PREFETCH_ROWS = 64  # rows above and below the screen asked for with it


@record
class IndexFile(Record):
    """Build the line index of ``path`` on ``host`` over ``[0, start)`` (the tail's start)."""

    path: str
    host: str
    start: int


@record
class ReadLines(Record):
    """Read ``count`` lines of ``path`` from 0-based line ``first``."""

    path: str
    host: str
    first: int
    count: int


@record
class IndexProgress(Record):
    """How far the index of ``[0, start)`` has got; ``done`` with its line count, or ``error``."""

    path: str
    host: str
    scanned: int
    start: int
    lines: int
    done: bool = False
    error: str = ""


@record
class LinesRead(Record):
    """The answer to a :class:`ReadLines`: ``lines`` from ``first`` (maybe fewer than asked, when
    their bytes passed the read's budget), or ``error``."""

    path: str
    host: str
    first: int
    count: int
    lines: tuple[LogLine, ...] = ()
    error: str = ""


@record
class SearchFile(Record):
    """Find the first (``backward``: the last) line of ``[lo, hi)`` whose sanitized text matches
    ``query`` (a filter/search query: regex or text, smart case). ``token`` names the search:
    a newer one cancels it, and its answers carry the same token."""

    path: str
    host: str
    query: str
    lo: int
    hi: int
    backward: bool = False
    token: int = 0


@record
class FileMatch(Record):
    """A :class:`SearchFile`'s progress (``searched`` of ``total`` lines) or its end (``done``):
    ``line`` is the match (0-based), None for none."""

    path: str
    host: str
    token: int
    line: int | None = None
    searched: int = 0
    total: int = 0
    done: bool = False
    error: str = ""


Intent = IndexFile | ReadLines | SearchFile
Reply = IndexProgress | LinesRead | FileMatch


def search_lines(pattern: Matcher, raw: Sequence[bytes], backward: bool = False
                 ) -> int | None:
    """The index of the first (last) line of ``raw`` whose sanitized text matches ``pattern``.

    Fast path: one search over the whole block's text (C speed, and most blocks of a rare
    query have no match at all); then the candidates, each line checked alone and sanitized as
    the view shows it (so a pattern that could span lines is decided line by line; a line that
    only matches once its escape sequences are stripped can be missed)."""
    if not raw:
        return None
    text = b"\n".join(raw).decode("utf-8", "replace")
    # over the block, ``^``/``$`` must match at every line's ends as they do on one line
    block = pattern.lines
    first = block.search(text)
    if first is None:
        return None
    if backward:  # from the end: a common query is found in the last lines
        for i in range(len(raw) - 1, -1, -1):
            if pattern.search(sanitize(raw[i])) is not None:
                return i
        return None
    line, pos, tried = 0, 0, -1
    for m in block.finditer(text, first.start()):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if line != tried:
            tried = line
            if line < len(raw) and pattern.search(sanitize(raw[line])) is not None:
                return line
    return None


def decode_lines(raw: Sequence[bytes], first: int, host: str = "",
                 cut: Iterable[int] = ()) -> tuple[LogLine, ...]:
    """``LogLine`` s of the raw lines ``raw`` (no newlines) that start at 0-based line ``first``:
    sanitized and classified as the parser does for the live tail, numbered from ``first + 1``;
    the indexes in ``cut`` are marked cut."""
    from eagle_tui.model.ingest.parser import (
        LogParser,  # (its import compiles regexes: only once a file is read)
    )

    if not raw:
        return ()
    parser = LogParser(host)
    parser.lineno = first
    data = b"\n".join(raw) + b"\n"
    lines = [ev for ev in parser.feed_lines(data) if type(ev) is LogLine]
    if len(lines) != len(raw):  # (a line the parser would split: never, as there are no \n)
        raise ValueError(f"decoded {len(lines)} lines of {len(raw)}")
    for i in cut:
        ln = lines[i]
        lines[i] = LogLine(ln.lineno, ln.text + CUT_MARK, ln.kind, ln.host)
    return tuple(lines)


def placeholder(line: int) -> LogLine:
    """What a row shows while its line is being read."""
    return LogLine(line + 1, f"… reading line {line + 1:,}", LineKind.PLAIN)


class _Piece:
    __slots__ = ("bytes", "first", "lines", "used")

    def __init__(self, first: int, lines: tuple[LogLine, ...] | None, used: int) -> None:
        self.first = first
        self.lines = lines  # None: asked for, not answered yet
        self.used = used
        self.bytes = sum(len(e.text) for e in lines) + ENTRY_BYTES * len(lines) if lines else 0


class FileWindow:
    """The file lines the view has read, bounded in bytes, and the reads under way.

    ``pieces`` are sorted by their first line and never overlap; a pending piece covers the
    range it asked for (``count`` lines), an answered one the lines that came back (perhaps
    fewer: the rest is asked for again by the next :meth:`wanted`).
    """

    def __init__(self, path: str, host: str, start: int, *,
                 max_bytes: int = DEFAULT_WINDOW_BYTES, read_lines: int = READ_LINES) -> None:
        self.path = path
        self.host = host
        self.start = start
        self.max_bytes = max_bytes
        self.read_lines = read_lines
        self.prefix: int | None = None  # lines before ``start`` (LogPrefixCounted / the index)
        self.progress: IndexProgress | None = None
        self.error = ""
        self.bytes = 0
        self._firsts: list[int] = []
        self._pieces: list[_Piece] = []
        self._pending: dict[int, int] = {}  # first → count of the reads under way
        self._tick = 0

    # ------------------------------------------------------------------ lookups
    def _at(self, line: int) -> int | None:
        """Index of the piece whose range holds ``line``."""
        i = bisect.bisect_right(self._firsts, line) - 1
        if i < 0:
            return None
        p = self._pieces[i]
        size = self._pending[p.first] if p.lines is None else len(p.lines)
        return i if line < p.first + size else None

    def line(self, line: int) -> LogLine | None:
        """The decoded line with 0-based index ``line``, or None (not read yet)."""
        i = self._at(line)
        if i is None:
            return None
        p = self._pieces[i]
        if p.lines is None:
            return None
        self._tick += 1
        p.used = self._tick
        return p.lines[line - p.first]

    @property
    def pending(self) -> int:
        return len(self._pending)

    def wanted(self, lo: int, hi: int, limit: int | None = None) -> list[ReadLines]:
        """The reads to ask for so that lines ``[lo, hi)`` get read: ranges not cached and not
        asked for yet, of ``read_lines`` lines each (a read covers a whole slice of the file,
        short of the next piece and of ``limit``). They are recorded as under way."""
        out: list[ReadLines] = []
        line = max(0, lo)
        while line < hi:
            i = self._at(line)
            if i is not None:
                p = self._pieces[i]
                line = p.first + (self._pending[p.first] if p.lines is None else len(p.lines))
                continue
            nxt = bisect.bisect_right(self._firsts, line)
            stop = line + self.read_lines
            if nxt < len(self._firsts):
                stop = min(stop, self._firsts[nxt])
            if limit is not None:
                stop = min(stop, limit)
            if stop <= line:
                break
            out.append(ReadLines(self.path, self.host, line, stop - line))
            self._pending[line] = stop - line
            self._insert(_Piece(line, None, self._tick))
            line = stop
        return out

    # ------------------------------------------------------------------ answers
    def fill(self, reply: LinesRead) -> bool:
        """Take a read's answer; True when it brought lines (the view repaints)."""
        if self._pending.pop(reply.first, None) is None:
            return False  # not ours (a window reset since it was asked)
        self._remove(reply.first)
        if reply.error:
            self.error = reply.error
            return False
        if not reply.lines:
            return False
        self._tick += 1
        piece = _Piece(reply.first, reply.lines, self._tick)
        self._insert(piece)
        self.bytes += piece.bytes
        self._evict(keep=piece)
        return True

    def _insert(self, piece: _Piece) -> None:
        i = bisect.bisect_left(self._firsts, piece.first)
        self._firsts.insert(i, piece.first)
        self._pieces.insert(i, piece)

    def _remove(self, first: int) -> None:
        i = bisect.bisect_left(self._firsts, first)
        if i < len(self._firsts) and self._firsts[i] == first:
            del self._firsts[i]
            self.bytes -= self._pieces.pop(i).bytes

    def _evict(self, keep: _Piece) -> None:
        """Least recently used answered pieces go until the bound holds (``keep`` stays)."""
        if self.bytes <= self.max_bytes:
            return
        done = sorted((p for p in self._pieces if p.lines is not None and p is not keep),
                      key=lambda p: p.used)
        for p in done:
            if self.bytes <= self.max_bytes:
                break
            self._remove(p.first)

    def clear(self) -> None:
        """Forget every piece (the reads under way are ignored when they answer)."""
        self._firsts.clear()
        self._pieces.clear()
        self._pending.clear()
        self.bytes = 0

    @property
    def cached_lines(self) -> int:
        return sum(len(p.lines) for p in self._pieces if p.lines is not None)


__all__ = ["DEFAULT_WINDOW_BYTES", "PREFETCH_ROWS", "READ_LINES", "FileMatch", "FileWindow",
           "IndexFile", "IndexProgress", "Intent", "LinesRead", "ReadLines", "Reply",
           "SearchFile", "decode_lines", "placeholder", "search_lines"]
