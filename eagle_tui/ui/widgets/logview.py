"""The live log: a Line-API ``ScrollView`` that shows the model's log buffer.

Modelled on Textual's own ``widgets/_log.py``: lines are kept as the parser's ``LogLine`` objects
(no copy, no pre-rendering) and only the rows on screen are highlighted and rendered, through an
LRU cache of strips: appending is a list extend plus a bounded prune, whatever the rate.

What the log *knows* (entries, pruning, the row table, filter, search cursor, hosts) is the
model's buffer. The view is one widget holding plain parts it calls (no mixins, no base classes
of its own): :class:`~.logscroll.Scroller` (follow, throttled repaints),
:class:`~.logrender.RowRenderer` (rows), :class:`~.logfile.FilePart` (the file's rows above the
buffer's) and :class:`~.logsearch.Finder` (``n``/``N``); it feeds the buffer and handles keys.
More: docs/architecture.md, "Module notes", ``ui/widgets/logview``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from textual import events
from textual.actions import SkipAction
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from eagle_tui.model.buffers.linewindow import FileMatch, FileWindow, Reply, placeholder
from eagle_tui.model.buffers.logbuffer import Appended, LogBuffer
from eagle_tui.model.events import LogLine, LogOpened, LogPrefixCounted
from eagle_tui.ui.frames import FRAME_INTERVAL
from eagle_tui.ui.highlight import COMPONENT_CLASSES, HighlightRule
from eagle_tui.ui.safety import inert
from eagle_tui.ui.textual_private import plain_rows
from eagle_tui.ui.widgets.forward import Forward
from eagle_tui.ui.widgets.logfile import FileAnswer, FileLines, FilePart
from eagle_tui.ui.widgets.logrender import RowRenderer
from eagle_tui.ui.widgets.logscroll import Scroller
from eagle_tui.ui.widgets.logsearch import Finder
from eagle_tui.ui.widgets.logtext import LogStatus, log_status, wrap_cuts, write_lines
from eagle_tui.userpattern import compile_query


class LogView(ScrollView, can_focus=True):
    """Bounded, lazily highlighted log view. Feed it with :meth:`append`."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {*COMPONENT_CLASSES, "log--host"}

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
        super().__init__(id=id, classes=classes)
        if buffer is None:
            buffer = LogBuffer(max_lines)
        buffer.compile = compile_query  # what is typed in the view's boxes: RE2, never ``re``
        self.buffer = buffer
        self._scroller = Scroller(self, lambda: self.row_count, self._post_status, frame_interval)
        self._draw = RowRenderer(buffer, rules, self.COMPONENT_CLASSES,
                                 lambda name: self.get_component_rich_style(name, partial=True))
        self._file = FilePart(buffer, post=self._post_answer, changed=self._file_changed,
                              status=self._post_status, filled=self._file_filled)
        self._finder = Finder(self, buffer, self._file, goto=self._goto,
                              jump=self.jump_to_file_line, status=self._post_status)
        self._frame = (0, 0, 0)  # scroll x, scroll y and width of the frame being rendered
        self._markers = 0
        self._last_status: LogStatus | None = None
        self.status_sink: Callable[[LogStatus], None] | None = None

    # ------------------------------------------------------------------ the parts' state
    follow = Forward[bool]("_scroller")
    unseen = Forward[int]("_scroller", doc="Lines appended while paused (not shown yet).")
    frame_interval = Forward[float]("_scroller")
    paint_pending = Forward[bool]("_scroller", readonly=True, doc="A throttled repaint is due.")
    before_paint = Forward[Callable[[], None] | None](
        "_scroller", doc="Runs first in every throttled repaint (the app's held-back batch).")
    last_paint = Forward[float]("_scroller", readonly=True, doc="When it last repainted.")
    flood_until = Forward[float]("_scroller", readonly=True, doc="A flood's pace holds until.")
    paint_soon = Forward[Callable[[], bool]](
        "_scroller", readonly=True, doc="A throttled repaint is due (scheduled if need be).")
    rules = Forward[tuple[HighlightRule, ...]]("_draw")
    content_width = Forward[Callable[[], int]]("_draw", readonly=True, doc="The virtual width.")
    file_lines = Forward[FileLines | None](
        "_file", "lines", doc="The app's handle on the line store (None: no file part).")
    file = Forward[FileWindow | None]("_file", "window", doc="The file part's lines, or None.")
    file_cursor = Forward[int | None]("_file", "cursor", doc="A jump's target in the file part.")
    file_rows = Forward[int]("_file", "rows", readonly=True, doc="Rows above the buffer's.")
    file_event = Forward[Callable[[LogOpened | LogPrefixCounted], None]](
        "_file", "event", readonly=True, doc="A log was opened at its end, or counted.")
    file_restarted = Forward[Callable[[str], None]](
        "_file", "restarted", readonly=True, doc="The host's file was truncated or replaced.")
    search_status = Forward[Callable[[], str]](
        "_finder", "status", readonly=True, doc="A search of the file under way, in words.")
    cancel_file_search = Forward[Callable[[], None]](
        "_finder", "cancel", readonly=True, doc="A search under way no longer answers.")

    # ------------------------------------------------------------------ queries
    max_lines = Forward[int]("buffer", readonly=True)
    skipped = Forward[int]("buffer", readonly=True, doc="Lines over max_lines in one batch.")
    line_count = Forward[int]("buffer", readonly=True)
    wrap = Forward[bool]("buffer", readonly=True)
    filter_text = Forward[str]("buffer", readonly=True)
    search_text = Forward[str]("buffer", readonly=True)
    cursor_lineno = Forward[int | None]("buffer", readonly=True)
    fold_own = Forward[bool]("buffer", readonly=True)

    @property
    def row_count(self) -> int:
        """Rows in the view (the virtual height)."""
        return self._file.rows + self.buffer.row_count

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts of the buffered lines, in order of first sight (empty for a local log)."""
        return tuple(self.buffer.hosts.seen)

    @property
    def host(self) -> str | None:
        """The one host shown, or None for all."""
        return self.buffer.hosts.selected

    def entries(self) -> tuple[LogLine, ...]:
        return tuple(self.buffer.lines)  # the buffered lines (sanitized), oldest first

    def texts(self) -> list[str]:
        return [e.text for e in self.buffer.lines]  # their text

    def row_text(self, y: int) -> str:
        """Plain text of screen row ``y`` of the virtual view (for tests and search)."""
        rows = self._file.rows
        if y < rows:
            entry = self._file.line(y)
            return entry.text if entry is not None else placeholder(y).text
        return self.buffer.row_text(y - rows)

    def status(self) -> LogStatus:
        return log_status(self.buffer, self.follow, self.unseen, self.file_status(),
                          self._file.rows)

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
        self._draw.tags.update(self.buffer.hosts)
        if self.buffer.wrap:
            self.buffer.wrap_width = self._text_width()

    def _appended(self, done: Appended) -> None:
        new = self.buffer.lines[max(0, done.first_seq - self.buffer.dropped):]
        if new:
            self._draw.widen(new)
        if done.new_host:
            self._draw.cache.clear()
        # pruned lines move from the buffer to the file part: a paused view stays put
        shift = self._file.recount() - done.removed_rows
        self._scroller.appended(done.added_rows, shift, self._update_virtual_size)

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

    # ------------------------------------------------------------------ filter, search, jumps
    def _rows_changed(self) -> None:
        self._draw.cache.clear()
        self._file.recount()  # a filter hides the file part, clearing it shows it again
        self._update_virtual_size()

    def set_filter(self, query: str) -> None:
        """Show only lines matching ``query`` (regex or literal, smart case); "" shows all.

        The same query again changes nothing (``Esc`` on an empty filter box must not rebuild
        the rows and re-highlight every visible line)."""
        if not self.buffer.set_filter(query):
            return
        self._rows_changed()
        self._reposition(self.buffer.cursor)

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
        return max(1, self.scrollable_content_region.width - self._draw.tags.width)

    def _reposition(self, anchor: int | None) -> None:
        """After the rows changed: stay at the end when following, else keep ``anchor`` shown."""
        if self.follow:
            self._scroller.scroll_to_row(None)
        elif anchor is not None and (row := self.buffer.row_of_seq(anchor)) is not None:
            self._scroller.scroll_to_row(self._file.rows + row)
        self.refresh()
        self._post_status()

    def set_search(self, query: str) -> None:
        if not self.buffer.set_search(query):
            return
        self._finder.cancel()
        self._draw.cache.clear()
        self.refresh()
        self._post_status()

    def find(self, forward: bool = True) -> tuple[bool, bool]:
        """Move to the next/previous match; ``(found, wrapped)`` (see :meth:`.Finder.find`)."""
        return self._finder.find(forward, int(self.scroll_y),
                                 self.scrollable_content_region.height)

    def _goto(self, seq: int) -> None:
        b = self.buffer
        if b.row_of_seq(seq) is None and b.filter is not None:
            self.set_filter("")  # the target is hidden by the filter: show everything
        if b.row_of_seq(seq) is None and b.hosts.selected is not None:
            self.set_host(None)  # ... or by the host selection
        row = b.row_of_seq(seq)
        if row is not None:
            self._show(self._file.rows + row, seq, None)

    def jump_to_file_line(self, line: int) -> bool:
        """Show the file's line ``line`` (1-based, the file's own number) when it lies in the
        file part (above the buffer), marked as a jump's target; False if it does not."""
        if not 1 <= line <= self._file.rows:
            return False
        self._show(line - 1, None, line - 1)
        return True

    def _show(self, row: int, seq: int | None, file_line: int | None) -> None:
        """Pause with ``row`` in view, marked as the current line: the buffered entry ``seq``,
        or the file part's (0-based) ``file_line``."""
        self.follow = False
        self.buffer.cursor = seq
        self._file.cursor = file_line
        self._draw.cache.clear()
        self._scroller.scroll_to_row(row)
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
            self._scroller.scroll_to_row(None)

    def save(self, path: Path) -> int:
        """Write the buffered lines to ``path`` (UTF-8); returns the number of lines written."""
        return write_lines(path, self.buffer.lines, with_hosts=self.buffer.hosts.multi)

    # ------------------------------------------------------------------ the file part
    def file_status(self) -> tuple[int | None, str, int | None]:
        """``(prefix, scrollback, at_line)`` for :class:`~.logtext.LogStatus`."""
        return self._file.status(self._finder.status(), self.follow, self.scroll_y)

    def _post_answer(self, reply: Reply) -> None:
        """On the store's thread: hand the answer to the UI (``post_message`` is thread-safe)."""
        self.post_message(FileAnswer(reply))

    def on_file_answer(self, message: FileAnswer) -> None:
        if isinstance(message.reply, FileMatch):
            self._finder.matched(message.reply)
        else:
            self._file.answer(message.reply)

    def _file_filled(self, lines: Sequence[LogLine]) -> None:
        """File lines were read: the view may widen (without wrap), and repaints."""
        if not self.buffer.wrap and lines and self._draw.widen(lines):
            self._update_virtual_size()
        self.refresh()

    def _file_changed(self, shift: int) -> None:
        """The file part appeared, went or changed size by ``shift`` rows: stay put."""
        self._update_virtual_size()
        self._scroller.keep_place(shift)
        self.refresh()
        self._post_status()

    # ------------------------------------------------------------------ drawing
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._draw.style_changed()

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._file.rows:  # ask for the file rows on screen (and around them) not asked yet
            self._file.ask_for_rows(int(self.scroll_y), self.scrollable_content_region.height)
        # scroll offset and width once per frame, not once per row (they are computed props);
        # rows as wide as the region: its last column (under a scrollbar) needs no padding
        scroll_x, scroll_y = self.scroll_offset
        self._frame = (scroll_x, scroll_y, self.region.width)
        rows = plain_rows(self, crop, self.render_line)
        return rows if rows is not None else super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """One screen row (see :class:`~.logrender.RowRenderer` for the strip cache)."""
        scroll_x, scroll_y, width = self._frame
        if not width:  # called outside render_lines (tests): compute the frame now
            scroll_x, scroll_y = self.scroll_offset
            width = self.scrollable_content_region.width
        base = self._draw.base_style
        if base is None:
            base = self._draw.base_style = self.rich_style
        return self._draw.row(scroll_y + y, self._file, scroll_x, width, base)

    # ------------------------------------------------------------------ scrolling and follow
    def _update_virtual_size(self) -> None:
        self._scroller.set_virtual_size(Size(self._draw.content_width(), self.row_count))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        if not self._scroller.absorbed():
            super().watch_scroll_y(old_value, new_value)
            follow = self._scroller.follow_wanted(old_value, new_value)
            if follow is not None:
                self.set_follow(follow)
        if self._file.rows and not self.follow:  # "line N of M (file)" follows the scroll
            self._post_status()

    def set_follow(self, follow: bool) -> None:
        self.follow = follow
        if follow:
            self.unseen = 0
            self.buffer.cursor = None
            self._file.cursor = None
            self._draw.cache.clear()
            self._update_virtual_size()
            self._scroller.scroll_to_row(None)
            self.refresh()
        self._post_status()

    def action_scroll_end(self) -> None:
        self.set_follow(True)

    # Scrolling up pauses *before* the scroll starts, and keys scroll without animation: left
    # to watch_scroll_y, a key's animated scroll raced the next batch's scroll-to-end (a PgUp
    # in a fast flood was undone before it showed), and a running animation undid a quick End.
    def _pause_for_scroll_up(self) -> None:
        if self._scroller.pause_wanted():
            self.set_follow(False)

    def _key_scroll(self, scroll: Callable[..., object], up: bool) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction
        if up:
            self._pause_for_scroll_up()
        scroll(animate=False)

    def action_scroll_up(self) -> None:
        self._key_scroll(self.scroll_up, up=True)

    def action_page_up(self) -> None:
        self._key_scroll(self.scroll_page_up, up=True)

    def action_scroll_home(self) -> None:
        self._key_scroll(self.scroll_home, up=True)

    def action_scroll_down(self) -> None:
        self._key_scroll(self.scroll_down, up=False)

    def action_page_down(self) -> None:
        self._key_scroll(self.scroll_page_down, up=False)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        """Pause following first; Textual's own handler (``Widget``'s, run after) scrolls."""
        if not (event.ctrl or event.shift):
            self._pause_for_scroll_up()


# the helpers: re-exported
__all__ = ["FRAME_INTERVAL", "LogStatus", "LogView", "compile_query", "wrap_cuts"]
