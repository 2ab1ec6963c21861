"""Hostile patterns typed into the dashboard: keys keep being answered (Pilot).

``(a+)+$`` typed into the filter (or search, or a ``[[highlight]]`` rule) over lines of 40
``a`` s and a ``!`` once froze the app: Esc and ``q`` dead. Each shape here is typed into the
filter and the search box of a dashboard whose config highlights with the same shapes; then
probe keys (``/`` opens the box, ``Esc`` closes it) are pressed and every one must be seen
answered, and ``q`` must quit. Latency is a ratio: the probes' time after a hostile pattern
against the same probes after a plain one. A pattern RE2 refuses shows its reason in the box.
"""

from __future__ import annotations

import time

import pytest

from eagle_tui.model.events import LineKind, LogLine
from eagle_tui.ui.app import EagleApp
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.highlight import HighlightRule
from eagle_tui.ui.textual_private import screen_text
from eagle_tui.ui.widgets.logpane import LogPane
from tests.support.ui_helpers import make_app, settle

SHAPES = ["(a+)+$", "(a|aa)+$", "(.*a){20}", "((a*)*)*b", "(a|a?)+$"]
LINES = [LogLine(i + 1, "a" * 40 + "!", LineKind.PLAIN) for i in range(300)]
RULES = tuple(HighlightRule.compile(s, "bold red") for s in SHAPES)
PROBES = 6


def dashboard() -> EagleApp:
    return make_app(LINES, UiConfig(highlight_rules=RULES), hold=True)


async def probe(pilot: object, pane: LogPane) -> tuple[int, float]:
    """``/`` then ``Esc``, PROBES times: (keys seen answered, seconds taken)."""
    answered = 0
    t0 = time.perf_counter()
    for _ in range(PROBES):
        await pilot.press("slash")  # type: ignore[attr-defined]
        answered += pane.mode == "filter"
        await pilot.press("escape")  # type: ignore[attr-defined]
        answered += pane.mode is None
    return answered, time.perf_counter() - t0


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_hostile_pattern_leaves_every_key_answered(shape: str) -> None:
    app = dashboard()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app, expect_lines=len(LINES))
        pane = app.query_one(LogPane)
        view = app.log_view
        _, plain = await probe(pilot, pane)  # the baseline: no query at all

        await pilot.press("slash", *shape)  # a live filter: the rows are rebuilt on each key
        assert view.filter_text == shape and view.row_count in (0, len(LINES))
        await pilot.press("enter")  # kept: every visible row is drawn and highlighted under it
        await pilot.pause()
        answered, hostile = await probe(pilot, pane)
        assert answered == 2 * PROBES

        await pilot.press("ctrl+f", *shape, "enter")
        assert view.search_text == shape
        await pilot.press("n", "N")
        answered, searched = await probe(pilot, pane)
        assert answered == 2 * PROBES
        assert max(hostile, searched) / plain < 10, (plain, hostile, searched)

        await pilot.press("q")
        assert app._exit and app.return_code == 0


@pytest.mark.parametrize(("query", "why"), [("(?<=a)!", "lookaround"), (r"(a)\1", "backref")])
async def test_a_refused_pattern_shows_its_reason_and_nothing_freezes(query: str,
                                                                      why: str) -> None:
    app = dashboard()
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot, app, expect_lines=len(LINES))
        pane = app.query_one(LogPane)
        view = app.log_view
        await pilot.press("slash", *query)
        await pilot.pause()
        assert "✗ " in screen_text(app) and why in screen_text(app)
        assert view.row_count == len(LINES)  # refused: hides nothing
        await pilot.press("enter")
        await pilot.pause()
        assert f"refused: {why}" in screen_text(app)  # the status line keeps saying so
        await pilot.press("ctrl+f", *query, "enter")
        assert pane.mode == "search" and view.search_text == ""  # Enter does not take it
        await pilot.press("ctrl+u", *"a!", "enter")
        assert pane.mode is None and view.search_text == "a!"
        answered, _ = await probe(pilot, pane)
        assert answered == 2 * PROBES
        await pilot.press("q")
        assert app._exit
