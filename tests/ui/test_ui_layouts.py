"""The dashboard at 80×24, 120×40 and 160×48: SVG snapshots of loading, serving and a crash with
its fix offered, and a check on each that no label is cut to fit (tests/support/screencheck.py).

The crash is drawn with a run control whose lint has a fix, so ``F`` is offered on the crash
banner as it is for a run eagle-tui launched. Refresh the snapshots after an intended change with
``pytest tests/ui/test_ui_layouts.py --snapshot-update`` and review the new SVGs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from textual.content import Content
from textual.pilot import Pilot

from eagle_tui.model.events import (
    Event,
    HealthSample,
    ProcessExited,
    StopRequested,
    Tick,
)
from eagle_tui.model.launching.control import Intent, Outcome
from eagle_tui.model.launching.remedy import Remedy, set_flag
from eagle_tui.ui.app import EagleApp
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.textual_private import screen_text
from eagle_tui.ui.widgets.footer import KeyFooter
from tests.support.screencheck import partial_labels, width_cuts
from tests.support.ui_helpers import make_app, settle
from tests.support.ui_scenarios import SCENARIOS

SIZES = {"80x24": (80, 24), "120x40": (120, 40), "160x48": (160, 48)}
WIDE = (320, 90)  # nothing needs cutting: the reference for width_cuts
# the demo's moments, and the compact tab (80×24) that shows each
MOMENTS = {"loading_weights": "1", "ready_metrics": "4", "oom_crash": "1", "stopped": "4"}
FIX = set_flag("--mem-fraction-static", 0.8, "leave the CUDA graphs room")


class FixingControl:
    """A launched run's control whose lint knows a fix: ``F`` is offered (nothing is run)."""

    label = "#1 demo"
    command = "python -m sglang.launch_server --mem-fraction-static 0.88"
    remedies: tuple[Remedy, ...] = (FIX,)

    def request(self, intent: Intent, reply: Callable[[Outcome], None]) -> None:
        reply(Outcome("failed", "a test control runs nothing"))

    def fixed(self, remedies: Sequence[Remedy]) -> str | None:
        return self.command.replace("0.88", "0.8")


def stopped() -> list[Event]:
    """Serving, then stopped with ``K``: the stop, then the exit and /health gone."""
    events = SCENARIOS["ready_metrics"]()
    t = max(getattr(e, "t", 0.0) for e in events)
    return [*events, StopRequested(t + 1, "kill"), HealthSample("no_listener", t + 2),
            ProcessExited(t + 2, 4242, 0), Tick(t + 3)]


def events_of(scenario: str) -> list[Event]:
    return stopped() if scenario == "stopped" else SCENARIOS[scenario]()


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    """"stopped by you at 10:15:20": the same clock text on every machine."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def layout_app(scenario: str) -> EagleApp:
    app = make_app(events_of(scenario), UiConfig(theme="eagle-dark"))
    app.animation_level = "none"
    if scenario == "oom_crash":
        app.control = FixingControl()
    return app


def before(app: EagleApp, size: tuple[int, int], scenario: str
           ) -> Callable[[Pilot[Any]], Any]:
    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot, app)
        if size[0] < 120:
            await pilot.press(MOMENTS[scenario])
        await settle(pilot, app)

    return run


async def rendered(scenario: str, size: tuple[int, int]) -> tuple[str, list[str]]:
    """The screen's text and the footer's keys (``key description``) at ``size``."""
    app = layout_app(scenario)
    async with app.run_test(size=size) as pilot:
        await before(app, size, scenario)(pilot)
        footer = app.query_one(KeyFooter)
        keys = [f"{i.display} {i.description}" for i in footer.items if i.description]
        return screen_text(app), keys


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("scenario", list(MOMENTS))
def test_layout_snapshot(snap_compare: Any, scenario: str, size: str) -> None:
    app = layout_app(scenario)
    assert snap_compare(app, terminal_size=SIZES[size],
                        run_before=before(app, SIZES[size], scenario))


@pytest.mark.parametrize("scenario", list(MOMENTS))
async def test_no_label_is_cut_at_any_size(scenario: str) -> None:
    wide, _ = await rendered(scenario, WIDE)
    for name, size in SIZES.items():
        screen, keys = await rendered(scenario, size)
        assert width_cuts(screen, wide) == [], (name, screen)
        footer_line = screen.splitlines()[-1]
        assert partial_labels(footer_line, keys) == [], (name, footer_line)
        if scenario == "stopped":  # the user's stop: said, and no death alert
            assert "STOPPED" in screen.splitlines()[0] and "by you at" in screen, (name, screen)
            assert "CRITICAL" not in screen and "critical" not in screen, (name, screen)
        if scenario == "oom_crash":  # the fix and its key stay in view (no toast over them)
            assert "F: relaunch with the known fix" in screen, (name, screen)
            assert "Lower --mem-fraction-static" in screen, (name, screen)


async def test_the_check_finds_a_label_cut_too_narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks can fail: a Metrics row cut with ``…`` to its width (as rows were before they
    wrapped), and a footer key cropped at the palette's bar."""
    from eagle_tui.ui.widgets import metrics

    def truncating_row(label: str, body: list[Any], source: str, width: int) -> Content:
        head = Content.assemble((f" {label:<{metrics.LABEL_W}}", "$text-muted"), *body)
        room = width - (len(source) + 1 if source else 0)
        if head.cell_length > room:
            head = head.truncate(max(1, room - 1), ellipsis=True)
        return Content.assemble(head, " " * max(1, width - head.cell_length - len(source)),
                                source) if source else head

    wide, _ = await rendered("ready_metrics", WIDE)
    monkeypatch.setattr(metrics, "_row", truncating_row)
    screen, _ = await rendered("ready_metrics", SIZES["160x48"])
    cuts = width_cuts(screen, wide)
    assert cuts and all(c.endswith("…") for c in cuts), cuts
    line = " ? Help  q Quit  t Theme  s S▏^p palette "
    assert partial_labels(line, ["? Help", "t Theme", "s Screenshot"]) == ["s Screenshot"]
    assert partial_labels(line, ["? Help", "q Quit"]) == []
