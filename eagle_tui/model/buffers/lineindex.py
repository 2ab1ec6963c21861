"""A sparse line index of a file, and the reader that cuts the lines of one byte range.

File-backed scrollback (the log pane scrolling back past its in-memory lines, all the way to
line 1 of a 5 M-line log) needs to find the byte where line N starts without holding every
line's offset: :class:`LineIndex` keeps the offset of every ``stride``-th line start (256 by
default), built incrementally from the file's bytes as they are read, in order, in chunks of
any size. Finding line N is then one array lookup plus skipping at most ``stride - 1`` lines
of one short read.

Memory is bounded in bytes whatever the file size: the marks are a C array of 8-byte offsets,
at most ``max_bytes // 8`` of them (1 MiB: 131,072 marks, i.e. 33 M lines at stride 256). When a
file has more lines than that, the stride doubles and every other mark is dropped, so the index
of a file of any length stays under its byte bound; only the skip per lookup grows.

More in docs/architecture.md, "Module notes", ``model/buffers/lineindex``.
"""

from __future__ import annotations

from array import array
from itertools import accumulate

from eagle_tui.model.ingest.framing import MAX_LINE_BYTES

DEFAULT_STRIDE = 256
DEFAULT_INDEX_BYTES = 1 << 20  # the marks' bound: 131,072 offsets of 8 bytes
MARK_BYTES = 8


class LineIndex:
    """The offsets of every ``stride``-th line start of a file, fed its bytes in order."""

    __slots__ = ("_marks", "lines", "max_marks", "scanned", "stride", "tail_start")

    def __init__(self, stride: int = DEFAULT_STRIDE,
                 max_bytes: int = DEFAULT_INDEX_BYTES) -> None:
        if stride < 1:
            raise ValueError("stride must be >= 1")
        if max_bytes < 2 * MARK_BYTES:
            raise ValueError("max_bytes must hold at least two marks")
        self.stride = stride
        self.max_marks = max_bytes // MARK_BYTES
        self._marks = array("q", [0])  # _marks[k]: the offset where line k * stride starts
        self.lines = 0  # complete lines scanned (newlines seen)
        self.scanned = 0  # bytes fed: the offset the next chunk starts at
        self.tail_start = 0  # where the line after the last complete one starts

    @property
    def marks(self) -> int:
        return len(self._marks)

    @property
    def nbytes(self) -> int:
        """The index's own size (its marks), as bounded by ``max_bytes``."""
        return len(self._marks) * MARK_BYTES

    def feed(self, data: bytes) -> None:
        """Scan the next bytes of the file (the chunk that starts at ``scanned``)."""
        n = data.count(b"\n")
        if n:
            stride = self.stride
            # newline j of this chunk (0-based) ends line ``lines + j``; the line after it gets
            # a mark when its index ``lines + j + 1`` is a multiple of the stride
            first = (-(self.lines + 1)) % stride
            if first < n:
                ends = list(accumulate(map(len, data.split(b"\n"))))
                base = self.scanned + 1
                self._marks.extend(base + ends[j] + j for j in range(first, n, stride))
            self.lines += n
            self.tail_start = self.scanned + data.rfind(b"\n") + 1
            if len(self._marks) > self.max_marks:
                self._coarsen()
        self.scanned += len(data)

    def _coarsen(self) -> None:
        """Double the stride, dropping every other mark: the bound holds for any file."""
        while len(self._marks) > self.max_marks:
            self._marks = self._marks[::2]
            self.stride *= 2

    def seek(self, line: int) -> tuple[int, int]:
        """``(offset, skip)``: read from ``offset`` and skip ``skip`` lines to reach ``line``."""
        if not 0 <= line <= self.lines:
            raise IndexError(f"line {line} is not indexed (0..{self.lines})")
        k = min(line // self.stride, len(self._marks) - 1)
        return self._marks[k], line - k * self.stride

    def end_of(self, line: int) -> int:
        """The offset where line ``line`` ends at the latest: the next mark after it, or the
        start of the unfinished tail (lines up to ``lines`` are complete)."""
        if not 0 <= line <= self.lines:
            raise IndexError(f"line {line} is not indexed (0..{self.lines})")
        k = line // self.stride + 1
        return self._marks[k] if k < len(self._marks) else self.tail_start


def char_boundary(data: bytes, at: int) -> int:
    """``at`` backed up to the start of a UTF-8 character (never below 1)."""
    cut = at
    while cut > at - 4 and cut > 1 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return cut


class RangeLines:
    """The complete lines of one byte range, fed in pieces: skip ``skip`` lines, keep
    ``count`` (fewer if their text would pass ``max_bytes``), each cut at ``max_line``.

    Memory: the kept lines (bounded by ``max_bytes`` plus one line) and one partial line of at
    most ``max_line`` bytes; the rest of an over-long line is dropped as it arrives.
    """

    __slots__ = (
        "_partial",
        "_size",
        "_skipping",
        "count",
        "cut",
        "done",
        "kept",
        "max_bytes",
        "max_line",
        "skip",
    )

    def __init__(self, skip: int, count: int, *, max_bytes: int = 4 << 20,
                 max_line: int = MAX_LINE_BYTES) -> None:
        self.skip = skip
        self.count = count
        self.max_bytes = max_bytes
        self.max_line = max_line
        self.kept: list[bytes] = []
        self.cut: set[int] = set()  # indexes in ``kept`` of lines cut at ``max_line``
        self.done = count <= 0
        self._partial = b""
        self._skipping = False  # inside the dropped rest of an over-long line
        self._size = 0

    def feed(self, data: bytes) -> None:
        """The next piece of the range (bytes in order); sets ``done`` when enough is kept."""
        pos, end = 0, len(data)
        while pos < end and not self.done:
            nl = data.find(b"\n", pos)
            stop = end if nl < 0 else nl
            if self._skipping:
                if nl >= 0:
                    self._skipping = False
                pos = stop + 1
                continue
            piece = data[pos:stop]
            if self._partial:
                piece = self._partial + piece
                self._partial = b""
            if nl < 0:  # no newline yet: hold it, unless it is already too long
                if len(piece) > self.max_line:
                    self._line(piece[:char_boundary(piece, self.max_line)], cut=True)
                    self._skipping = True
                else:
                    self._partial = piece
                return
            if len(piece) > self.max_line:
                self._line(piece[:char_boundary(piece, self.max_line)], cut=True)
            else:
                self._line(piece, cut=False)
            pos = stop + 1

    def _line(self, line: bytes, cut: bool) -> None:
        if self.skip:
            self.skip -= 1
            return
        if cut:
            self.cut.add(len(self.kept))
        self.kept.append(line)
        self._size += len(line)
        if len(self.kept) >= self.count or self._size >= self.max_bytes:
            self.done = True


__all__ = ["DEFAULT_INDEX_BYTES", "DEFAULT_STRIDE", "LineIndex", "RangeLines", "char_boundary"]
