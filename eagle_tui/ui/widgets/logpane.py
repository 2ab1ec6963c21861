"""The log pane: the :class:`LogView`, its one-line status and the filter/search input.

The pane owns the user's *intent* (which query box is open, what was typed); the view owns the
lines. The status line is built as ``Content`` from plain strings, so a filter query such as
``[/]`` is shown literally instead of being parsed as markup.

On a multi-node run the status line and the pane's title name the host shown ("all hosts" or
one host): with ``h`` switching hosts, a view that silently held only some lines would mislead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input

from eagle_tui.model.events import LogLine
from eagle_tui.ui.highlight import HighlightRule
from eagle_tui.ui.safety import inert
from eagle_tui.ui.widgets.logview import LogStatus, LogView

FindMode = Literal["filter", "search"]


class FindInput(Input):
    """The query box; ``escape`` cancels (clears the query) instead of doing nothing."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False)
    ]

    class Cancelled(Message):
        pass

    def action_cancel(self) -> None:
        self.post_message(self.Cancelled())


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
    if status.stream > status.total:
        parts.append((f" · {status.stream:,} lines ({status.total:,} kept)", "$text-muted"))
    else:
        parts.append((f" · {status.total:,} lines", "$text-muted"))
    if status.filter:
        parts.append(" · filter ")
        parts.append((status.filter, "$accent"))
        parts.append((f" ({status.shown:,} shown)", "$text-muted"))
    if status.search:
        parts.append(" · search ")
        parts.append((status.search, "$accent"))
    if status.wrap:
        parts.append((" · wrap", "$text-muted"))
    return Content.assemble(*parts)


def host_label(status: LogStatus) -> str:
    """``all 2 hosts`` or the one host shown (inert: a DEST is text the user typed)."""
    return f"all {status.hosts} hosts" if status.host is None else inert(status.host)


class LogStatusBar(Widget):
    """One fixed-height line; repainted without a layout pass (it changes every batch)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.content = Content("")

    def show(self, content: Content) -> None:
        if not content.is_same(self.content):
            self.content = content
            self.refresh()

    def render(self) -> Content:
        return self.content


class LogPane(Vertical):
    """Log view + status + query input, as one pane of the dashboard."""

    def __init__(
        self,
        max_lines: int,
        rules: Sequence[HighlightRule] = (),
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Log"
        self._max_lines = max_lines
        self._rules = tuple(rules)
        self.mode: FindMode | None = None
        self._title = "Log"

    @property
    def view(self) -> LogView:
        return self.query_one(LogView)

    def compose(self) -> ComposeResult:
        yield LogView(self._max_lines, self._rules, id="log")
        yield LogStatusBar(id="log-status")
        yield FindInput(id="find", compact=True)

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
        self.query_one(LogStatusBar).show(status_content(status))
        title = f"Log · {host_label(status)}" if status.hosts > 1 else "Log"
        if title != self._title:
            self._title = title
            self.border_title = Content(title)  # Content: a host name is never markup

    def open_find(self, mode: FindMode) -> None:
        """Open the query box for a live filter or a search; it starts with the current query."""
        self.mode = mode
        box = self.query_one(FindInput)
        box.placeholder = (
            "filter: show only matching lines (regex or text)"
            if mode == "filter"
            else "search: Enter jumps to the next match, then n / N"
        )
        box.value = self.view.filter_text if mode == "filter" else self.view.search_text
        self.add_class("-finding")
        box.focus()

    def close_find(self) -> None:
        self.mode = None
        self.remove_class("-finding")
        self.view.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.mode == "filter":
            self.view.set_filter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.mode == "search":
            self.view.set_search(event.value)
            if event.value:
                found, _ = self.view.find(forward=True)
                if not found:
                    self.app.notify(
                        f"No line matches {event.value!r}", severity="warning", markup=False
                    )
        self.close_find()

    def on_find_input_cancelled(self, event: FindInput.Cancelled) -> None:
        event.stop()
        if self.mode == "filter":
            self.view.set_filter("")
        elif self.mode == "search":
            self.view.set_search("")
        self.close_find()


__all__ = ["FindInput", "LogPane", "LogStatusBar", "host_label", "status_content"]
