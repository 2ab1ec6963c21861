"""Reading a log for ``report``: the serial chunk reader and the parallel report's cuts.

The report reads a log in big chunks of whole lines into one reused buffer
(:func:`read_chunks`); every line follows a newline in that buffer, which is what the bulk
passes of :mod:`.builder` and :mod:`.chunk_summary` rely on. The parallel report
(:mod:`.parallel`) cuts a regular file where this reader would (:func:`plan`, a few small reads
near each cut) so that its chunks, and hence its report's bytes, are the serial ones; its
processes read those chunks with ``pread`` (:func:`read_at`: no shared file position).

This is the report's file I/O; the parsing it feeds is pure and lives in ``eagle_tui.model``.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

from eagle_tui.model.ingest.lines import MAX_LINE_BYTES

CHUNK = 4 << 20  # bytes read per chunk (the buffer is reused; it grows only for a longer line)
_SCAN = 1 << 16  # bytes ``plan`` reads at a time, backwards, to find a cut

Chunk = tuple[int, int]  # (file offset, length): whole lines, as the serial reader yields them


def read_chunks(stream: BinaryIO, size: int) -> Iterator[tuple[bytearray, int, bool]]:
    """Read ``stream`` to the end, ``size`` bytes at a time, into one reused buffer.

    Yields ``(buf, end, False)`` where ``buf[1:end]`` is whole lines and ``buf[0]`` a newline, so
    that every line follows one (the buffer changes after the next step: use it before);
    then ``(buf, end, True)`` if the stream ends with a line ``buf[1:end]`` lacking its newline.
    No allocation or copy per chunk but the read itself; the buffer grows only for a line
    longer than it (never past ``MAX_LINE_BYTES``: longer lines are cut as the live framer cuts
    them, :func:`cut_long_lines`), and is smaller for a small regular file.
    """
    with contextlib.suppress(AttributeError, OSError, ValueError):
        st = os.fstat(stream.fileno())
        if stat.S_ISREG(st.st_mode):
            size = max(min(size, st.st_size + 1), 1 << 16)
    buf = bytearray(size + 1)
    buf[0] = 0x0A
    filled = 1
    while True:
        if filled == len(buf):  # one line longer than the buffer
            buf.extend(bytes(len(buf)))
        top = _fill(stream, buf, filled)
        end_of_stream = top < len(buf)
        top = cut_long_lines(buf, 1, top)  # (a cut inserts a newline: ``buf`` grows with it)
        cut = buf.rfind(b"\n", 1, top) + 1
        if cut:
            yield buf, cut, False
            rest = top - cut
            buf[1 : 1 + rest] = buf[cut:top]
            filled = 1 + rest
        else:
            filled = top
        if end_of_stream:
            break
    if filled > 1:
        yield buf, filled, True


def cut_long_lines(buf: bytearray, start: int, end: int, max_line: int = MAX_LINE_BYTES) -> int:
    """Cut every line of ``buf[start:end]`` (``start`` is a line start) longer than
    ``max_line`` bytes where ``framing.LineFramer`` cuts it, by inserting a newline there;
    return the new ``end``. So ``report`` sees the lines the dashboard sees, and no buffer holds
    more than one cut line of a file without newlines (``/dev/zero``, a sparse file). One
    ``rfind`` per ``max_line`` bytes: nearly free on a log of short lines."""
    pos = start
    while end - pos > max_line:
        nl = buf.rfind(b"\n", pos, pos + max_line + 1)
        if nl >= 0:
            pos = nl + 1
            continue
        at = pos + max_line
        while at > pos + max_line - 3 and buf[at] & 0xC0 == 0x80:  # not inside a character
            at -= 1
        buf[at:at] = b"\n"
        end += 1
        pos = at + 1
    return end


def _fill(stream: BinaryIO, buf: bytearray, filled: int) -> int:
    """Read into ``buf[filled:]`` until it is full or the stream ends; return the new fill."""
    readinto = getattr(stream, "readinto", None)
    while filled < len(buf):
        if readinto is not None:
            with memoryview(buf) as view, view[filled:] as free:
                n = readinto(free)
        else:
            data = stream.read(len(buf) - filled)
            n = len(data)
            buf[filled : filled + n] = data
        if not n:
            break
        filled += n
    return filled


def buffer_size(st_size: int, chunk: int = CHUNK) -> int:
    """The length of :func:`read_chunks`'s buffer for a regular file of ``st_size`` bytes
    (its formula; a test checks :func:`plan` against the reader itself)."""
    return max(min(chunk, st_size + 1), 1 << 16) + 1


def plan(fd: int, size: int, chunk: int = CHUNK) -> tuple[list[Chunk], int] | None:
    """The chunks ``read_chunks(stream, chunk)`` yields for the first ``size`` bytes of ``fd``
    while its buffer fills, then the whole lines left after them as one more chunk; and the
    offset of the rest: a last line without its newline, which the serial reader reads. ``None``
    when a line is longer than the buffer (the reader grows it; such a log is read serially).

    The reader's buffer holds a newline and then ``window = length - 1`` bytes of the file from
    the start of the pending line; each step yields up to the last newline in it. The chunks
    only need to be whole lines that fit the buffer (a report is the same however its lines are
    cut); following the reader keeps them as even as it makes them.
    """
    window = buffer_size(size, chunk) - 1
    chunks: list[Chunk] = []
    p = 0
    while p < size:
        nl = _last_newline(fd, p, min(p + window, size))
        if nl is None or (nl < 0 and size - p >= window):  # shrank, or a line too long
            return None
        if nl < 0:  # the rest is one line without its newline
            break
        chunks.append((p, nl + 1 - p))
        p = nl + 1
    return chunks, p


def _last_newline(fd: int, p: int, top: int) -> int | None:
    """The offset of the last newline in ``fd``'s bytes ``[p, top)``, -1 if none, ``None`` if
    the file is shorter than ``top`` (it shrank: let the serial path read it)."""
    while top > p:
        lo = max(p, top - _SCAN)
        data = os.pread(fd, top - lo, lo)
        if len(data) != top - lo:
            return None
        i = data.rfind(b"\n")
        if i >= 0:
            return lo + i
        top = lo
    return -1


def read_at(fd: int, buf: bytearray, offset: int, n: int, at: int = 1) -> None:
    """``buf[at:at + n]`` = ``n`` bytes of ``fd`` at ``offset`` (no shared file position: parent
    and workers read the same descriptor at once)."""
    view = memoryview(buf)
    got = 0
    try:
        while got < n:
            k = os.preadv(fd, [view[at + got : at + n]], offset + got)
            if k <= 0:
                raise OSError(f"the log shrank while it was read (at byte {offset + got})")
            got += k
    finally:
        view.release()


def chunk_bytes(fd: int, offset: int, n: int) -> bytearray:
    """The chunk ``(offset, n)`` as :func:`read_chunks` yields it: a newline, then its lines."""
    buf = bytearray(n + 1)
    buf[0] = 0x0A
    read_at(fd, buf, offset, n)
    cut_long_lines(buf, 1, n + 1)
    return buf


__all__ = ["CHUNK", "Chunk", "buffer_size", "chunk_bytes", "cut_long_lines", "plan", "read_at",
           "read_chunks"]
