"""A repaint leaves no strip to the cyclic collector.

Textual's ``Strip`` caches what it derives, and a strip derived as itself (divided at its end
only, cropped and extended to its own size) caches itself: a reference cycle, freed only when
the collector runs, with its segments and caches. The dashboard's compositor and rows cut and
pad through ``textual_private.divide`` and ``crop_extend``, which give such a strip back as it
is. Every repaint of every dashboard scenario is drawn here with the collector off, then the
garbage is looked at.
"""

from __future__ import annotations

import gc

import pytest
from textual.geometry import Region
from textual.strip import Strip

from eagle_tui.ui.textual_private import RowCompositor, crop_extend, divide
from tests.support.ui_helpers import make_app, settle
from tests.support.ui_scenarios import SCENARIOS

CACHES = ("_divide_cache", "_crop_cache", "_style_cache", "_filter_cache",
          "_line_length_cache", "_crop_extend_cache", "_offsets_cache")


def _caches_itself(strip: Strip) -> bool:
    for name in CACHES:
        for value in getattr(strip, name)._cache.values():
            if value is strip or (isinstance(value, list) and any(v is strip for v in value)):
                return True
    return False


def _self_cached_after(draw: object) -> list[Strip]:
    gc.collect()
    gc.disable()
    try:
        draw()  # type: ignore[operator]
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return [o for o in gc.garbage if isinstance(o, Strip) and _caches_itself(o)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
async def test_repaints_leave_no_self_cached_strip(scenario: str) -> None:
    app = make_app(SCENARIOS[scenario]())
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        comp = app.screen._compositor
        assert isinstance(comp, RowCompositor)
        width, height = comp.size

        def draw() -> None:
            for step in range(6):  # whole screens and bands of rows, the log scrolled
                app.log_view.scroll_to(x=step % 2 * 5, animate=False)
                comp._dirty_regions.add(Region(0, 0, width, height) if step % 3 == 0
                                        else Region(0, 3 * step, width, 9))
                assert comp.render_partial_update() is not None
                for widget in app.screen.walk_children():
                    widget._styles_cache.clear()  # (rendered again, not from its cache)
                    widget.refresh()

        assert _self_cached_after(draw) == []


def test_the_helpers_give_the_same_cells_and_keep_nothing() -> None:
    strip = Strip.join([Strip.blank(3), Strip.blank(5)])

    def cut() -> None:
        for cuts in ([8], [3, 8], [8, 9], [2], [3, 5, 8]):
            ours = divide(strip, cuts)
            assert [s.text for s in ours] == [s.text for s in strip.divide(cuts)]
        for start, end in ((0, 8), (0, 10), (2, 8), (0, 4)):
            assert crop_extend(strip, start, end, None).text == \
                strip.crop_extend(start, end, None).text

    def used_and_dropped() -> None:
        for use in (lambda s: divide(s, [8]), lambda s: crop_extend(s, 0, 8, None)):
            use(Strip.join([Strip.blank(3), Strip.blank(5)]))

    cut()
    assert _caches_itself(strip)  # (Textual's own calls above)
    assert _self_cached_after(used_and_dropped) == []
