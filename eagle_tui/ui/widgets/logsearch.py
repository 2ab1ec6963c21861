"""Search (``ctrl+f``, ``n``/``N``) over the whole file, in the background, when the log has a
file part (:mod:`.logfile`).

The buffer is searched at once, as before. When the next match is not in the buffer before the
search would wrap around (or the current line is in the file part), the rest of the way is a
:class:`~eagle_tui.model.buffers.linewindow.SearchFile` request to the line store: it searches the
file block by block on the session's thread, cancelled by a newer search, while keys go on
answering; the status line says ``searching the file 40%``. Its answer jumps to the match in
the file part, else to the buffer's match past the wrap, else says there is none. The filter
(``/``) stays on the in-memory lines (it hides the file part: see :mod:`.logfile`). A plain
object the view holds, working on its :class:`~.logfile.FilePart`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual.widget import Widget

from eagle_tui.model.boundary.termtext import Inert
from eagle_tui.model.buffers.linewindow import FileMatch, SearchFile
from eagle_tui.model.buffers.logbuffer import LogBuffer
from eagle_tui.ui.safety import inert
from eagle_tui.ui.sinks import notify
from eagle_tui.ui.widgets.logfile import FilePart


@dataclass(frozen=True, slots=True)
class _Pending:
    token: int
    query: str
    fallback: int | None  # the buffer's seq to go to if the file has no match
    wrapped: bool  # a match found by this search means it wrapped around
    fallback_wrapped: bool


class Finder:
    """``n``/``N`` for the view ``view`` (where its toasts go): the buffer, then the file.

    ``goto`` shows a buffered entry as the current line, ``jump`` a file line (1-based; False
    when not in the file part), ``status`` tells the status line.
    """

    def __init__(self, view: Widget, buffer: LogBuffer, file: FilePart, *,
                 goto: Callable[[int], None], jump: Callable[[int], bool],
                 status: Callable[[], None]) -> None:
        self.view = view
        self.buffer = buffer
        self.file = file
        self._goto = goto
        self._jump = jump
        self._status = status
        self._token = 0
        self._pending: _Pending | None = None
        self._progress = 0  # percent

    def find(self, forward: bool, top: int, height: int) -> tuple[bool, bool]:
        """Move to the next/previous line matching the search (else the filter) query, the view
        showing ``height`` rows from ``top``.

        Returns ``(found, wrapped)``. Starts after the current hit, or from the top (forward) or
        bottom (backward) of the visible rows.
        """
        b = self.buffer
        in_file = self.file_find(forward, top, height)  # the search goes on into the file part
        if in_file is not None:
            return in_file
        if (b.search or b.filter) is None or not b.lines or not b.row_count:
            return False, False
        if b.cursor is not None:
            origin = b.cursor
        else:
            top = min(max(0, top - self.file.rows), b.row_count - 1)
            bottom = min(top + height - 1, b.row_count - 1)
            origin = b.row(top)[0] - 1 if forward else b.row(max(top, bottom))[0] + 1
        seq, wrapped = b.find(forward, origin)
        if seq is None:
            return False, False
        self._goto(seq)
        return True, wrapped

    def file_find(self, forward: bool, top: int, height: int) -> tuple[bool, bool] | None:
        """:meth:`find` with the file part, the view showing ``height`` rows from ``top``:
        ``(found, wrapped)`` when answered from the buffer, ``(True, False)`` when the file is
        being searched (the answer jumps, or notifies); None when there is no file part to
        search (the caller searches the buffer)."""
        b, file = self.buffer, self.file
        rows = file.rows
        if not rows or b.search is None or file.lines is None or file.window is None:
            return None
        if file.cursor is not None:
            origin = file.cursor
        elif b.cursor is not None and (row := b.row_of_seq(b.cursor)) is not None:
            origin = rows + row
        else:
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
            self._search(0, rows, not forward, seq, wrapped=forward, fallback_wrapped=True)
            return True, False
        if forward:  # in the file part: on down the file, then into the buffer
            seq, _ = b.find(True, b.dropped - 1) if b.row_count else (None, False)
            self._search(origin + 1, rows, False, seq, wrapped=False, fallback_wrapped=False)
        else:  # up the file, then wrapping to the buffer's end
            seq, _ = b.find(False, b.end_seq) if b.row_count else (None, False)
            self._search(0, max(0, origin), True, seq, wrapped=False, fallback_wrapped=True)
        return True, False

    def _search(self, lo: int, hi: int, backward: bool, fallback: int | None, *,
                wrapped: bool, fallback_wrapped: bool) -> None:
        window, handle = self.file.window, self.file.lines
        assert window is not None and handle is not None
        self._token += 1
        query = self.buffer.search_text
        self._pending = _Pending(self._token, query, fallback, wrapped, fallback_wrapped)
        self._progress = 0
        handle.request(SearchFile(window.path, window.host, query, lo, hi, backward,
                                  self._token), self.file.post)
        self._status()

    def cancel(self) -> None:
        """The query changed or was cleared: a search under way no longer answers."""
        if self._pending is not None:
            self._pending = None
            self._status()

    def matched(self, reply: FileMatch) -> None:
        """The line store's answer (progress, or the search's end) on the UI thread."""
        pending = self._pending
        if (pending is None or reply.token != pending.token
                or not self.file.is_ours(reply.path, reply.host)):
            return
        if not reply.done:
            self._progress = 100 * reply.searched // max(1, reply.total)
            self._status()
            return
        self._pending = None
        self._status()
        app = self.view.app
        if reply.error:
            notify(app, inert(f"Searching the file failed: {reply.error}"), severity="warning")
        elif reply.line is not None and self._jump(reply.line + 1):
            if pending.wrapped:
                notify(app, Inert("Search wrapped around."), timeout=2)
        elif pending.fallback is not None and pending.fallback >= self.buffer.dropped:
            self._goto(pending.fallback)
            if pending.fallback_wrapped:
                notify(app, Inert("Search wrapped around."), timeout=2)
        else:
            notify(app, inert(f"No line of the file matches {pending.query!r}."),
                   severity="warning")

    def status(self) -> str:
        """The status line's words while the file is searched."""
        if self._pending is None:
            return ""
        return f"searching the file {self._progress}%"


__all__ = ["Finder"]
