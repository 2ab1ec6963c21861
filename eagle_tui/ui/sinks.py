"""The widgets' terminal sinks: every text a widget shows goes through one of these.

Textual passes ESC and the C1 controls straight to the terminal, whatever widget shows them (a
fleet label in a DataTable cell, Prometheus error text in a Static, a configured path in a
notification each retitled or cleared the terminal). So the UI never calls a widget's text setter
itself: :func:`notify`, :func:`show`, :func:`set_border_title` / :func:`set_border_subtitle`,
:func:`set_tooltip`, :func:`add_row`, :func:`static` and :func:`line_input` do. Each takes
:data:`~eagle_tui.model.boundary.termtext.Inert` text (``mypy --strict`` refuses a ``str``) or a
``Content``/``Text`` whose plain text is checked here and rebuilt by :func:`inert` if a part slipped
through raw; each also replaces the characters whose width Rich and the terminal disagree on
(``ui/cellwidth``: one for one, so styles stay on their characters). Widgets' ``render``
methods return :func:`checked` content. ``tests/unit/structure/test_terminal_sinks.py`` fails on
code that calls a widget's setter itself; markup is never parsed (``markup=False``, or
``Content``/``Text``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.content import Content
from textual.widgets import Input, Static

from eagle_tui.model.boundary.termtext import Inert, is_inert
from eagle_tui.model.boundary.termtext import inert as _inert
from eagle_tui.ui.cellwidth import settle

if TYPE_CHECKING:
    from textual.app import App
    from textual.notifications import SeverityLevel
    from textual.widget import Widget
    from textual.widgets import DataTable


def inert(text: str, *, newlines: bool = False) -> Inert:
    """The model's :func:`~eagle_tui.model.boundary.termtext.inert`, widths settled."""
    return Inert(settle(_inert(text, newlines=newlines)))


def checked(content: Inert | Content) -> Content:
    """``content`` as ``Content`` whose text holds nothing a terminal acts on (LF allowed)."""
    if isinstance(content, Content):
        plain = content.plain
        if not is_inert(plain, newlines=True):
            return Content(inert(plain, newlines=True))
        shown = settle(plain)
        return content if shown is plain else Content(shown, list(content.spans))
    return Content(inert(content, newlines=True))


def checked_text(text: Inert | Text) -> Text:
    """The same check for a rich ``Text`` (DataTable cells, the fleet's status line)."""
    if isinstance(text, Text):
        plain = text.plain
        if not is_inert(plain, newlines=True):
            return Text(inert(plain, newlines=True), style=text.style,
                        no_wrap=bool(text.no_wrap))
        shown = settle(plain)
        if shown is plain:
            return text
        text = text.copy()
        text.plain = shown  # (the same length: the spans stay on their characters)
        return text
    return Text(inert(text, newlines=True))


_EMPTY = Inert("")


def notify(target: App[Any] | Widget, message: Inert, *, title: Inert = _EMPTY,
           severity: SeverityLevel = "information", timeout: float | None = None) -> None:
    """A toast whose message and title are inert and never parsed as markup."""
    target.notify(inert(message, newlines=True), title=inert(title), severity=severity,
                  timeout=timeout, markup=False)


def show(widget: Static, content: Inert | Content | Text) -> None:
    """``widget.update`` with checked content."""
    widget.update(checked_text(content) if isinstance(content, Text) else checked(content))


def static(content: Inert | Content = _EMPTY, **kwargs: Any) -> Static:
    """A new ``Static`` showing checked content."""
    return Static(checked(content), **kwargs)


def line_input(value: Inert = _EMPTY, **kwargs: Any) -> Input:
    """A new one-line ``Input`` holding ``value`` (Textual draws an Input's text as it is: an
    ESC in it retitled the terminal). Text meant to be edited and read back keeps what a
    control character meant by spelling it (``model.shellwords`` quotes a command so)."""
    return Input(inert(value), **kwargs)


def set_line(widget: Input, value: Inert) -> None:
    """``widget.value`` of a one-line input, made inert as :func:`line_input` makes it."""
    widget.value = inert(value)


def set_border_title(widget: Widget, title: Inert | Content | None) -> None:
    """``widget.border_title`` (one line: a newline in a title is shown as U+FFFD)."""
    widget.border_title = None if title is None else _one_line(title)


def set_border_subtitle(widget: Widget, subtitle: Inert | Content | None) -> None:
    """``widget.border_subtitle``, checked as a title."""
    widget.border_subtitle = None if subtitle is None else _one_line(subtitle)


def set_tooltip(widget: Widget, tip: Inert | Content | None) -> None:
    """``widget.tooltip`` (several lines allowed)."""
    widget.tooltip = None if tip is None else checked(tip)


def add_row(table: DataTable[Any], *cells: Inert | Text, key: str | None = None) -> None:
    """``table.add_row`` with every cell checked (a fleet label, a model id, an engine name)."""
    table.add_row(*(checked_text(c) for c in cells), key=key)


def _one_line(title: Inert | Content) -> Content:
    if isinstance(title, Content):
        plain = title.plain
        if not is_inert(plain):
            return Content(inert(plain))
        shown = settle(plain)
        return title if shown is plain else Content(shown, list(title.spans))
    return Content(inert(title))


__all__ = ["add_row", "checked", "checked_text", "line_input", "notify", "set_border_subtitle",
           "set_border_title", "set_line", "set_tooltip", "show", "static"]
