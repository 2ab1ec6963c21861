"""Whole lines of a buffer: where the lines a bulk pass must leave out are (:func:`split_lines`).

Kept apart from :mod:`.parser` (which re-exports these) so that the report's worker processes,
which only cut runs of lines, start without importing the parser, the events and the engines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from itertools import chain

MAX_LINE_BYTES = 1 << 20  # the one cut: a "line" longer than this is cut (bounded memory)


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


# the newlines where a pattern matches: ``(buf, lo, hi, pattern)`` → positions (``split_lines``)
Starts = Callable[[bytes | bytearray, int, int, re.Pattern[bytes]], Iterable[int]]


def split_lines(buf: bytes | bytearray, start: int, end: int, special: re.Pattern[bytes],
                starts: Starts | None = None) -> Iterator[tuple[int, int, bool]]:
    """The complete lines of ``buf[start:end]`` (``end`` just past a newline), in order.

    ``special`` matches at a newline whose following line must be handled alone (such as
    ``\\n(?!BULK)``); lines holding ESC or CR always are. Yields ``(a, b, True)`` for such a
    line ``buf[a:b]`` (newline excluded) and ``(a, b, False)`` for each run ``buf[a:b]`` of other
    lines (whole lines). One regex pass finds them all, however long the runs:
    ``special.finditer``, or ``starts(buf, lo, hi, special)``, which must yield the same
    positions (a faster scan of the caller's).
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
    found = (m.start() for m in special.finditer(buf, lo, end - 1)) if starts is None else \
        starts(buf, lo, end - 1, special)
    for at in chain(found, (-1,)):
        s = end if at < 0 else at + 1
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


__all__ = ["MAX_LINE_BYTES", "Starts", "odd_lines", "split_lines"]
