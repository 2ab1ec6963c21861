"""``NumberSpool``: the report's number arrays, text on disk and exact statistics in bounded memory.

A spool outgrows memory into an anonymous temporary file: this is the report's disk I/O (it is
why the report engine is not in the pure ``eagle_tui.model``). ``tempfile`` is imported only
once a spool outgrows memory: a report of a small log never pays for the import.
"""

from __future__ import annotations

import io
import math
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, deque
from collections.abc import Iterator, Mapping
from itertools import chain
from typing import IO, BinaryIO

from eagle_tui.model.boundary.loaders import load_json

from .chunk_summary import TAIL

CAP = 1 << 16  # distinct values a mean-only spool counts before folding them into its sum
BLOCK = 1 << 16  # values a median spool sorts and writes at once
STEP = 128  # a median spool keeps every STEP-th value of each sorted block in memory
_SCALE = 1 << 1074  # every finite double times this is an integer (exact sums)


def _temporary_file() -> IO[bytes]:
    import tempfile  # here, not at the top: a short command need not pay for its import

    return tempfile.TemporaryFile()


class _Spooled:
    """In memory up to ``max_size`` bytes, then an anonymous temporary file (like
    ``tempfile.SpooledTemporaryFile``, without importing ``tempfile`` for a small log)."""

    def __init__(self, max_size: int) -> None:
        self._memory: io.BytesIO | None = io.BytesIO()
        self._file: IO[bytes] = self._memory
        self._max = max_size

    def write(self, data: bytes) -> None:
        self._file.write(data)
        if self._memory is not None and self._memory.tell() > self._max:
            disk = _temporary_file()
            disk.write(self._memory.getvalue())
            self._memory.close()
            self._file, self._memory = disk, None

    def seek(self, offset: int, whence: int = 0) -> None:
        self._file.seek(offset, whence)

    def read(self, n: int) -> bytes:
        return self._file.read(n)

    def close(self) -> None:
        self._file.close()



def _text(value: float) -> bytes:
    """A float as a plain decimal (JSON-valid, no exponent)."""
    r = repr(value)
    return (r if "e" not in r else f"{value:.12f}".rstrip("0").rstrip(".")).encode()


class NumberSpool:
    """An append-only list of numbers: the JSON text on disk, statistics in bounded memory.

    ``write_json`` copies the text out. The statistics never hold all the values:

    - mean (``median=False``): a log repeats values (``accept len`` has a few hundred distinct
      ones), so tokens are counted as they come (one C-level ``Counter.update`` per batch, no
      float per value) and folded, past ``CAP`` distinct ones and at the end, into an exact
      integer sum; the mean is that sum rounded once (exactly what ``math.fsum`` gives) / count.
    - median (``median=True``): values are sorted ``BLOCK`` at a time (C-level) onto disk, and
      every ``STEP``-th value of a block stays in memory. These samples bound the middle ranks
      to a range of at most twice blocks × ``STEP`` values, which one pass collects (``bisect``
      per block): the median is exact.
    """

    def __init__(self, median: bool = False) -> None:
        self._text = _Spooled(1 << 20)
        self._median = median
        self._counts: Counter[bytes] = Counter()  # mean: token → times seen
        self._sums: dict[int, int] = {}  # mean: power-of-two denominator → sum of numerators
        self._pending: list[float] = []  # median: values not in a block yet
        self._blocks: _Spooled | None = None  # median: sorted blocks of doubles
        self._sizes: list[int] = []
        self._samples: list[float] = []
        self.count = 0
        self.tail: deque[float] = deque(maxlen=TAIL)

    def close(self) -> None:
        self._text.close()
        if self._blocks is not None:
            self._blocks.close()

    def _write(self, text: bytes, n: int) -> None:
        if self.count:
            self._text.write(b",")
        self._text.write(text)
        self.count += n

    def add_tokens(self, tokens: list[bytes], joined: bytes,
                   counts: Mapping[bytes, int] | None = None) -> None:
        """Tokens that are plain decimals and finite doubles (``detect.valid_tokens(joined)``),
        written as they are; ``counts``, if given, is how often each occurs (a mean spool need
        not count them again)."""
        if not tokens:
            return
        self._write(joined, len(tokens))
        if self._median:
            values = list(map(float, tokens))
            self.tail.extend(values[-TAIL:])
            self._pending.extend(values)
            if len(self._pending) >= BLOCK:
                self._flush()
        else:
            self.tail.extend(map(float, tokens[-TAIL:]))
            self._counts.update(tokens if counts is None else counts)
            if len(self._counts) > CAP:
                self._fold()

    def add_text(self, text: bytes, n: int, tail: list[float]) -> None:
        """``n`` values summarized elsewhere (``chunk_summary``): their JSON text, in log order,
        and their last ``TAIL`` floats; their statistics come with ``add_counts`` or
        ``add_block``."""
        if n:
            self._write(text, n)
            self.tail.extend(tail)

    def add_counts(self, counts: dict[bytes, int]) -> None:
        """Mean: token counts of values given by ``add_text`` (any order: the sum is exact)."""
        self._counts.update(counts)
        if len(self._counts) > CAP:
            self._fold()

    def add_block(self, raw: bytes) -> None:
        """Median: the sorted doubles (``array("d").tobytes()``) of values given by ``add_text``,
        kept as one block (the median is exact whatever the blocks)."""
        if not raw:
            return
        if self._blocks is None:
            self._blocks = _Spooled(1 << 20)
        block = array("d")
        block.frombytes(raw)
        self._blocks.write(raw)
        self._sizes.append(len(block))
        self._samples.extend(block[::STEP])

    def add(self, value: float) -> None:
        if not math.isfinite(value):
            return
        self._write(_text(value), 1)
        self.tail.append(value)
        if self._median:
            self._pending.append(value)
            if len(self._pending) >= BLOCK:
                self._flush()
        else:
            self._sum(value, 1)

    # ------------------------------------------------------------------ mean
    def _sum(self, value: float, n: int) -> None:
        p, q = value.as_integer_ratio()  # exact; big-integer work only per distinct q, at the end
        self._sums[q] = self._sums.get(q, 0) + n * p

    def _fold(self) -> None:
        for token, n in self._counts.items():
            self._sum(float(token), n)
        self._counts.clear()

    def mean(self) -> float | None:
        if not self.count:
            return None
        if self._median:
            return math.fsum(chain.from_iterable(self._sorted_blocks())) / self.count
        self._fold()
        total = sum(num * (_SCALE // q) for q, num in self._sums.items())
        return (total / _SCALE) / self.count

    # ------------------------------------------------------------------ median
    def _flush(self) -> None:
        if not self._pending:
            return
        if self._blocks is None:
            self._blocks = _Spooled(1 << 20)
        block = array("d", sorted(self._pending))
        self._pending.clear()
        self._blocks.write(block.tobytes())
        self._sizes.append(len(block))
        self._samples.extend(block[::STEP])

    def _sorted_blocks(self) -> Iterator[array[float]]:
        self._flush()
        if self._blocks is None:
            return
        self._blocks.seek(0)
        for n in self._sizes:
            block = array("d")
            block.frombytes(self._blocks.read(n * 8))
            yield block
        self._blocks.seek(0, 2)

    def median(self) -> float | None:
        """Exact median (mean of the two middle values for an even count), in bounded memory."""
        if not self.count or not self._median:
            return None
        ranks = sorted({(self.count - 1) // 2, self.count // 2})
        self._flush()
        samples = sorted(self._samples)
        # fewer than r values lie below samples[i] if i <= r // STEP (a block's values below a
        # sample are at most STEP per sample before it), and more than r at or below samples[j]
        # if j >= r // STEP + blocks (at most STEP - 1 per block lie between samples)
        margin = len(self._sizes)
        while True:
            i, j = ranks[0] // STEP - margin, ranks[-1] // STEP + margin
            lo = samples[i] if i > 0 else -math.inf
            hi = samples[j] if j < len(samples) else math.inf
            below = 0
            middle: list[float] = []
            for block in self._sorted_blocks():
                a = bisect_left(block, lo)
                below += a
                middle.extend(block[a : bisect_right(block, hi)])
            if below <= ranks[0] and ranks[-1] < below + len(middle):
                middle.sort()
                return sum(middle[r - below] for r in ranks) / len(ranks)
            margin += len(samples)  # never needed (see above): widen to everything, to be safe

    # ------------------------------------------------------------------ out
    def values(self) -> list[float]:
        """All values in order (tests and small logs only: this loads the whole list)."""
        out = io.BytesIO()
        self.write_json(out)
        data = out.getvalue()
        values: list[float] = load_json(data, "the spooled values", max_bytes=len(data),
                                        parse_int=float)
        return values

    def write_json(self, out: BinaryIO | io.BytesIO) -> None:
        out.write(b"[")
        self._text.seek(0)
        while chunk := self._text.read(1 << 20):
            out.write(chunk)
        self._text.seek(0, 2)
        out.write(b"]")


__all__ = ["BLOCK", "CAP", "STEP", "NumberSpool"]
