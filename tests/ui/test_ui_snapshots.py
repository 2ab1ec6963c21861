"""SVG snapshots of the dashboard's key scenarios at 80×24 and 160×48, dark and light.

Scripted events (no ticker, frozen file-name clock, animations off) make every frame identical
from run to run. On a mismatch pytest-textual-snapshot writes an HTML report with both images;
after an intended change, refresh with ``pytest tests/ui/test_ui_snapshots.py --snapshot-update``
and review the new SVGs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from eagle_tui.ui.app import EagleApp
from eagle_tui.ui.config import UiConfig
from tests.support.ui_helpers import make_app, settle
from tests.support.ui_scenarios import SCENARIOS

# which compact tab shows the scenario's point
COMPACT_TAB = {
    "loading_weights": "1",
    "capturing_graphs": "1",
    "ready_metrics": "4",
    "misconfigured": "5",
    "oom_crash": "1",
    "no_gpu": "3",
}
SIZES = {"80x24": (80, 24), "160x48": (160, 48)}
THEMES = ("eagle-dark", "eagle-light")


def snapshot_app(scenario: str, theme: str) -> EagleApp:
    app = make_app(SCENARIOS[scenario](), UiConfig(theme=theme))
    app.animation_level = "none"
    return app


def before(app: EagleApp, keys: tuple[str, ...]) -> Callable[[Pilot[Any]], Any]:
    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot, app)
        for key in keys:
            await pilot.press(key)
        await settle(pilot, app)

    return run


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("scenario", list(COMPACT_TAB))
def test_snapshot(snap_compare: Any, scenario: str, size: str, theme: str) -> None:
    app = snapshot_app(scenario, theme)
    width, height = SIZES[size]
    keys = (COMPACT_TAB[scenario],) if width < 120 else ()
    assert snap_compare(app, terminal_size=(width, height), run_before=before(app, keys))


def test_snapshot_filter_box_open(snap_compare: Any) -> None:
    """The filter box drawn in the log's status row, with its footer keys."""
    app = snapshot_app("ready_metrics", "eagle-dark")
    keys = ("slash", *"debug", "left")
    assert snap_compare(app, terminal_size=SIZES["160x48"], run_before=before(app, keys))


def test_snapshot_relaunch_editor(snap_compare: Any) -> None:
    """``E`` (or the fix key) over the dashboard: one argument a line, the diff under it."""
    from tests.support.editor_scenario import editor_screen

    app = snapshot_app("misconfigured", "eagle-dark")

    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot, app)
        app.clear_notifications()
        await app.push_screen(editor_screen())
        await settle(pilot, app)

    assert snap_compare(app, terminal_size=(120, 40), run_before=run)
