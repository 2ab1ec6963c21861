"""The live log: a Line-API ``ScrollView`` with a bounded buffer, follow/pause, filter and search.

Modelled on Textual's own ``widgets/_log.py``: lines are kept as the parser's ``LogLine`` objects
(no copy, no pre-rendering) and only the rows on screen are highlighted and rendered, through an
LRU cache of strips. That is what keeps a 50k lines/s log cheap: appending is a list extend plus a
bounded prune, whatever the rate.

Rows vs entries: an *entry* is one buffered line; a *row* is one screen line. Without filter or
wrap they are the same and no row table exists. With a filter or wrapping on, ``_rows`` lists
``(seq, start, end)`` triples, where ``seq`` is an entry's absolute sequence number (stable while
older entries are pruned) and ``start:end`` the slice of its text on that row.

Follow: on by default. Scrolling up pauses it (new lines are counted, not shown); ``End``/``f`` or
scrolling back to the bottom resumes. Every line is passed through :func:`inert` on the way in:
the parser already sanitizes, but the widget does not trust it with the user's terminal.

Hosts: a multi-node run's lines share the one buffer; showing one host is a row-table filter like
the text filter (the buffer and its bound are unchanged), and while all hosts are shown each row
gets a short host tag drawn at render time (:class:`~eagle_tui.ui.widgets.logtext.LogHosts`).
"""

from __future__ import annotations

import bisect
import dataclasses
import re
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.actions import SkipAction
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from eagle_tui.model.events import LineKind, LogLine
from eagle_tui.ui.frames import FRAME_INTERVAL, frame_delay
from eagle_tui.ui.highlight import COMPONENT_CLASSES, HighlightRule, highlight
from eagle_tui.ui.safety import inert, is_inert
from eagle_tui.ui.widgets.logtext import LogHosts, LogStatus, compile_query, wrap_cuts, write_lines
from eagle_tui.ui.widgets.scrollbars import sync_scrollbars

Row = tuple[int, int, int]


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
        frame_interval: float = FRAME_INTERVAL,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        if max_lines < 1:
            raise ValueError("max_lines must be >= 1")
        self.max_lines = max_lines
        self.rules = tuple(rules)
        self._entries: list[LogLine] = []
        self._dropped = 0  # absolute seq of _entries[0]
        self._special: set[int] = set()  # seqs of marker / separator entries
        self._rows: list[Row] | None = None
        self._max_width = 0
        self._cache: LRUCache[tuple[int, int, int, int], Strip] = LRUCache(1024)
        self._styles: dict[str, Style] = {}
        self._base_style: Style | None = None
        self._filter_text = ""
        self._filter: re.Pattern[str] | None = None
        self._search_text = ""
        self._search: re.Pattern[str] | None = None
        self._cursor: int | None = None  # seq of the current search hit / jump target
        self._first_error: int | None = None
        self._wrap = False
        self._wrap_width = 0
        self.follow = True
        self.unseen = 0
        self.skipped = 0  # lines never buffered because a batch exceeded max_lines
        self.unsafe_lines = 0  # lines that needed sanitizing here (should stay 0)
        self._markers = 0
        self._hosts = LogHosts()
        self._programmatic = False
        self._quiet = False
        self._scrollbars_stale = False
        self._frame = (0, 0, 0)
        self.frame_interval = frame_interval
        self._last_paint = 0.0
        self._paint_timer: Timer | None = None
        self._last_status: LogStatus | None = None
        self.status_sink: Callable[[LogStatus], None] | None = None

    # ------------------------------------------------------------------ queries
    @property
    def line_count(self) -> int:
        return len(self._entries)

    @property
    def row_count(self) -> int:
        return len(self._rows) if self._rows is not None else len(self._entries)

    @property
    def wrap(self) -> bool:
        return self._wrap

    @property
    def filter_text(self) -> str:
        return self._filter_text

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts of the buffered lines, in order of first sight (empty for a local log)."""
        return tuple(self._hosts.seen)

    @property
    def host(self) -> str | None:
        """The one host shown, or None for all."""
        return self._hosts.selected

    @property
    def search_text(self) -> str:
        return self._search_text

    @property
    def cursor_lineno(self) -> int | None:
        if self._cursor is None or self._cursor < self._dropped:
            return None
        return self._entries[self._cursor - self._dropped].lineno

    def entries(self) -> tuple[LogLine, ...]:
        """The buffered lines (sanitized), oldest first."""
        return tuple(self._entries)

    def texts(self) -> list[str]:
        """The buffered lines' text (sanitized), oldest first."""
        return [e.text for e in self._entries]

    def row_text(self, y: int) -> str:
        """Plain text of screen row ``y`` of the virtual view (for tests and search)."""
        seq, start, end = self._row(y)
        return self._entries[seq - self._dropped].text[start:end]

    def status(self) -> LogStatus:
        return LogStatus(
            follow=self.follow,
            unseen=self.unseen,
            total=len(self._entries),
            shown=self.row_count if self._filter is not None or self._hosts.selected is not None
            else len(self._entries),
            filter=self._filter_text,
            search=self._search_text,
            wrap=self._wrap,
            dropped=self._dropped + self.skipped,
            stream=self._hosts.stream,
            host=self._hosts.selected,
            hosts=len(self._hosts.seen),
        )

    # ------------------------------------------------------------------ feeding
    def append(self, lines: Sequence[LogLine]) -> None:
        """Append a batch of lines (one call per session batch, never per line)."""
        if not lines:
            return
        if len(lines) > self.max_lines:  # skip ahead: they would be pruned unseen anyway
            self.skipped += len(lines) - self.max_lines
            lines = lines[-self.max_lines :]
        self._extend(self._guard(lines))

    def add_separator(self, text: str, host: str = "") -> None:
        """A full-width marker row (user marker, "log restarted") that is part of the buffer;
        ``host`` is the host it is about ("": shown whichever host is selected)."""
        lineno = self._entries[-1].lineno if self._entries else 0
        seq = self._dropped + len(self._entries)
        self._special.add(seq)
        self._extend([LogLine(lineno, inert(text), LineKind.MILESTONE, host)], special=True)

    def add_marker(self, label: str) -> int:
        self._markers += 1
        self.add_separator(f"──── marker {self._markers} · {label} ────")
        return self._markers

    def _guard(self, lines: Iterable[LogLine]) -> list[LogLine]:
        out = []
        for ln in lines:
            text = ln.text
            if "\t" in text or not is_inert(text):
                self.unsafe_lines += 1
                ln = dataclasses.replace(ln, text=inert(text))
            out.append(ln)
        return out

    def _extend(self, new: list[LogLine], special: bool = False) -> None:
        first_seq = self._dropped + len(self._entries)
        rows_before = self.row_count
        self._entries.extend(new)
        new_host = not special and self._hosts.note(new)
        if self._first_error is None:
            for i, ln in enumerate(new):
                is_error = ln.kind is LineKind.ERROR or ln.kind is LineKind.TRACEBACK
                if is_error and first_seq + i not in self._special:
                    self._first_error = first_seq + i
                    break
        widest = max(len(t) if t.isascii() else cell_len(t) for t in (e.text for e in new))
        self._max_width = max(self._max_width, widest)
        if new_host:  # a second host: every row gets a tag, so wrapped rows narrow
            self._retag()
        elif self._rows is not None:
            self._rows.extend(self._rows_for(first_seq, new))
        added_rows = self.row_count - rows_before
        removed_rows = self._prune()
        self._quiet = True  # the scroll below repaints through _request_paint, throttled
        try:
            self._update_virtual_size()
            if self.follow:
                self._scroll_to_row(None)
            else:
                self.unseen += added_rows
                if removed_rows:
                    self._set_scroll(max(0.0, self.scroll_y - removed_rows))
        finally:
            self._quiet = False
        self._request_paint()

    def _request_paint(self) -> None:
        """Repaint for new lines, at most once per ``frame_interval``.

        A followed log scrolls every row on every batch, and one full repaint of a 160-column
        view costs ~10 ms of Textual's compositor here: at 20 batches/s that alone was 20-40 %
        of a core for a 200 lines/s tail. Capping streaming repaints at 5 per second keeps the
        tail live to the eye; keys and scrolling still repaint at once. The throttled repaints
        fall on the app's frame grid (:func:`frame_delay`), with the panes' updates.
        """
        if self._paint_timer is not None:
            return  # already due: a late timer must not turn into a second, off-grid repaint
        wait = frame_delay(time.monotonic(), self._last_paint, self.frame_interval)
        if wait <= 0 or not self.is_mounted:
            self._paint()
        else:
            self._paint_timer = self.set_timer(wait, self._paint)

    def _paint(self) -> None:
        self._paint_timer = None
        self._last_paint = time.monotonic()
        if self._scrollbars_stale:
            self._scrollbars_stale = False
            programmatic, self._programmatic = self._programmatic, True
            try:  # Textual's _scroll_update, without repainting bars that look the same
                sync_scrollbars(self, self.virtual_size)
            finally:
                self._programmatic = programmatic
            if self.follow:  # a scrollbar that just appeared took a row: stay at the end
                self._scroll_to_row(None)
            if self.show_vertical_scrollbar:
                self.vertical_scrollbar.position = self.scroll_y
        self.refresh()
        self._post_status()

    @property
    def paint_pending(self) -> bool:
        """A throttled repaint is scheduled (tests wait for it before reading the screen)."""
        return self._paint_timer is not None

    def _prune(self) -> int:
        excess = len(self._entries) - self.max_lines
        if excess <= 0:
            return 0
        del self._entries[:excess]
        self._dropped += excess
        self._special = {s for s in self._special if s >= self._dropped}
        if self._first_error is not None and self._first_error < self._dropped:
            self._first_error = None
        if self._cursor is not None and self._cursor < self._dropped:
            self._cursor = None
        if self._rows is None:
            return excess
        cut = bisect.bisect_left(self._rows, (self._dropped, -1, -1))
        del self._rows[:cut]
        return cut

    # ------------------------------------------------------------------ rows
    def _rows_for(self, first_seq: int, entries: Sequence[LogLine]) -> list[Row]:
        rows: list[Row] = []
        width = self._wrap_width
        flt = self._filter
        hosts = self._hosts if self._hosts.selected is not None else None
        for i, e in enumerate(entries):
            seq = first_seq + i
            if hosts is not None and not hosts.keeps(e, seq in self._special):
                continue
            if flt is not None and seq not in self._special and flt.search(e.text) is None:
                continue
            if self._wrap:
                rows.extend((seq, a, b) for a, b in wrap_cuts(e.text, width))
            else:
                rows.append((seq, 0, len(e.text)))
        return rows

    def _rebuild_rows(self) -> None:
        if self._filter is None and not self._wrap and self._hosts.selected is None:
            self._rows = None
        else:
            self._rows = []
            self._rows = self._rows_for(self._dropped, self._entries)
        self._cache.clear()
        self._update_virtual_size()

    def _row(self, y: int) -> Row:
        if self._rows is not None:
            return self._rows[y]
        seq = self._dropped + y
        return (seq, 0, len(self._entries[y].text))

    def _row_of_seq(self, seq: int) -> int | None:
        if self._rows is None:
            idx = seq - self._dropped
            return idx if 0 <= idx < len(self._entries) else None
        i = bisect.bisect_left(self._rows, (seq, -1, -1))
        if i < len(self._rows) and self._rows[i][0] == seq:
            return i
        return None

    def _update_virtual_size(self) -> None:
        """Set the scrollable size without a screen-wide layout.

        Assigning ``virtual_size`` (a ``layout=True`` reactive) re-lays out the whole screen; at
        20 batches a second that was most of the dashboard's CPU while tailing. The view's own
        size never depends on its content, so only the scrollbars need updating.
        """
        width = (self._wrap_width if self._wrap else self._max_width) + self._hosts.width
        size = Size(width, self.row_count)
        if size != self.virtual_size:
            self.set_reactive(Widget.virtual_size, size)
            if self._quiet:  # streaming: the scrollbars follow at the next (throttled) paint
                self._scrollbars_stale = True
                return
            programmatic, self._programmatic = self._programmatic, True
            try:  # _scroll_update clamps the scroll: that is not the user scrolling
                self._scroll_update(size)
            finally:
                self._programmatic = programmatic

    # ------------------------------------------------------------------ scrolling and follow
    def _set_scroll(self, y: float) -> None:
        self._programmatic = True
        try:
            self.scroll_target_y = y
            self.scroll_y = y
        finally:
            self._programmatic = False

    def _scroll_to_row(self, row: int | None) -> None:
        """``None`` → the end; else put ``row`` a third of the way down the view."""
        if row is None:
            self._set_scroll(max(0, self.row_count - self.scrollable_content_region.height))
        else:
            self._set_scroll(max(0, row - self.scrollable_content_region.height // 3))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        if self._quiet and self._programmatic:
            self._scrollbars_stale = True  # repainted, with the scrollbar, by _paint
            return
        super().watch_scroll_y(old_value, new_value)
        if self._programmatic:
            return
        at_end = new_value >= self.max_scroll_y
        if new_value < old_value and not at_end and self.follow:
            self.set_follow(False)
        elif new_value > old_value and at_end and not self.follow:
            self.set_follow(True)

    def set_follow(self, follow: bool) -> None:
        self.follow = follow
        if follow:
            self.unseen = 0
            self._cursor = None
            self._cache.clear()
            self._update_virtual_size()
            self._scroll_to_row(None)
            self.refresh()
        self._post_status()

    def action_scroll_end(self) -> None:
        self.set_follow(True)

    # Scrolling up pauses *before* the scroll starts, and keys scroll without animation.
    # Left to ``watch_scroll_y``, a key's animated scroll raced the next batch's scroll-to-end
    # while following (at 50k lines/s a PgUp was sometimes undone before it showed: 3-4 of ~45
    # lost in the tmux benchmark), and an animation still running undid a quick End.
    def _pause_for_scroll_up(self) -> None:
        if self.follow and self.max_scroll_y > 0 and self.scroll_y > 0:
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
    def set_filter(self, query: str) -> None:
        """Show only lines matching ``query`` (regex or literal, smart case); "" shows all.

        The same query again changes nothing (``Esc`` on an empty filter box must not rebuild
        the rows and re-highlight every visible line)."""
        if query == self._filter_text:
            return
        self._filter_text = query
        self._filter = compile_query(query)
        self._rebuild_rows()
        self._reposition(self._cursor)

    def set_host(self, host: str | None) -> None:
        """Show only the lines of ``host`` (one of :attr:`hosts`); ``None`` shows every host."""
        self._hosts.select(host)
        self._retag()
        self._reposition(self._cursor)

    def cycle_host(self) -> str | None:
        """All hosts → first host → ... → last host → all hosts; returns the new selection."""
        self.set_host(self._hosts.following())
        return self._hosts.selected

    def _retag(self) -> None:
        """The tag column or the host selection changed: new wrap width, rows and strips."""
        if self._wrap:
            self._wrap_width = self._text_width()
        self._rebuild_rows()

    def _text_width(self) -> int:
        return max(1, self.scrollable_content_region.width - self._hosts.width)

    def _reposition(self, anchor: int | None) -> None:
        """After the rows changed: stay at the end when following, else keep ``anchor`` shown."""
        if self.follow:
            self._scroll_to_row(None)
        elif anchor is not None and (row := self._row_of_seq(anchor)) is not None:
            self._scroll_to_row(row)
        self.refresh()
        self._post_status()

    def set_search(self, query: str) -> None:
        if query == self._search_text:
            return
        self._search_text = query
        self._search = compile_query(query)
        self._cache.clear()
        self.refresh()
        self._post_status()

    def find(self, forward: bool = True) -> tuple[bool, bool]:
        """Move to the next/previous line matching the search (else the filter) query.

        Returns ``(found, wrapped)``. Starts after the current hit, or from the top (forward) or
        bottom (backward) of the visible rows.
        """
        pattern = self._search or self._filter
        if pattern is None or not self._entries:
            return False, False
        seqs = self._visible_seqs()
        if not seqs:
            return False, False
        if self._cursor is not None:
            origin = self._cursor
        else:
            top = min(int(self.scroll_y), self.row_count - 1)
            bottom = min(top + self.scrollable_content_region.height - 1, self.row_count - 1)
            origin = self._row(top)[0] - 1 if forward else self._row(max(top, bottom))[0] + 1
        pos = bisect.bisect_right(seqs, origin) if forward else bisect.bisect_left(seqs, origin) - 1
        order = range(len(seqs))
        for step in order:
            idx = (pos + step) if forward else (pos - step)
            wrapped = idx >= len(seqs) or idx < 0
            seq = seqs[idx % len(seqs)]
            if seq in self._special:
                continue
            if pattern.search(self._entries[seq - self._dropped].text):
                self._goto(seq)
                return True, wrapped
        return False, False

    def _visible_seqs(self) -> list[int]:
        if self._rows is None:
            return list(range(self._dropped, self._dropped + len(self._entries)))
        seqs: list[int] = []
        for seq, _, _ in self._rows:
            if not seqs or seqs[-1] != seq:
                seqs.append(seq)
        return seqs

    def _goto(self, seq: int) -> None:
        if self._row_of_seq(seq) is None and self._filter is not None:
            self.set_filter("")  # the target is hidden by the filter: show everything
        if self._row_of_seq(seq) is None and self._hosts.selected is not None:
            self.set_host(None)  # ... or by the host selection
        row = self._row_of_seq(seq)
        if row is None:
            return
        self.follow = False
        self._cursor = seq
        self._cache.clear()
        self._scroll_to_row(row)
        self.refresh()
        self._post_status()

    def jump_to_lineno(self, lineno: int) -> bool:
        """Show the newest buffered line with this stream line number; False if pruned. Each
        host numbers its own lines: the shown host's line is preferred, then any host's."""
        for host in dict.fromkeys((self._hosts.selected, None)):
            for i in range(len(self._entries) - 1, -1, -1):
                e, seq = self._entries[i], self._dropped + i
                if e.lineno == lineno and seq not in self._special and host in (None, e.host):
                    self._goto(seq)
                    return True
        return False

    def jump_to_first_error(self) -> int | None:
        """Jump to the first error/traceback line still buffered; returns its line number."""
        if self._first_error is None:
            return None
        self._goto(self._first_error)
        return self._entries[self._first_error - self._dropped].lineno

    def set_wrap(self, wrap: bool) -> None:
        self._wrap = wrap
        self._wrap_width = self._text_width()
        self._rebuild_rows()
        self._reposition(self._cursor)

    def on_resize(self) -> None:
        if self._wrap and self._text_width() != self._wrap_width:
            self.set_wrap(True)
        elif self.follow:
            self._scroll_to_row(None)

    def save(self, path: Path) -> int:
        """Write the buffered lines to ``path`` (UTF-8); returns the number of lines written."""
        return write_lines(path, self._entries, with_hosts=self._hosts.multi)

    # ------------------------------------------------------------------ rendering
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._base_style = None
        self._cache.clear()

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            if name in self.COMPONENT_CLASSES:
                style = self.get_component_rich_style(name, partial=True)
            else:
                try:
                    style = Style.parse(name)
                except Exception:  # validated at config load; a bad one renders unstyled
                    style = Style()
            self._styles[name] = style
        return style

    def _line_text(self, seq: int) -> Text:
        entry = self._entries[seq - self._dropped]
        text = Text(entry.text, no_wrap=True, end="")
        if seq in self._special:
            text.stylize(self._style("log--marker"))
        else:
            for span in highlight(entry.text, entry.kind, self.rules):
                text.stylize(self._style(span.style), span.start, span.end)
            pattern = self._search or self._filter
            if pattern is not None:
                match_style = self._style("log--match")
                for count, m in enumerate(pattern.finditer(entry.text)):
                    if count >= 64:
                        break
                    if m.end() > m.start():
                        text.stylize(match_style, m.start(), m.end())
        if seq == self._cursor:
            text.stylize_before(self._style("log--current"))
        return text

    def render_lines(self, crop: Region) -> list[Strip]:
        # scroll offset and width once per frame, not once per row (they are computed props)
        scroll_x, scroll_y = self.scroll_offset
        self._frame = (scroll_x, scroll_y, self.scrollable_content_region.width)
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """One screen row: cached per (line, wrap piece, horizontal scroll, width).

        Following a log scrolls every row on every batch; keying the *cropped* strip by the
        line's sequence number (not its screen row) makes a scroll a cache hit for all rows but
        the new ones. No mouse offsets are attached: the view has no text selection, and
        ``apply_offsets`` would force a new strip per row per frame.
        """
        scroll_x, scroll_y, width = self._frame
        if not width:  # called outside render_lines (tests): compute the frame now
            scroll_x, scroll_y = self.scroll_offset
            width = self.scrollable_content_region.width
        base = self._base_style
        if base is None:
            base = self._base_style = self.rich_style
        idx = scroll_y + y
        if idx >= self.row_count:
            return Strip.blank(width, base)
        seq, start, end = self._row(idx)
        key = (seq, start, scroll_x, width)
        strip = self._cache.get(key)
        if strip is None:
            text = self._line_text(seq)
            if start or end < len(text):
                text = text[start:end]
            if self._hosts.width:
                tag = self._hosts.tag(self._entries[seq - self._dropped].host, start == 0)
                text = Text(tag, self._style("log--host"), no_wrap=True, end="").append_text(text)
            text.stylize_before(base)
            full = Strip(text.render(self.app.console), text.cell_len)
            strip = full.crop_extend(scroll_x, scroll_x + width, base)
            self._cache[key] = strip
        return strip


# the helpers: re-exported
__all__ = ["FRAME_INTERVAL", "LogStatus", "LogView", "compile_query", "wrap_cuts"]
