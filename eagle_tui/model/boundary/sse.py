"""Server-sent events split into lines with a length cap: an endless line costs bounded memory.

httpx's ``aiter_lines`` keeps an unterminated line in memory until its newline comes: a server that
streams one ``data:`` line without end grows ``bench`` without limit. :class:`SseLines` is fed the
raw chunks and gives back the complete lines; a line longer than ``max_line`` bytes is dropped as it
arrives (what came of it is freed, the rest is skipped up to its newline) and given once as
``None``, so the caller can refuse the stream with a note. Each chunk is scanned once: linear.

A line ends at CRLF, LF or a lone CR, as the SSE grammar says (a server that ends its lines with
CR alone had all its events run together into one line); a CRLF split between two chunks is
one line end, never an extra blank line that would end an event early.
"""

from __future__ import annotations

import re

_EOL = re.compile(rb"\r\n?|\n")

MAX_SSE_LINE = 1 << 20  # an event of a streamed completion is < 10 KB (a chunk of text + usage)


class SseLines:
    """Incremental splitter: :meth:`feed` chunks, get complete lines (``None``: one over-long)."""

    def __init__(self, max_line: int = MAX_SSE_LINE) -> None:
        self.max_line = max_line
        self._part = bytearray()
        self._skipping = False  # inside an over-long line: drop bytes up to its newline
        self._cr = False  # the last chunk ended in CR: a LF first in the next one is its pair

    def feed(self, chunk: bytes) -> list[str | None]:
        out: list[str | None] = []
        if not chunk:
            return out
        start = 1 if self._cr and chunk.startswith(b"\n") else 0
        self._cr = chunk.endswith(b"\r")
        for eol in _EOL.finditer(chunk, start):
            nl = eol.start()
            if self._skipping:
                self._skipping = False
            elif len(self._part) + nl - start > self.max_line:
                out.append(None)
            else:
                self._part += chunk[start:nl]
                out.append(self._part.decode("utf-8", "replace"))
            self._part.clear()
            start = eol.end()
        if not self._skipping:
            if len(self._part) + len(chunk) - start > self.max_line:
                self._part.clear()
                self._skipping = True
                out.append(None)
            else:
                self._part += chunk[start:]
        return out

    def finish(self) -> list[str | None]:
        """The last line when the stream ends without a newline."""
        line = self._part.decode("utf-8", "replace")
        self._part.clear()
        return [line] if line else []


__all__ = ["MAX_SSE_LINE", "SseLines"]
