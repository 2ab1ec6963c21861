"""The log pane: the :class:`LogView`, its one-line status and the filter/search input.

The pane owns the user's *intent* (which query box is open, what was typed); the view owns the
lines. The status line is built as ``Content`` from plain strings, so a filter query such as
``[/]`` is shown literally instead of being parsed as markup.

On a multi-node run the status line and the pane's title name the host shown ("all hosts" or
one host): with ``h`` switching hosts, a view that silently held only some lines would mislead.

The filter/search box is drawn *in the status row* while it is open, and the pane edits its
query from the keys that bubble up from the (still focused) log view: an ``Input`` widget
restyled the pane and the log view and forced a full layout pass on every open and close
(docs/architecture.md, "Module notes"). Now ``/`` and ``Esc`` repaint one row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from rich.cells import get_character_cell_size
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.keys import REPLACED_KEYS, key_to_character

from eagle_tui.model.buffers.logbuffer import LogBuffer
from eagle_tui.model.events import LogLine
from eagle_tui.ui.highlight import HighlightRule
from eagle_tui.ui.safety import inert
from eagle_tui.ui.sinks import notify, set_border_title
from eagle_tui.ui.widgets.logtext import QueryLine
from eagle_tui.ui.widgets.logview import LogStatus, LogView
from eagle_tui.ui.widgets.onerow import OneRow
from eagle_tui.userpattern import refusal

FindMode = Literal["filter", "search"]


# what the open box says before anything is typed (the benchmark looks for "filter: show only")
PROMPTS: dict[FindMode, tuple[str, str]] = {
    "filter": ("filter: ", "show only matching lines (regex or text)"),
    "search": ("search: ", "Enter jumps to the next match, then n / N"),
}

# keys the open box edits with (besides printable text); the pane's bindings handle Enter and Esc
EDIT_KEYS = frozenset({
    "backspace", "ctrl+h", "delete", "left", "right", "home", "end", "ctrl+a", "ctrl+e",
    "ctrl+u", "ctrl+k", "ctrl+w",
})


@dataclass(frozen=True, slots=True)
class FindBox:
    """The open filter/search box, as the status row draws it."""

    mode: FindMode
    text: str
    cursor: int
    selected: bool = False  # all of the text (the query the box was opened on)
    note: str = ""  # e.g. the filter's "(12 shown)", drawn after the query when there is room
    refused: str = ""  # why the query is refused as a pattern: drawn after it, always


def find_box_content(box: FindBox, width: int) -> Content:
    """``filter: query`` with the cursor cell reversed; a hint while the query is empty.

    A query wider than the row scrolls so that the cursor stays visible (``…`` marks the cut
    ends). The query is a plain part of ``Content``, never markup.
    """
    label, hint = PROMPTS[box.mode]
    label_part = (label, "$accent bold")
    if not box.text:
        return Content.assemble(label_part, (hint[:1], "reverse"), (hint[1:], "$text-muted"))
    text, cursor = box.text, box.cursor
    widths = [get_character_cell_size(c) for c in text]
    room = max(1, width - len(label))
    start, end = _window(widths, cursor, room)
    parts: list[str | tuple[str, str]] = [label_part]
    if start:
        parts.append(("…", "$text-muted"))
    style = "reverse" if box.selected else ""
    parts.append((text[start:cursor], style))
    parts.append((text[cursor : cursor + 1] or " ", "reverse"))
    parts.append((text[cursor + 1 : end], style))
    if end < len(text):
        parts.append(("…", "$text-muted"))
    elif start == 0:  # all of the query is shown: the note, if it fits
        used = sum(widths) + (cursor == len(text))
        if box.note and used + len(box.note) <= room:
            parts.append((box.note, "$text-muted"))
    if box.refused:  # after the query, cut by the row's end if need be: it must be seen
        parts.append((f"  ✗ {box.refused}", "$error"))
    return Content.assemble(*parts)


def _window(widths: Sequence[int], cursor: int, room: int) -> tuple[int, int]:
    """The slice of the query shown in ``room`` cells: the cursor's cell, then as much before
    it as fits, then after it (one cell kept for each ``…`` a cut end needs)."""
    n = len(widths)
    if sum(widths) + (cursor == n) <= room:
        return 0, n
    start, end = cursor, min(cursor + 1, n)
    used = widths[cursor] if cursor < n else 1
    while start > 0:
        need = widths[start - 1] + (start - 1 > 0) + (end < n)
        if used + need > room:
            break
        start -= 1
        used += widths[start]
    while end < n:
        need = widths[end] + (start > 0) + (end + 1 < n)
        if used + need > room:
            break
        used += widths[end]
        end += 1
    return start, end


def status_content(status: LogStatus) -> Content:
    """The status line under the log, e.g. ``⏸ paused · 120 new lines — End/f to follow``."""
    parts: list[str | tuple[str, str] | Content] = []
    if status.hosts > 1 and status.host is None:
        parts.append((f"all {status.hosts} hosts", "$accent bold"))
        parts.append(" · ")
    elif status.hosts > 1:
        parts.append(("host ", "$text-muted"))
        parts.append((host_label(status), "$accent bold"))
        parts.append((f" of {status.hosts} · ", "$text-muted"))
    if status.follow:
        parts.append(("● following", "$success"))
    else:
        parts.append(("⏸ paused", "$warning bold"))
        if status.unseen:
            parts.append((f" · {status.unseen:,} new lines — End/f to follow", "$warning"))
        else:
            parts.append((" — End/f to follow", "$text-muted"))
    # the stream's count, not the buffer's: a source catching up may skip older lines' text
    if status.prefix is not None:  # a log opened at its end: the file's lines count too
        whole = status.prefix + status.stream
        if status.at_line is not None:
            parts.append((f" · line {status.at_line:,} of {whole:,} (file)", "$text-muted"))
        else:
            parts.append((f" · {whole:,} lines", "$text-muted"))
    elif status.stream > status.total:
        parts.append((f" · {status.stream:,} lines ({status.total:,} kept)", "$text-muted"))
    else:
        parts.append((f" · {status.total:,} lines", "$text-muted"))
    if status.scrollback:
        parts.append((f" · {status.scrollback}", "$text-muted"))
    if status.filter:
        parts.append(" · filter ")
        parts.append((status.filter, "$accent"))
        parts.append((f" ({status.shown:,} shown)", "$text-muted"))
    if status.prefix and (status.filter or (status.search and not status.file_rows)):
        # the filter (and a search without the file part) covers the lines in memory only
        what = "filter" if status.filter else "search"
        parts.append((f" · {what}: last {status.total:,} lines", "$warning"))
    if status.search:
        parts.append(" · search ")
        parts.append((status.search, "$accent"))
    if status.refused:
        parts.append((f" · refused: {status.refused}", "$error"))
    if status.wrap:
        parts.append((" · wrap", "$text-muted"))
    if status.own:
        what = "shown" if status.own_shown else "folded"
        parts.append((f" · {status.own:,} eagle-tui polls {what} (o)", "$text-muted"))
    return Content.assemble(*parts)


def host_label(status: LogStatus) -> str:
    """``all 2 hosts`` or the one host shown (inert: a DEST is text the user typed)."""
    return f"all {status.hosts} hosts" if status.host is None else inert(status.host)


class LogStatusBar(OneRow):
    """One fixed-height line: the log's status, or the open filter/search box in its place.

    Repainted without a layout pass (the status changes every batch), as a :class:`OneRow`;
    opening or closing the box only changes what this one row draws.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.content = Content("")
        self.box: FindBox | None = None

    def show(self, content: Content) -> None:
        """The status to draw (kept, not drawn, while the box is open)."""
        if not content.is_same(self.content):
            self.content = content
            if self.box is None:
                self.refresh()

    def edit(self, box: FindBox | None) -> None:
        """Draw ``box`` instead of the status; ``None`` draws the status again."""
        if box != self.box:
            self.box = box
            self.refresh()

    def row(self, width: int) -> Content:
        return self.content if self.box is None else find_box_content(self.box, width)


class LogPane(Vertical):
    """Log view + status row (which turns into the filter/search box), as one dashboard pane.

    While the box is open the log view keeps the focus: its keys bubble up to :meth:`on_key`,
    which edits the query (the view has no bindings for text or editing keys, and a stopped
    key reaches no binding); ``Enter`` and ``Esc`` are this pane's bindings, so the footer
    lists them. Scrolling keys still scroll the log. Moving the focus elsewhere (Tab, a click)
    closes the box and keeps the query, as ``Enter`` does for a filter.
    """

    # one pair per mode, so that the footer says what Enter and Esc do in each
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "find_keep", "Keep filter", key_display="Enter"),
        Binding("escape", "find_clear", "Clear filter", key_display="Esc"),
        Binding("enter", "find_search", "Find", key_display="Enter"),
        Binding("escape", "find_cancel", "Cancel", key_display="Esc"),
    ]
    MODE_ACTIONS: ClassVar[dict[str, FindMode]] = {
        "find_keep": "filter", "find_clear": "filter",
        "find_search": "search", "find_cancel": "search",
    }

    def __init__(
        self,
        max_lines: int,
        rules: Sequence[HighlightRule] = (),
        *,
        buffer: LogBuffer | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Log"
        self._buffer = buffer if buffer is not None else LogBuffer(max_lines)
        self._rules = tuple(rules)
        self.mode: FindMode | None = None
        self.query_line = QueryLine()
        self._status: LogStatus | None = None
        self._title = "Log"

    @property
    def view(self) -> LogView:
        return self.query_one(LogView)

    @property
    def query_text(self) -> str:
        """What is typed in the box (kept after it closes, until it opens again)."""
        return self.query_line.text

    def compose(self) -> ComposeResult:
        yield LogView(rules=self._rules, buffer=self._buffer, id="log")
        yield LogStatusBar(id="log-status")

    def append(self, lines: Sequence[LogLine]) -> None:
        self.view.append(lines)

    def on_mount(self) -> None:
        view = self.view
        view.status_sink = self.show_status  # synchronous: repainted with the rows, see there
        if view.last_status is not None:  # one sent before the sink was set
            self.show_status(view.last_status)

    def on_log_view_status_changed(self, message: LogView.StatusChanged) -> None:
        self.show_status(message.status)

    def show_status(self, status: LogStatus) -> None:
        self._status = status
        try:
            bar = self.query_one(LogStatusBar)
        except NoMatches:  # the app is closing: its bar went first, a last repaint reports
            return
        bar.show(status_content(status))
        if self.mode == "filter":
            self._draw_box()  # its "(N shown)" follows the stream
        title = f"Log · {host_label(status)}" if status.hosts > 1 else "Log"
        if title != self._title:
            self._title = title
            set_border_title(self, inert(title))  # (as Content: a host name is never markup)

    # ------------------------------------------------------------------ the box
    def open_find(self, mode: FindMode) -> None:
        """Open the query box for a live filter or a search; it starts with the current query."""
        self.mode = mode
        view = self.view
        self.query_line.set(view.filter_text if mode == "filter" else view.search_text,
                            select=True)
        self._draw_box()
        if not view.has_focus:  # (``/`` focuses the view first; the palette may not have)
            view.focus()
        self.refresh_bindings()

    def close_find(self) -> None:
        self.mode = None
        self.query_one(LogStatusBar).edit(None)
        self.refresh_bindings()

    def _draw_box(self) -> None:
        if self.mode is None:
            return
        line, status = self.query_line, self._status
        note = ""
        if (self.mode == "filter" and status is not None and line.text
                and status.filter == line.text):
            note = f"  ({status.shown:,} shown)"
        box = FindBox(self.mode, line.text, line.cursor, line.selected, note,
                      refusal(line.text))
        self.query_one(LogStatusBar).edit(box)

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """While the box is open, text and editing keys are the box's: the app's bindings for
        them (``q``, ``/``, ``End``...) neither fire nor show in the footer."""
        if self.mode is None:
            return False
        if character is None:  # Textual finds no character for "slash", "minus", "at"...
            character = key_to_character(REPLACED_KEYS.get(key, key))
        return (character is not None and character.isprintable()) or key in EDIT_KEYS

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The box's bindings exist only while it is open (and ``Enter`` differs by mode)."""
        mode = self.MODE_ACTIONS.get(action)
        return mode is None or mode == self.mode

    def on_key(self, event: events.Key) -> None:
        if self.mode is None:
            return
        line = self.query_line
        key = event.key
        text = line.text
        if event.is_printable and event.character is not None:
            line.insert(event.character)
        elif key in ("backspace", "ctrl+h"):
            line.backspace()
        elif key == "delete":
            line.delete()
        elif key == "left":
            line.move(line.cursor - 1)
        elif key == "right":
            line.move(line.cursor + 1)
        elif key in ("home", "ctrl+a"):
            line.move(0)
        elif key in ("end", "ctrl+e"):
            line.move(len(line.text))
        elif key == "ctrl+u":
            line.delete_to_start()
        elif key == "ctrl+k":
            line.delete_to_end()
        elif key == "ctrl+w":
            line.delete_word()
        else:
            return  # Enter, Esc: bindings; arrows up/down, PgUp...: the view scrolls
        event.stop()
        event.prevent_default()
        self._edited(text)

    def on_paste(self, event: events.Paste) -> None:
        if self.mode is None:
            return
        event.stop()
        text = self.query_line.text
        self.query_line.insert(event.text)
        self._edited(text)

    def _edited(self, before: str) -> None:
        if self.mode == "filter" and self.query_line.text != before:
            self.view.set_filter(self.query_line.text)  # live; its status redraws the box
        self._draw_box()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        """The focus moved to another widget (Tab, a click): close, keeping the query. (The
        terminal losing the focus leaves nothing focused; the box stays open then.)"""
        focused = self.screen.focused
        if self.mode is not None and focused is not None and focused is not self.view:
            self.close_find()

    def action_find_keep(self) -> None:
        self.close_find()

    def action_find_search(self) -> None:
        query = self.query_line.text
        view = self.view
        if refusal(query):  # the box says why; it stays open to be edited
            self.app.bell()
            return
        view.set_search(query)
        self.close_find()
        if query:
            found, _ = view.find(forward=True)
            if not found:
                notify(self.app, inert(f"No line matches {query!r}"), severity="warning")

    def action_find_clear(self) -> None:
        self.view.set_filter("")
        self.close_find()

    def action_find_cancel(self) -> None:
        self.view.set_search("")
        self.close_find()


__all__ = ["PROMPTS", "FindBox", "FindMode", "LogPane", "LogStatusBar", "find_box_content",
           "host_label", "status_content"]
