"""The help screen: every key from the one key table, plus the keys of focused widgets."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen

from eagle_tui.ui.keys import KEYS, LOCAL_KEYS
from eagle_tui.ui.sinks import static


def help_content() -> Content:
    lines = [Content.styled("Keys", "bold $accent")]
    for k in KEYS:
        lines.append(Content.assemble((f"  {k.display:<10}", "bold $primary"), (k.help, "$text")))
    group = ""
    for where, keys, what in LOCAL_KEYS:
        if where != group:
            group = where
            lines.append(Content(""))
            lines.append(Content.styled(where, "bold $accent"))
        lines.append(Content.assemble((f"  {keys:<20}", "bold $primary"), (what, "$text")))
    lines.append(Content(""))
    lines.append(Content.styled("Esc, q or ? closes this screen.", "$text-muted"))
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", show=False),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box") as box:
            box.border_title = "eagle-tui help"
            yield static(help_content(), id="help-text")


__all__ = ["HelpScreen", "help_content"]
