"""K / R / E in the dashboard: the confirmation and edit modals, and the intents they post.

Only a run eagle-tui launched has a run control (``launch`` without ``--read-only``, the demo);
without one the three keys are off and not in the footer. The UI does none of the work: a key
opens a modal, the modal's answer becomes an intent (:mod:`eagle_tui.model.launching.control`)
handed to the control, and the control's answer comes back as a :class:`ControlReply` message
(posted from the control's thread; ``post_message`` is thread-safe). A ``relaunched`` answer carries
the new run's session, which the app then shows instead of the old one.

``E``: the command is edited one argument per line (:mod:`eagle_tui.ui.screens.editor`, which
says how); Enter lints it on the run's host, errors are listed in the modal and the launch needs
a second Enter ("launch anyway"). Esc cancels at any point, nothing is stopped until the
relaunch goes.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import ClassVar, Protocol

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static

from eagle_tui.model.boundary.termtext import Inert
from eagle_tui.model.launching.control import Intent, Kill, Outcome, Restart
from eagle_tui.model.launching.remedy import Remedy
from eagle_tui.ui.keys import CONTROL_OFF
from eagle_tui.ui.safety import inert
from eagle_tui.ui.screens.editor import EditScreen
from eagle_tui.ui.sinks import notify, static

MODAL_CSS = """
.control-box {
    width: 90%;
    max-width: 140;
    height: auto;
    max-height: 80%;
    border: thick $accent;
    background: $surface;
    padding: 1 2;
}
.control-findings { color: $error; height: auto; }
.control-hint { color: $text-muted; }
"""


class RunControl(Protocol):
    """What the dashboard needs of a launched run's control (``assembly/control.py``)."""

    @property
    def label(self) -> str: ...

    @property
    def command(self) -> str: ...

    def request(self, intent: Intent, reply: Callable[[Outcome], None]) -> None: ...

    @property
    def remedies(self) -> tuple[Remedy, ...]: ...

    def fixed(self, remedies: Sequence[Remedy]) -> str | None: ...


class ControlReply(Message):
    """The control's answer to one intent (posted from the control's thread)."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__()
        self.outcome = outcome


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question: ``y`` or Enter confirms, ``n`` or Esc cancels."""

    DEFAULT_CSS = MODAL_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes", show=False),
        Binding("n,escape", "answer(False)", "No", show=False),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="control-box") as box:
            box.border_title = "confirm"
            yield static(Content(self.question), id="confirm-question")
            yield Static(Content("y / Enter: yes · n / Esc: no"), classes="control-hint")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


UNAVAILABLE = CONTROL_OFF


class ControlledApp(App[int]):
    """The app's K / R / E: modals, intents to :attr:`control`, its replies.

    The dashboard (``EagleApp``) supplies :meth:`show_run`, which replaces the shown session
    with a relaunched run's.
    """

    control: RunControl | None = None
    _edit: EditScreen | None = None

    @abstractmethod
    def show_run(self, session: object, label: str) -> None:
        """Replace the shown session with ``session`` (a relaunched run's), named ``label``.

        (Textual's metaclass cannot be combined with ``ABCMeta``: mypy checks this statically.)
        """

    def _ask(self, intent: Intent) -> None:
        control = self.control
        if control is None:
            notify(self, inert(UNAVAILABLE), severity="warning")
            return

        def reply(outcome: Outcome) -> None:  # on the control's thread: a message
            self.post_message(ControlReply(outcome))

        control.request(intent, reply)

    def action_kill_run(self) -> None:
        if self.control is None:
            return
        label = inert(self.control.label)
        question = (f"Kill run {label}? TERM to every process of the run, KILL after the grace "
                    f"period.\n{inert(self.control.command)}")

        def answered(yes: bool | None) -> None:
            if yes:
                notify(self, inert(f"stopping run {label}…"), timeout=3)
                self._ask(Kill())

        self.push_screen(ConfirmScreen(question), answered)

    def action_restart_run(self) -> None:
        if self.control is None:
            return
        label = inert(self.control.label)
        question = (f"Restart run {label} with the same command? It is stopped and started "
                    f"again as a new run.\n{inert(self.control.command)}")

        def answered(yes: bool | None) -> None:
            if yes:
                notify(self, inert(f"restarting run {label}…"), timeout=3)
                self._ask(Restart())

        self.push_screen(ConfirmScreen(question), answered)

    def action_edit_run(self) -> None:
        if self.control is None:
            return
        screen = EditScreen(self.control.label, self.control.command, self._ask)

        def closed(_result: None) -> None:
            self._edit = None

        self._edit = screen
        self.push_screen(screen, closed)

    def on_control_reply(self, message: ControlReply) -> None:
        outcome = message.outcome
        edit = self._edit
        if outcome.kind == "lint_errors" and edit is not None:
            edit.show_findings(outcome.findings, edit.submitted)
            return
        if outcome.kind == "failed":
            if edit is not None:
                edit.failed(outcome.message)
            notify(self, inert(outcome.message), title=Inert("run control"), severity="error",
                   timeout=15)
            return
        if outcome.kind == "relaunched" and outcome.session is not None:
            if edit is not None:
                edit.dismiss(None)
            self.show_run(outcome.session, outcome.label)
        notify(self, inert(outcome.message), title=Inert("run control"), timeout=6)


__all__ = ["UNAVAILABLE", "ConfirmScreen", "ControlReply", "ControlledApp", "EditScreen",
           "RunControl"]
