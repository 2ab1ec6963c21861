"""Search (``ctrl+f``, ``n``/``N``) over the whole file, in the background, when the log has a
file part (:mod:`.logfile`).

The buffer is searched at once, as before. When the next match is not in the buffer before the
search would wrap around (or the current line is in the file part), the rest of the way is a
:class:`~eagle_tui.model.buffers.linewindow.SearchFile` request to the line store: it searches the
file block by block on the session's thread, cancelled by a newer search, while keys go on
answering; the status line says ``searching the file 40%``. Its answer jumps to the match in
the file part, else to the buffer's match past the wrap, else says there is none. The filter
(``/``) stays on the in-memory lines (it hides the file part: see :mod:`.logfile`).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass

from eagle_tui.model.boundary.termtext import Inert
from eagle_tui.model.buffers.linewindow import FileMatch, Reply, SearchFile
from eagle_tui.ui.safety import inert
from eagle_tui.ui.sinks import notify
from eagle_tui.ui.widgets.logfile import FileAnswer, LogFilePart


@dataclass(frozen=True, slots=True)
class _Pending:
    token: int
    query: str
    fallback: int | None  # the buffer's seq to go to if the file has no match
    wrapped: bool  # a match found by this search means it wrapped around
    fallback_wrapped: bool


class LogFileSearch(LogFilePart):
    """:class:`LogFilePart` with the search's file half."""

    @abstractmethod
    def _goto(self, seq: int) -> None:
        """Show the buffered entry ``seq`` as the current line (the view's jump)."""

    def _search_init(self) -> None:
        self._search_token = 0
        self._search: _Pending | None = None
        self._search_progress = 0  # percent

    def file_find(self, forward: bool) -> tuple[bool, bool] | None:
        """``find`` with the file part: ``(found, wrapped)`` when answered from the buffer,
        ``(True, False)`` when the file is being searched (the answer jumps, or notifies);
        None when there is no file part to search (the caller searches the buffer)."""
        b = self.buffer
        rows = self._file_rows
        if not rows or b.search is None or self.file_lines is None or self.file is None:
            return None
        height = self.scrollable_content_region.height
        if self.file_cursor is not None:
            origin = self.file_cursor
        elif b.cursor is not None and (row := b.row_of_seq(b.cursor)) is not None:
            origin = rows + row
        else:
            top = int(self.scroll_y)
            origin = top - 1 if forward else top + height
        in_buffer = origin >= (rows - 1 if forward else rows)
        if in_buffer and b.row_count:
            # from the buffer: its own next match, unless the search would wrap
            r = origin - rows
            if b.cursor is not None and r >= 0:
                seq_origin = b.cursor
            elif r < 0:
                seq_origin = b.dropped - 1
            elif r >= b.row_count:
                seq_origin = b.end_seq
            else:
                seq_origin = b.row(r)[0]
            seq, wrapped = b.find(forward, seq_origin)
            if seq is not None and not wrapped:
                self._goto(seq)
                return True, False
            # forward: past the buffer's end it wraps to line 1 (the file); backward: the
            # file's last lines come before the buffer
            self._file_search(0, rows, not forward, seq, wrapped=forward, fallback_wrapped=True)
            return True, False
        if forward:  # in the file part: on down the file, then into the buffer
            seq, _ = b.find(True, b.dropped - 1) if b.row_count else (None, False)
            self._file_search(origin + 1, rows, False, seq, wrapped=False,
                              fallback_wrapped=False)
        else:  # up the file, then wrapping to the buffer's end
            seq, _ = b.find(False, b.end_seq) if b.row_count else (None, False)
            self._file_search(0, max(0, origin), True, seq, wrapped=False, fallback_wrapped=True)
        return True, False

    def _file_search(self, lo: int, hi: int, backward: bool, fallback: int | None, *,
                     wrapped: bool, fallback_wrapped: bool) -> None:
        window, handle = self.file, self.file_lines
        assert window is not None and handle is not None
        self._search_token += 1
        query = self.buffer.search_text
        self._search = _Pending(self._search_token, query, fallback, wrapped, fallback_wrapped)
        self._search_progress = 0
        handle.request(SearchFile(window.path, window.host, query, lo, hi, backward,
                                  self._search_token), self._post_answer)
        self._post_status()

    def cancel_file_search(self) -> None:
        """The query changed or was cleared: a search under way no longer answers."""
        if self._search is not None:
            self._search = None
            self._post_status()

    def on_file_answer(self, message: FileAnswer) -> None:
        reply = message.reply
        if isinstance(reply, FileMatch):
            self._file_matched(reply)
        else:
            super().on_file_answer(message)

    def _file_matched(self, reply: Reply) -> None:
        assert isinstance(reply, FileMatch)
        pending = self._search
        if pending is None or reply.token != pending.token or not self._is_ours(reply.path,
                                                                                 reply.host):
            return
        if not reply.done:
            self._search_progress = 100 * reply.searched // max(1, reply.total)
            self._post_status()
            return
        self._search = None
        self._post_status()
        if reply.error:
            notify(self.app, inert(f"Searching the file failed: {reply.error}"), severity="warning")
        elif reply.line is not None and self.jump_to_file_line(reply.line + 1):
            if pending.wrapped:
                notify(self.app, Inert("Search wrapped around."), timeout=2)
        elif pending.fallback is not None and pending.fallback >= self.buffer.dropped:
            self._goto(pending.fallback)
            if pending.fallback_wrapped:
                notify(self.app, Inert("Search wrapped around."), timeout=2)
        else:
            notify(self.app, inert(f"No line of the file matches {pending.query!r}."),
                   severity="warning")

    def search_status(self) -> str:
        """The status line's words while the file is searched."""
        if self._search is None:
            return ""
        return f"searching the file {self._search_progress}%"


__all__ = ["LogFileSearch"]
