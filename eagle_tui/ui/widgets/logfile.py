"""The log view's file part: rows above the in-memory buffer, read from the log file on demand.

A log opened at its end (``LogOpened`` with ``start > 0``) holds only its tail in memory. Once
the number of lines before the tail is known (``LogPrefixCounted``, or the line store's own
index count), the view shows that many rows above the buffer, plus the tail lines the buffer
has since pruned: scrolling up past the oldest buffered line goes on, line by line, to line 1
of the file, and ``Home`` goes there at once.

The view does no I/O: the rows on screen (and :data:`~eagle_tui.model.buffers.linewindow.
PREFETCH_ROWS` around them) that are not read yet are asked for with ``request(intent,
reply)`` on the :class:`FileLines` handle the app gives (the line store,
``sources/linestore.py``, on the session's thread); a row shows a placeholder until its answer
comes back as a :class:`FileAnswer` message, and is then drawn like a buffered line (the same
sanitizing, kinds and highlighting). Decoded lines are kept in a :class:`~eagle_tui.model.
linewindow.FileWindow`, bounded in bytes.

When there is no file part: a replay, stdin, a log shorter than its tail (``start == 0``), no
handle (tests, a record file), a multi-node log (the hosts' lines interleave in the buffer) and
while a filter or a host selection narrows the rows: filter and search cover the in-memory
lines only, and the status line says so ("filter: last N lines"). eagle-tui's own polls are
folded in the buffer only; the file part shows the file as it is. With wrap on, file rows are
not wrapped (a row per line, cut at the view's width).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from rich.cells import cell_len
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip

from eagle_tui.model.buffers.linewindow import (
    PREFETCH_ROWS,
    FileWindow,
    IndexFile,
    IndexProgress,
    Intent,
    LinesRead,
    Reply,
)
from eagle_tui.model.events import LogLine, LogOpened, LogPrefixCounted
from eagle_tui.ui.widgets.logrender import LogRender


class FileLines(Protocol):
    """What the view needs of the line store: one request, answered (later, on any thread)
    through ``reply``."""

    def request(self, intent: Intent, reply: Callable[[Reply], None]) -> None: ...


class FileAnswer(Message):
    """A line store's answer, posted to the view from the store's thread."""

    def __init__(self, reply: Reply) -> None:
        super().__init__()
        self.reply = reply


class LogFilePart(LogRender):
    """:class:`LogRender` with the file part's rows above the buffer's."""

    file_lines: FileLines | None = None  # the app's handle (None: no file part)

    def _file_init(self) -> None:
        self.file: FileWindow | None = None
        self.file_cursor: int | None = None  # a jump's target in the file part (0-based)
        self._file_rows = 0

    def jump_to_file_line(self, line: int) -> bool:
        """Show the file's line ``line`` (1-based, the file's own number) when it lies in the
        file part (above the buffer), marked as a jump's target; False if it does not."""
        if not 1 <= line <= self._file_rows:
            return False
        self.follow = False
        self.buffer.cursor = None
        self.file_cursor = line - 1
        self._cache.clear()
        self._scroll_to_row(line - 1)
        self.refresh()
        self._post_status()
        return True

    # ------------------------------------------------------------------ what the rows are
    @property
    def file_rows(self) -> int:
        return self._file_rows

    def _file_line(self, line: int) -> LogLine | None:
        return self.file.line(line) if self.file is not None else None

    @property
    def _file_target(self) -> int | None:
        return self.file_cursor

    def _count_file_rows(self) -> int:
        """Lines of the file before the oldest buffered one, when the file part is shown."""
        f, b = self.file, self.buffer
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

    def _recount_file(self) -> int:
        """Recount the file rows; returns by how many they changed."""
        old, self._file_rows = self._file_rows, self._count_file_rows()
        return self._file_rows - old

    # ------------------------------------------------------------------ events from the batch
    def file_event(self, ev: LogOpened | LogPrefixCounted) -> None:
        """A log was opened at its end, or its lines before the tail were counted."""
        if isinstance(ev, LogOpened):
            f = self.file
            if f is not None and f.host != ev.host:
                return  # a second host's log: the file part stays the first's (see above)
            if f is not None and (f.path, f.start) == (ev.path, ev.start):
                return  # the same opening again (a reconnect): the index still holds
            self._close_file()
            if ev.start <= 0 or self.file_lines is None:
                return
            self.file = FileWindow(ev.path, ev.host, ev.start)
            self.file_lines.request(IndexFile(ev.path, ev.host, ev.start), self._post_answer)
        elif self._is_ours(ev.path, ev.host):
            assert self.file is not None
            self.file.prefix = ev.lines
            self._file_changed()

    def file_restarted(self, host: str) -> None:
        """The file was truncated or replaced: its old lines are gone from it."""
        if self.file is not None and self.file.host == host:
            self._close_file()

    def _close_file(self) -> None:
        if self.file is not None:
            self.file = None
            self._file_changed()

    def _is_ours(self, path: str, host: str) -> bool:
        return self.file is not None and (self.file.path, self.file.host) == (path, host)

    def _post_answer(self, reply: Reply) -> None:
        """On the store's thread: hand the answer to the UI (``post_message`` is thread-safe)."""
        self.post_message(FileAnswer(reply))

    def on_file_answer(self, message: FileAnswer) -> None:
        reply = message.reply
        window = self.file
        if window is None or not self._is_ours(reply.path, reply.host):
            return
        if isinstance(reply, IndexProgress):
            window.progress = reply
            if reply.error:
                window.error = reply.error
            elif reply.done and window.prefix is None:
                window.prefix = reply.lines
                self._file_changed()
            self._post_status()
        elif isinstance(reply, LinesRead) and window.fill(reply):
            if not self.buffer.wrap and reply.lines:
                widest = max(cell_len(e.text) for e in reply.lines)
                if widest > self._max_width:
                    self._max_width = widest
                    self._update_virtual_size()
            self.refresh()
        elif isinstance(reply, LinesRead) and reply.error:
            self._post_status()

    def _file_changed(self) -> None:
        """The file part appeared, went or changed size: keep the view where it was."""
        shift = self._recount_file()
        if not shift:
            return
        self._update_virtual_size()
        if self.follow:
            self._scroll_to_row(None)
        else:
            self._set_scroll(max(0.0, self.scroll_y + shift))
        self.refresh()
        self._post_status()

    # ------------------------------------------------------------------ asking for rows
    def render_lines(self, crop: Region) -> list[Strip]:
        self._ask_for_rows()
        return super().render_lines(crop)

    def _ask_for_rows(self) -> None:
        """Ask for the file rows on screen (and around them) that nobody asked for yet."""
        window, rows, handle = self.file, self._file_rows, self.file_lines
        if window is None or not rows or handle is None:
            return
        top = int(self.scroll_y)
        if top >= rows + PREFETCH_ROWS:
            return
        height = self.scrollable_content_region.height
        lo = max(0, top - PREFETCH_ROWS)
        hi = min(rows, top + height + PREFETCH_ROWS)
        for intent in window.wanted(lo, hi, limit=rows):
            handle.request(intent, self._post_answer)

    # ------------------------------------------------------------------ for the status line
    def search_status(self) -> str:
        """A search of the file under way, in words (see ``logsearch.py``)."""
        return ""

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._file_rows and not self.follow:  # "line N of M (file)" follows the scroll
            self._post_status()

    def file_status(self) -> tuple[int | None, str, int | None]:
        """``(prefix, scrollback, at_line)`` for :class:`~.logtext.LogStatus`."""
        window = self.file
        if window is None:
            return None, "", None
        state = self.search_status()
        if window.error:
            state = f"file unreadable: {window.error}"
        elif window.prefix is None and not state:
            p = window.progress
            pct = 100 * p.scanned // max(1, p.start) if p is not None else 0
            state = f"indexing the file {pct}%"
        at = None
        if not self.follow and self._file_rows and self.scroll_y < self._file_rows:
            at = int(self.scroll_y) + 1
        return window.prefix, state, at


__all__ = ["FileAnswer", "FileLines", "LogFilePart"]
