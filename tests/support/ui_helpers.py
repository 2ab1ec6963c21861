"""Helpers for the dashboard tests: build the real app on a scripted session, read the screen."""

from __future__ import annotations

from collections.abc import Sequence

from textual.pilot import Pilot

from eagle_tui.assembly.open import prepare_dashboard
from eagle_tui.assembly.spec import DashboardSpec
from eagle_tui.assembly.threaded import session_opener
from eagle_tui.model.events import Event
from eagle_tui.session import Session
from eagle_tui.sources.scripted import ScriptedSource
from eagle_tui.ui.app import EagleApp
from eagle_tui.ui.config import UiConfig
from tests.support.ui_scenarios import FROZEN_CLOCK


def scripted_session(events: Sequence[Event], *, hold: bool = False,
                     delays: float | Sequence[float] = 0.0) -> Session:
    """A real session over a scripted source; no ticker, so the events' own times rule."""
    return Session([ScriptedSource(list(events), delays, hold=hold)], tick_interval=None,
                   batch_interval=0.0)


def make_app(events: Sequence[Event], config: UiConfig | None = None, *, hold: bool = False,
             label: str = "scripted", delays: float | Sequence[float] = 0.0) -> EagleApp:
    """The dashboard a user gets (the session on its own thread, batches as messages) over a
    scripted session, with a frozen clock."""
    session = scripted_session(events, hold=hold, delays=delays)
    return prepare_dashboard(DashboardSpec(label=label), opener=session_opener(session),
                             config=config or UiConfig(), clock=lambda: FROZEN_CLOCK).app


async def settle(pilot: Pilot[int], app: EagleApp, expect_lines: int | None = None) -> None:
    """Wait (bounded) until the scripted session has delivered everything, then for a frame."""
    for _ in range(300):
        done = app.session_done or (
            expect_lines is not None and app.log_view.line_count >= expect_lines)
        if done and not app.render_pending:
            break
        await pilot.pause(0.01)
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


