"""What the dashboard asks of a run eagle-tui launched (K, R, E) and what it is told back.

The dashboard never stops or starts a server itself: its keys post one of these *intents* to
the run control the assembly gave it (``eagle_tui.assembly.control.LaunchControl``), which does
the work off the UI thread (stop the process group, lint, start, record) and answers with one
:class:`Outcome`. Keeping both as plain values here lets the UI, the control and the tests
speak the same small vocabulary without the UI importing the launch machinery.
"""

from __future__ import annotations

from typing import Literal

from eagle_tui.model.record import Record, record


@record
class Kill(Record):
    """``K``: stop every process of the launched run (TERM, then KILL after the grace)."""


@record
class Restart(Record):
    """``R``: stop the run and start the same command again, as a new run."""


@record
class Relaunch(Record):
    """``E``: lint ``command`` (the edited line) and, unless it has errors (or ``force``: the
    user confirmed a second time), stop the run and start the edit as a new run."""

    command: str
    force: bool = False


Intent = Kill | Restart | Relaunch

OutcomeKind = Literal["stopped", "relaunched", "lint_errors", "failed"]


@record
class Outcome(Record):
    """The answer to one intent.

    ``relaunched`` carries the new run's ``session`` (a session the dashboard can show: fresh
    state, phases, pid and series), its ``label`` for the status line and its ``command``;
    ``lint_errors`` carries the findings, one line each (errors first); ``failed`` says why in
    ``message`` (nothing was changed, or the old run was stopped and the start failed: the
    message says which).
    """

    kind: OutcomeKind
    message: str
    findings: tuple[str, ...] = ()
    session: object | None = None
    label: str = ""
    command: str = ""


__all__ = ["Intent", "Kill", "Outcome", "OutcomeKind", "Relaunch", "Restart"]
