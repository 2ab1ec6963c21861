"""The key footer: one widget repainted in place when the keys change, never recomposed."""

from __future__ import annotations

from typing import Any

from eagle_tui.ui.screens.help import HelpScreen
from eagle_tui.ui.textual_private import screen_text
from eagle_tui.ui.widgets.footer import KeyFooter
from tests.support.ui_helpers import make_app, settle
from tests.support.ui_scenarios import SCENARIOS


def footer_line(text: str) -> str:
    return text.splitlines()[-1]


async def test_the_filter_box_changes_the_footer_without_widgets() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        footer = app.query_one(KeyFooter)
        assert not footer.children  # drawn by one widget: a change is a repaint, no layout
        keys = [item.key for item in footer.items]
        assert "question_mark" in keys and "slash" in keys
        assert footer_line(screen_text(app)).startswith(" ? Help  q Quit  / Filter ")
        await pilot.press("slash")  # text keys type into the box now: they leave the footer
        await pilot.pause()
        assert [item.description for item in footer.items] == ["Keep filter", "Clear filter"]
        line = footer_line(screen_text(app))
        assert line.startswith(" Enter Keep filter  Esc Clear filter ") and "? Help" not in line
        assert line.endswith("▏^p palette ")
        await pilot.press("escape")
        await pilot.pause()
        assert [item.key for item in footer.items] == keys
        assert not footer.children


async def test_no_repaint_when_the_shown_keys_are_the_same() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        footer = app.query_one(KeyFooter)
        repaints = 0
        real_refresh = footer.refresh

        def counting_refresh(*args: Any, **kwargs: Any) -> Any:
            nonlocal repaints
            repaints += 1
            return real_refresh(*args, **kwargs)

        footer.refresh = counting_refresh  # type: ignore[method-assign]
        footer.bindings_changed(app.screen)
        assert repaints == 0
        await pilot.press("slash")
        await pilot.pause()
        assert repaints == 1


async def test_clicking_a_key_presses_it_and_a_narrow_footer_keeps_the_palette() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        line = footer_line(screen_text(app))
        assert len(line) == 80 and line.endswith("▏^p palette ")  # keys that do not fit: cut
        footer = app.query_one(KeyFooter)
        x = line.index("Help")
        item = footer.item_at(x)
        assert item is not None and item.key == "question_mark"
        assert footer.item_at(line.index("^p")) is not None
        await pilot.hover(KeyFooter, offset=(x, 0))
        assert footer._hover == item
        await pilot.click(KeyFooter, offset=(x, 0))
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
