"""The live log: a Line-API ``ScrollView`` that shows the model's log buffer.

Modelled on Textual's own ``widgets/_log.py``: lines are kept as the parser's ``LogLine`` objects
(no copy, no pre-rendering) and only the rows on screen are highlighted and rendered, through an
LRU cache of strips. That is what keeps a 50k lines/s log cheap: appending is a list extend plus a
bounded prune, whatever the rate.

What the log *knows* (entries, pruning, the row table, filter, search cursor, hosts, the first
error) is the model's buffer, pure and tested on its own. The view is three layers: it scrolls
(:class:`~eagle_tui.ui.widgets.logscroll.LogScroll`: follow/pause, throttled repaints), draws
rows (:class:`~eagle_tui.ui.widgets.logrender.LogRender`), and here feeds the buffer and handles
keys. Text is trusted: ``LogLine`` text is sanitized once, by the parser, so the view does not
re-check it (the separator texts made here go through :func:`inert`).

Hosts: a multi-node run's lines share the one buffer; showing one host is a row-table filter like
the text filter (the buffer and its bound are unchanged), and while all hosts are shown each row
gets a short host tag drawn at render time (:class:`~eagle_tui.ui.widgets.logtext.HostTags`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rich.cells import cell_len
from textual.message import Message

from eagle_tui.model.buffers.linewindow import placeholder
from eagle_tui.model.buffers.logbuffer import Appended, LogBuffer
from eagle_tui.model.events import LogLine
from eagle_tui.ui.frames import FRAME_INTERVAL
from eagle_tui.ui.highlight import HighlightRule
from eagle_tui.ui.safety import inert
from eagle_tui.ui.widgets.logsearch import LogFileSearch
from eagle_tui.ui.widgets.logtext import LogStatus, wrap_cuts, write_lines
from eagle_tui.userpattern import compile_query


class LogView(LogFileSearch, can_focus=True):
    """Bounded, lazily highlighted log view. Feed it with :meth:`append`."""

    class StatusChanged(Message):
        def __init__(self, status: LogStatus) -> None:
            super().__init__()
            self.status = status

    def __init__(
        self,
        max_lines: int = 10_000,
        rules: Sequence[HighlightRule] = (),
        *,
        buffer: LogBuffer | None = None,
        frame_interval: float = FRAME_INTERVAL,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        if buffer is None:
            buffer = LogBuffer(max_lines)
        buffer.compile = compile_query  # what is typed in the view's boxes: RE2, never ``re``
        super().__init__(buffer, rules, frame_interval=frame_interval, id=id, classes=classes)
        self._file_init()
        self._search_init()
        self._markers = 0
        self._last_status: LogStatus | None = None
        self.status_sink: Callable[[LogStatus], None] | None = None

    # ------------------------------------------------------------------ queries
    @property
    def max_lines(self) -> int:
        return self.buffer.max_lines

    @property
    def skipped(self) -> int:
        """Lines never buffered because a batch exceeded max_lines."""
        return self.buffer.skipped

    @property
    def line_count(self) -> int:
        return self.buffer.line_count

    @property
    def wrap(self) -> bool:
        return self.buffer.wrap

    @property
    def filter_text(self) -> str:
        return self.buffer.filter_text

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts of the buffered lines, in order of first sight (empty for a local log)."""
        return tuple(self.buffer.hosts.seen)

    @property
    def host(self) -> str | None:
        """The one host shown, or None for all."""
        return self.buffer.hosts.selected

    @property
    def search_text(self) -> str:
        return self.buffer.search_text

    @property
    def cursor_lineno(self) -> int | None:
        return self.buffer.cursor_lineno

    def entries(self) -> tuple[LogLine, ...]:
        """The buffered lines (sanitized), oldest first."""
        return tuple(self.buffer.lines)

    def texts(self) -> list[str]:
        """The buffered lines' text (sanitized), oldest first."""
        return [e.text for e in self.buffer.lines]

    def row_text(self, y: int) -> str:
        """Plain text of screen row ``y`` of the virtual view (for tests and search)."""
        rows = self._file_rows
        if y < rows:
            entry = self._file_line(y)
            return entry.text if entry is not None else placeholder(y).text
        return self.buffer.row_text(y - rows)

    def status(self) -> LogStatus:
        b = self.buffer
        prefix, scrollback, at_line = self.file_status()
        return LogStatus(
            follow=self.follow,
            unseen=self.unseen,
            total=b.line_count,
            shown=b.row_count if b.narrowed else b.line_count,
            filter=b.filter_text,
            search=b.search_text,
            refused=b.filter_error or b.search_error,
            wrap=b.wrap,
            dropped=b.dropped + b.skipped,
            stream=b.hosts.stream,
            host=b.hosts.selected,
            hosts=len(b.hosts.seen),
            own=b.own_lines,
            own_shown=not b.fold_own,
            prefix=prefix,
            scrollback=scrollback,
            at_line=at_line,
            file_rows=self._file_rows,
        )

    # ------------------------------------------------------------------ feeding
    def append(self, lines: Sequence[LogLine]) -> None:
        """Append a batch of lines (one call per session batch, never per line)."""
        done = self.buffer.append(lines, self._hosts_changed)
        if done is not None:
            self._appended(done)

    def add_separator(self, text: str, host: str = "") -> None:
        """A full-width marker row (user marker, "log restarted") that is part of the buffer;
        ``host`` is the host it is about ("": shown whichever host is selected)."""
        self._appended(self.buffer.add_special(inert(text), host))

    def add_marker(self, label: str) -> int:
        self._markers += 1
        self.add_separator(f"──── marker {self._markers} · {label} ────")
        return self._markers

    def _hosts_changed(self) -> None:
        """A second host (or a new selection): the tag column changes, so wrapped rows narrow."""
        self._tags.update(self.buffer.hosts)
        if self.buffer.wrap:
            self.buffer.wrap_width = self._text_width()

    def _appended(self, done: Appended) -> None:
        lines = self.buffer.lines
        new = lines[max(0, done.first_seq - self.buffer.dropped):]
        if new:
            widest = max(len(t) if t.isascii() else cell_len(t) for t in (e.text for e in new))
            self._max_width = max(self._max_width, widest)
        if done.new_host:
            self._cache.clear()
        # pruned lines move from the buffer to the file part: a paused view stays put
        shift = self._recount_file() - done.removed_rows
        self._quiet = True  # the scroll below repaints through _request_paint, throttled
        try:
            self._update_virtual_size()
            if self.follow:
                self._scroll_to_row(None)
            else:
                self.unseen += done.added_rows
                if shift:
                    self._set_scroll(max(0.0, self.scroll_y + shift))
        finally:
            self._quiet = False
        self._request_paint()

    # ------------------------------------------------------------------ status
    @property
    def last_status(self) -> LogStatus | None:
        """The status last sent to the sink (or posted)."""
        return self._last_status

    def _post_status(self) -> None:
        """Tell the pane's status line, at once when it gave a sink, else by a message.

        The message takes a few hops (this view's queue, the parent's) before the status line
        repaints, and the screen update in between then ran twice per streaming frame: once
        for the rows, once for the status line under them. A sink repaints both in one pass.
        """
        status = self.status()
        if status != self._last_status:
            self._last_status = status
            if self.status_sink is not None:
                self.status_sink(status)
            else:
                self.post_message(self.StatusChanged(status))

    def _followed(self) -> None:
        self.buffer.cursor = None
        self.file_cursor = None
        self._cache.clear()

    # ------------------------------------------------------------------ filter, search, jumps
    def _rows_changed(self) -> None:
        self._cache.clear()
        self._recount_file()  # a filter hides the file part, clearing it shows it again
        self._update_virtual_size()

    def set_filter(self, query: str) -> None:
        """Show only lines matching ``query`` (regex or literal, smart case); "" shows all.

        The same query again changes nothing (``Esc`` on an empty filter box must not rebuild
        the rows and re-highlight every visible line)."""
        if not self.buffer.set_filter(query):
            return
        self._rows_changed()
        self._reposition(self.buffer.cursor)

    @property
    def fold_own(self) -> bool:
        return self.buffer.fold_own

    def set_fold_own(self, fold: bool) -> None:
        """Fold (hide) or show eagle-tui's own /health, /metrics, /server_info access lines."""
        if not self.buffer.set_fold_own(fold):
            return
        self._rows_changed()
        self._reposition(self.buffer.cursor)

    def set_host(self, host: str | None) -> None:
        """Show only the lines of ``host`` (one of :attr:`hosts`); ``None`` shows every host."""
        self.buffer.select_host(host)
        self._retag()
        self._reposition(self.buffer.cursor)

    def cycle_host(self) -> str | None:
        """All hosts → first host → ... → last host → all hosts; returns the new selection."""
        self.set_host(self.buffer.hosts.following())
        return self.buffer.hosts.selected

    def _retag(self) -> None:
        """The tag column or the host selection changed: new wrap width, rows and strips."""
        self._hosts_changed()
        self.buffer.rebuild_rows()
        self._rows_changed()

    def _text_width(self) -> int:
        return max(1, self.scrollable_content_region.width - self._tags.width)

    def _reposition(self, anchor: int | None) -> None:
        """After the rows changed: stay at the end when following, else keep ``anchor`` shown."""
        if self.follow:
            self._scroll_to_row(None)
        elif anchor is not None and (row := self.buffer.row_of_seq(anchor)) is not None:
            self._scroll_to_row(self._file_rows + row)
        self.refresh()
        self._post_status()

    def set_search(self, query: str) -> None:
        if not self.buffer.set_search(query):
            return
        self.cancel_file_search()
        self._cache.clear()
        self.refresh()
        self._post_status()

    def find(self, forward: bool = True) -> tuple[bool, bool]:
        """Move to the next/previous line matching the search (else the filter) query.

        Returns ``(found, wrapped)``. Starts after the current hit, or from the top (forward) or
        bottom (backward) of the visible rows.
        """
        b = self.buffer
        in_file = self.file_find(forward)  # with a file part, the search goes on into it
        if in_file is not None:
            return in_file
        if (b.search or b.filter) is None or not b.lines or not b.row_count:
            return False, False
        if b.cursor is not None:
            origin = b.cursor
        else:
            top = min(max(0, int(self.scroll_y) - self._file_rows), b.row_count - 1)
            bottom = min(top + self.scrollable_content_region.height - 1, b.row_count - 1)
            origin = b.row(top)[0] - 1 if forward else b.row(max(top, bottom))[0] + 1
        seq, wrapped = b.find(forward, origin)
        if seq is None:
            return False, False
        self._goto(seq)
        return True, wrapped

    def _goto(self, seq: int) -> None:
        b = self.buffer
        if b.row_of_seq(seq) is None and b.filter is not None:
            self.set_filter("")  # the target is hidden by the filter: show everything
        if b.row_of_seq(seq) is None and b.hosts.selected is not None:
            self.set_host(None)  # ... or by the host selection
        row = b.row_of_seq(seq)
        if row is None:
            return
        self.follow = False
        b.cursor = seq
        self.file_cursor = None
        self._cache.clear()
        self._scroll_to_row(self._file_rows + row)
        self.refresh()
        self._post_status()

    def jump_to_lineno(self, lineno: int) -> bool:
        """Show the newest buffered line with this stream line number; False if pruned. Each
        host numbers its own lines: the shown host's line is preferred, then any host's."""
        seq = self.buffer.seq_of_lineno(lineno)
        if seq is None:  # pruned, or before the tail: the file part may have it
            prefix = self.file.prefix if self.file is not None else None
            return prefix is not None and self.jump_to_file_line(lineno + prefix)
        self._goto(seq)
        return True

    def jump_to_first_error(self) -> int | None:
        """Jump to the first error/traceback line still buffered; returns its line number."""
        seq = self.buffer.first_error
        if seq is None:
            return None
        self._goto(seq)
        return self.buffer.entry(seq).lineno

    def set_wrap(self, wrap: bool) -> None:
        self.buffer.set_wrap(wrap, self._text_width())
        self._rows_changed()
        self._reposition(self.buffer.cursor)

    def on_resize(self) -> None:
        if self.buffer.wrap and self._text_width() != self.buffer.wrap_width:
            self.set_wrap(True)
        elif self.follow:
            self._scroll_to_row(None)

    def save(self, path: Path) -> int:
        """Write the buffered lines to ``path`` (UTF-8); returns the number of lines written."""
        return write_lines(path, self.buffer.lines, with_hosts=self.buffer.hosts.multi)

# the helpers: re-exported
__all__ = ["FRAME_INTERVAL", "LogStatus", "LogView", "compile_query", "wrap_cuts"]
