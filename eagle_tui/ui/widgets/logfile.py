"""The log view's file part: rows above the in-memory buffer, read from the log file on demand.

A log opened at its end holds only its tail in memory; once the lines before the tail are
counted, the view shows that many rows above the buffer (plus the tail lines the buffer has
since pruned), down to line 1 of the file. A plain object the view holds; it does no I/O: rows
not read yet are asked for through the :class:`FileLines` handle the app gives (the line store,
on the session's thread), show a placeholder until the answer comes back as a
:class:`FileAnswer` message, and are then drawn like buffered lines.

When there is no file part, and the reasons: docs/architecture.md, "Module notes",
``ui/widgets/logfile``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from textual.message import Message

from eagle_tui.model.buffers.linewindow import (
    PREFETCH_ROWS,
    FileWindow,
    IndexFile,
    IndexProgress,
    Intent,
    LinesRead,
    Reply,
)
from eagle_tui.model.buffers.logbuffer import LogBuffer
from eagle_tui.model.events import LogLine, LogOpened, LogPrefixCounted


class FileLines(Protocol):
    """What the view needs of the line store: one request, answered (later, on any thread)
    through ``reply``."""

    def request(self, intent: Intent, reply: Callable[[Reply], None]) -> None: ...


class FileAnswer(Message):
    """A line store's answer, posted to the view from the store's thread."""

    def __init__(self, reply: Reply) -> None:
        super().__init__()
        self.reply = reply


class FilePart:
    """The rows above ``buffer``'s: what they are, when they change, and asking for them.

    ``post`` hands a store's answer to the UI thread (the view posts a :class:`FileAnswer`);
    ``changed`` gets by how many rows the part grew when it appeared, went or was recounted
    (the view keeps its place);
    ``status`` when the status line's words about the file may have changed; ``filled`` when
    lines were read (the view may widen and repaints).
    """

    def __init__(self, buffer: LogBuffer, *, post: Callable[[Reply], None],
                 changed: Callable[[int], None], status: Callable[[], None],
                 filled: Callable[[Sequence[LogLine]], None]) -> None:
        self.buffer = buffer
        self.lines: FileLines | None = None  # the app's handle (None: no file part)
        self.window: FileWindow | None = None
        self.cursor: int | None = None  # a jump's target in the file part (0-based)
        self.rows = 0
        self.post = post
        self._changed = changed
        self._status = status
        self._filled = filled

    def line(self, line: int) -> LogLine | None:
        """The file's 0-based line ``line``, None while it is being read."""
        return self.window.line(line) if self.window is not None else None

    def _count(self) -> int:
        """Lines of the file before the oldest buffered one, when the file part is shown."""
        f, b = self.window, self.buffer
        # (the fold of eagle-tui's own polls applies to the buffer only: the file part shows
        # the file as it is, else a --url run, whose log always has them, had no file part)
        if (f is None or f.prefix is None or b.filter is not None
                or b.hosts.selected is not None or b.hosts.multi):
            return 0
        if b.lines:
            first = b.lines[0]
            before = first.lineno if b.dropped in b.special else first.lineno - 1
        else:
            before = b.hosts.stream
        return max(0, f.prefix + before)

    def recount(self) -> int:
        """Recount the file rows; returns by how many they changed."""
        old, self.rows = self.rows, self._count()
        return self.rows - old

    def _recounted(self) -> None:
        """The part appeared, went or changed: recount, and tell the view if the rows moved."""
        shift = self.recount()
        if shift:
            self._changed(shift)

    # ------------------------------------------------------------------ events from the batch
    def event(self, ev: LogOpened | LogPrefixCounted) -> None:
        """A log was opened at its end, or its lines before the tail were counted."""
        if isinstance(ev, LogOpened):
            f = self.window
            if f is not None and f.host != ev.host:
                return  # a second host's log: the file part stays the first's (see above)
            if f is not None and (f.path, f.start) == (ev.path, ev.start):
                return  # the same opening again (a reconnect): the index still holds
            self.close()
            if ev.start <= 0 or self.lines is None:
                return
            self.window = FileWindow(ev.path, ev.host, ev.start)
            self.lines.request(IndexFile(ev.path, ev.host, ev.start), self.post)
        elif self.is_ours(ev.path, ev.host):
            assert self.window is not None
            self.window.prefix = ev.lines
            self._recounted()

    def restarted(self, host: str) -> None:
        """The file was truncated or replaced: its old lines are gone from it."""
        if self.window is not None and self.window.host == host:
            self.close()

    def close(self) -> None:
        if self.window is not None:
            self.window = None
            self._recounted()

    def is_ours(self, path: str, host: str) -> bool:
        return self.window is not None and (self.window.path, self.window.host) == (path, host)

    def answer(self, reply: Reply) -> None:
        """A line store's answer (an index's progress or lines read) on the UI thread."""
        window = self.window
        if window is None or not self.is_ours(reply.path, reply.host):
            return
        if isinstance(reply, IndexProgress):
            window.progress = reply
            if reply.error:
                window.error = reply.error
            elif reply.done and window.prefix is None:
                window.prefix = reply.lines
                self._recounted()
            self._status()
        elif isinstance(reply, LinesRead) and window.fill(reply):
            self._filled(reply.lines)
        elif isinstance(reply, LinesRead) and reply.error:
            self._status()

    # ------------------------------------------------------------------ asking for rows
    def ask_for_rows(self, top: int, height: int) -> None:
        """Ask for the file rows on screen (``height`` rows from ``top``) and around them that
        nobody asked for yet."""
        window, rows, handle = self.window, self.rows, self.lines
        if window is None or not rows or handle is None:
            return
        if top >= rows + PREFETCH_ROWS:
            return
        lo = max(0, top - PREFETCH_ROWS)
        hi = min(rows, top + height + PREFETCH_ROWS)
        for intent in window.wanted(lo, hi, limit=rows):
            handle.request(intent, self.post)

    # ------------------------------------------------------------------ for the status line
    def status(self, searching: str, follow: bool,
               scroll_y: float) -> tuple[int | None, str, int | None]:
        """``(prefix, scrollback, at_line)`` for :class:`~.logtext.LogStatus`; ``searching``:
        a search of the file under way, in words (see ``logsearch.py``)."""
        window = self.window
        if window is None:
            return None, "", None
        state = searching
        if window.error:
            state = f"file unreadable: {window.error}"
        elif window.prefix is None and not state:
            p = window.progress
            pct = 100 * p.scanned // max(1, p.start) if p is not None else 0
            state = f"indexing the file {pct}%"
        at = None
        if not follow and self.rows and scroll_y < self.rows:
            at = int(scroll_y) + 1
        return window.prefix, state, at


__all__ = ["FileAnswer", "FileLines", "FilePart"]
