"""``F`` in the dashboard: relaunch the run with the fix eagle-tui knows.

The fixes are remedies (:mod:`eagle_tui.model.launching.remedy`): those of the firing alerts
(an EAGLE-3 draft run as EAGLE) and those of the lint of the running command. ``F`` is offered
(footer, the alert that has one, the crash banner) only while one exists and the run has a
control. It opens the relaunch dialog with the fix applied and the change against the running
command shown above it; Enter lints and relaunches as ``E`` does (a new run, its parent
recorded, the masked secrets put back by the control), and ctrl+r switches the line between
the fix and the running command.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content

from eagle_tui.model.launching.control import Relaunch
from eagle_tui.model.launching.remedy import Remedy
from eagle_tui.model.state.alert import Alert
from eagle_tui.ui.control import ControlledApp
from eagle_tui.ui.safety import inert
from eagle_tui.ui.screens.editor import EditScreen
from eagle_tui.ui.sinks import notify, static


class FixScreen(EditScreen):
    """The relaunch dialog opened on the fixed command: what the fix is, above the editor (which
    shows the change against the running command); ctrl+r switches the lines between the fix and
    the running command."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "toggle_original", "Running command", show=False),
    ]

    def __init__(self, label: str, command: str, submit: Callable[[Relaunch], None], *,
                 original: str, titles: Sequence[str]) -> None:
        super().__init__(label, command, submit, original=original)
        self.fixed_command = command
        self.original = original
        self.titles = tuple(titles)
        self.showing_fix = True

    def on_mount(self) -> None:
        head = Content.assemble(("fix: ", "$success bold"), inert("; ".join(self.titles)),
                                ("  ·  ctrl+r: the running command / the fix", "$text-muted"))
        self.query_one(".control-box").mount(static(head, id="fix-diff"), before=0)

    def action_toggle_original(self) -> None:
        self.showing_fix = not self.showing_fix
        lines = self.start_lines if self.showing_fix else self.original_lines
        self.area.load_text("\n".join(inert(x) for x in lines))


def fix_titles(remedies: Sequence[Remedy]) -> list[str]:
    return list(dict.fromkeys(r.describe() for r in remedies))


class FixingApp(ControlledApp):
    """The app's ``F``: which fixes exist now, where ``F`` is offered, and the dialog."""

    fix_offered = False
    _fix_alerts: tuple[Alert, ...] = ()

    def fix_remedies(self) -> tuple[Remedy, ...]:
        """The alerts' remedies first (what is wrong now), then the lint's."""
        control = self.control
        if control is None:
            return ()
        found = [a.remedy for a in self._fix_alerts if a.remedy is not None]
        return tuple(dict.fromkeys([*found, *control.remedies]))

    def sync_fix(self, alerts: Sequence[Alert]) -> None:
        """Called with each pane update: ``F`` appears and goes with the fixes."""
        from eagle_tui.ui.widgets.alerts import AlertsPane
        from eagle_tui.ui.widgets.startup import StartupPane

        self._fix_alerts = tuple(alerts)
        offered = bool(self.fix_remedies())
        if offered == self.fix_offered:
            return
        self.fix_offered = offered
        self.refresh_bindings()
        for pane in (*self.query(AlertsPane), *self.query(StartupPane)):
            pane.fix_offered = offered
            pane.repaint()

    def action_fix_run(self) -> None:
        control = self.control
        remedies = self.fix_remedies()
        fixed = control.fixed(remedies) if control is not None and remedies else None
        if control is None or fixed is None:
            notify(self, inert("no known fix changes this run's command"), severity="warning")
            return
        screen = FixScreen(control.label, fixed, self._ask, original=control.command,
                           titles=fix_titles(remedies))

        def closed(_result: None) -> None:
            self._edit = None

        self._edit = screen
        self.push_screen(screen, closed)


__all__ = ["FixScreen", "FixingApp", "fix_titles"]

