"""``E`` in the dashboard: the run's command as one argument per line, linted and relaunched.

The command is shown by :mod:`eagle_tui.model.launching.cmdlines` (env words, the entry, then
one flag and its value(s) a line; a dotted-keys JSON value one field a line) in a ``TextArea``:
nothing is selected on open, so the first key typed changes one character, and ctrl+z / ctrl+y
undo and redo. Under it, the lines that differ from the running command (``original``) are
listed as they are typed.

Keys: Enter lints the lines and, when the lint finds no error, stops the run and launches them
as a new run (the dashboard's loop is "F, Enter"); errors are listed in the dialog and a second
Enter launches anyway, any edit asks for a new lint. ctrl+j (or shift+enter, where the terminal
sends it: most send Enter) starts a new argument line. Esc cancels; nothing is stopped until
the relaunch goes. Secrets stay masked (``--api-key ***``): a masked word left as it is keeps its
value (the control's ``restore_secrets`` puts it back, word for word).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from eagle_tui.model.boundary import shellwords
from eagle_tui.model.events import Engine
from eagle_tui.model.launching.cmdline import CommandError, split_command
from eagle_tui.model.launching.cmdlines import (
    command_lines,
    diff_lines,
    first_difference,
    lines_argv,
)
from eagle_tui.model.launching.control import Relaunch
from eagle_tui.model.launching.flags import FlagTable
from eagle_tui.model.launching.redact import redact_words
from eagle_tui.ui.safety import inert
from eagle_tui.ui.sinks import set_border_title, show, static

EDITOR_CSS = """
EditScreen { align: center middle; }
.control-box {
    width: 90%;
    max-width: 140;
    height: auto;
    max-height: 90%;
    border: thick $accent;
    background: $surface;
    padding: 1 2;
}
#edit-command { height: auto; max-height: 20; min-height: 5; margin: 1 0 0 0; }
#edit-diff { height: auto; max-height: 10; color: $text-muted; }
.control-findings { color: $error; height: auto; }
.control-hint { color: $text-muted; }
"""
HINT = ("Enter: lint, then stop the run and launch the lines as a new run · ctrl+j: new line · "
        "ctrl+z / ctrl+y: undo / redo · Esc: cancel")


@cache
def _tables() -> dict[Engine, FlagTable]:
    """The engines' flag tables (read once; without them the lines are grouped by words)."""
    from eagle_tui.probe.tables import load_tables

    try:
        return load_tables()
    except Exception:  # a missing or broken table only costs the grouping
        return {}


def _lines(command: str) -> list[str]:
    """``command`` as editor lines, secrets masked (unsplittable text: one line, as it is)."""
    try:
        words = redact_words(split_command(command))
    except CommandError:
        return [command]
    return command_lines(words, _tables())


class CommandArea(TextArea):
    """The lines: Enter submits (a :class:`Submitted`), ctrl+j / shift+enter add a line."""

    class Submitted(Message):
        """Enter was pressed in the lines."""

    async def _on_key(self, event: events.Key) -> None:
        # (Textual calls TextArea's own handler after this one unless the default is prevented)
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted())
        elif event.key in ("ctrl+j", "shift+enter"):
            event.stop()
            event.prevent_default()
            self.insert("\n")


class EditScreen(ModalScreen[None]):
    """Edit the run's command, lint it, relaunch it (see the module docstring)."""

    DEFAULT_CSS = EDITOR_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False),
    ]

    def __init__(self, label: str, command: str, submit: Callable[[Relaunch], None],
                 original: str | None = None) -> None:
        super().__init__()
        self.label = label
        self.command = command
        self._submit = submit
        self.original_lines = _lines(command if original is None else original)
        self.start_lines = _lines(command)
        self.armed: str | None = None  # the command whose lint errors were shown: Enter forces
        self.waiting = False
        self.submitted = ""  # the command line last handed to ``submit``

    def compose(self) -> ComposeResult:
        with Vertical(classes="control-box") as box:
            set_border_title(box, inert(f"edit and relaunch {self.label}"))
            yield CommandArea("\n".join(inert(x) for x in self.start_lines), id="edit-command",
                              soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
            yield Static("", id="edit-diff")
            yield Static("", classes="control-findings", id="edit-findings")
            yield static(Content(HINT), classes="control-hint", id="edit-hint")

    def on_mount(self) -> None:
        # the toasts shown (an alert's, which the fix being edited answers) covered the
        # box's hint line, where Enter's meaning is, on a small terminal
        self.app.clear_notifications()
        area = self.area
        row = first_difference(self.original_lines, self.start_lines)
        if row is None:
            row = 1 if len(self.start_lines) > 1 else 0
            starts = [i for i, x in enumerate(self.start_lines) if x.startswith("-")]
            row = starts[0] if starts else row
        row = min(row, max(area.document.line_count - 1, 0))
        area.move_cursor((row, len(area.document.get_line(row))))
        area.focus()
        self._show_diff()

    @property
    def area(self) -> CommandArea:
        return self.query_one("#edit-command", CommandArea)

    @property
    def text(self) -> str:
        """The lines as typed."""
        return self.area.text

    def argv(self) -> list[str]:
        """The words the lines mean (``ValueError``: a line with an unclosed quote)."""
        return lines_argv(self.text, _tables())

    def command_text(self) -> str:
        """The lines as one shell command line, as the control reads it."""
        return shellwords.join(self.argv())

    def on_command_area_submitted(self, event: CommandArea.Submitted) -> None:
        event.stop()
        if self.waiting:
            return
        try:
            text = self.command_text()
        except ValueError as exc:
            self.failed(str(exc))
            return
        force = self.armed is not None and self.armed == text
        self.waiting = True
        self.submitted = text
        self._hint("linting…" if not force else "launching anyway…")
        self._submit(Relaunch(text, force=force))

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self._show_diff()
        if self.armed is None:
            return
        try:
            same = self.command_text() == self.armed
        except ValueError:
            same = False
        if not same:
            self.armed = None
            self._hint("changed: Enter lints the new lines")

    def _show_diff(self) -> None:
        changes = diff_lines(self.original_lines, self.text.split("\n"))
        marks = {"added": "+", "removed": "-", "changed": "~"}
        rows = []
        for c in changes[:9]:
            if c.kind == "changed":
                rows.append(f"~ {c.old}  →  {c.new}")
            else:
                rows.append(f"{marks[c.kind]} {c.new if c.new is not None else c.old}")
        if len(changes) > 9:
            rows.append(f"… and {len(changes) - 9} more")
        head = "changes from the running command:" if rows else "no change from the running command"
        show(self.query_one("#edit-diff", Static),
             Content("\n".join(inert(x) for x in [head, *rows])))

    def show_findings(self, lines: tuple[str, ...], text: str) -> None:
        """The lint found errors in ``text``: list them; Enter again launches anyway."""
        self.waiting = False
        self.armed = text
        show(self.query_one("#edit-findings", Static),
             Content("\n".join(inert(x) for x in lines)))
        self._hint("lint found errors: Enter again launches anyway · edit to re-lint · "
                   "Esc: cancel")

    def failed(self, message: str) -> None:
        self.waiting = False
        show(self.query_one("#edit-findings", Static), inert(message))
        self._hint("Enter: try again · Esc: cancel")

    def _hint(self, text: str) -> None:
        show(self.query_one("#edit-hint", Static), inert(text))

    def action_cancel(self) -> None:
        self.dismiss(None)


__all__ = ["CommandArea", "EditScreen"]
