"""The dashboard's compositor (``textual_private.RowCompositor``) draws what Textual's draws.

It renders a widget only over the rows an update draws that no widget in front filled; the
frame must be Textual's, cell for cell: every scenario of the real dashboard, wide and compact,
with a toast over it and the log scrolled sideways, for whole-screen and random partial updates.
"""

from __future__ import annotations

import random
import re

import pytest
from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region

from eagle_tui.ui.app import EagleApp
from eagle_tui.ui.textual_private import RowCompositor
from tests.support.ui_helpers import make_app, settle
from tests.support.ui_scenarios import SCENARIOS

# A cursor move with nothing written after it (another move, the row's end or the update's end
# follows): Textual writes one for a piece of a widget that starts where the update's columns
# end (``ChopsUpdate.render_segments`` crops it to nothing); a piece not rendered writes none.
IDLE_MOVE = re.compile(r"\x1b\[\d+;\d+H(?=\x1b\[\d+;\d+H|\n|$)")


def _written(app: EagleApp, compositor: type[Compositor], regions: list[Region]) -> str:
    """What ``compositor``'s partial update of ``regions`` writes to the terminal, without
    the cursor moves that write nothing: ours through its own ``render_partial_update``,
    Textual's through its ``render_partial_update``'s steps with its own ``_render_chops``."""
    comp = app.screen._compositor
    if compositor is RowCompositor:
        comp._dirty_regions.update(regions)
        update = comp.render_partial_update()
        assert update is not None
    else:
        crop = Region.from_union(regions).intersection(comp.size.region)
        spans = list(comp._regions_to_spans(regions))
        chops = compositor._render_chops(comp, crop, {y for y, _, _ in spans}.__contains__)
        update = ChopsUpdate(chops, spans, [cut_set[1:] for cut_set in comp.cuts])
    return IDLE_MOVE.sub("", update.render_segments(app.console))


def _compare(app: EagleApp, rng: random.Random) -> int:
    comp = app.screen._compositor
    assert isinstance(comp, RowCompositor)
    width, height = comp.size
    updates = [[Region(0, 0, width, height)]]
    for _ in range(16):
        regions = []
        for _ in range(rng.randint(1, 4)):
            x, y = rng.randrange(width), rng.randrange(height)
            regions.append(Region(x, y, rng.randint(1, width - x), rng.randint(1, height - y)))
        updates.append(regions)
    for regions in updates:
        ours = _written(app, RowCompositor, regions)
        assert ours == _written(app, Compositor, regions), regions
        assert ours  # (something was drawn)
    return len(updates)


@pytest.mark.parametrize("size", [(160, 48), (100, 30)])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
async def test_the_frame_is_textuals(scenario: str, size: tuple[int, int]) -> None:
    rng = random.Random(f"{scenario}{size}")
    app = make_app(SCENARIOS[scenario]())
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        assert _compare(app, rng)
        app.notify("a toast over the panes", timeout=30)  # an overlay in its own layer
        app.log_view.scroll_to(x=7, animate=False)
        await pilot.pause()
        assert _compare(app, rng)
