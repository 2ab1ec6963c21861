"""Server-sent events split into lines with a length cap: an endless line costs bounded memory.

httpx's ``aiter_lines`` keeps an unterminated line in memory until its newline comes: a server
that streams one ``data:`` line without end grew ``bench`` to 2 GB. :class:`SseLines` is fed the
raw chunks and gives back the complete lines; a line longer than ``max_line`` bytes is dropped as
it arrives (what came of it is freed, the rest is skipped up to its newline) and given once as
``None``, so the caller can refuse the stream with a note. Each chunk is scanned once: linear.
"""

from __future__ import annotations

MAX_SSE_LINE = 1 << 20  # an event of a streamed completion is < 10 KB (a chunk of text + usage)


class SseLines:
    """Incremental splitter: :meth:`feed` chunks, get complete lines (``None``: one over-long)."""

    def __init__(self, max_line: int = MAX_SSE_LINE) -> None:
        self.max_line = max_line
        self._part = bytearray()
        self._skipping = False  # inside an over-long line: drop bytes up to its newline

    def feed(self, chunk: bytes) -> list[str | None]:
        out: list[str | None] = []
        start = 0
        while (nl := chunk.find(b"\n", start)) >= 0:
            if self._skipping:
                self._skipping = False
            elif len(self._part) + nl - start > self.max_line:
                out.append(None)
            else:
                self._part += chunk[start:nl]
                out.append(self._part.rstrip(b"\r").decode("utf-8", "replace"))
            self._part.clear()
            start = nl + 1
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
        line = self._part.rstrip(b"\r").decode("utf-8", "replace")
        self._part.clear()
        return [line] if line else []


__all__ = ["MAX_SSE_LINE", "SseLines"]
