"""The key footer: rebuilt after a key's own frame, and only when the keys it shows change."""

from __future__ import annotations

from textual.widgets._footer import FooterKey
from ui_helpers import make_app, settle
from ui_scenarios import SCENARIOS

from eagle_tui.ui.widgets.footer import FOOTER_DELAY, KeyFooter


async def test_the_filter_box_opens_before_the_footer_is_rebuilt() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        footer = app.query_one(KeyFooter)
        before = list(footer.query(FooterKey))
        assert any(k.key == "question_mark" for k in before)
        await pilot.press("slash")  # focus moves to the input: printable keys leave the footer
        await pilot.pause()
        assert list(footer.query(FooterKey)) == before and footer.rebuild_pending
        await pilot.pause(FOOTER_DELAY + 0.1)
        await pilot.pause()
        after = list(footer.query(FooterKey))
        assert not any(k.key == "question_mark" for k in after)  # rebuilt: '?' types now
        await pilot.press("escape")
        await settle(pilot, app)
        assert any(k.key == "question_mark" for k in footer.query(FooterKey))


async def test_no_rebuild_when_the_shown_keys_are_the_same() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        footer = app.query_one(KeyFooter)
        before = list(footer.query(FooterKey))
        await pilot.press("slash", "escape")  # changed and changed back within the delay
        await settle(pilot, app)
        assert not footer.rebuild_pending
        assert list(footer.query(FooterKey)) == before  # the same widgets: never recomposed
