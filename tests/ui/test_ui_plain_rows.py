"""The log view's rows drawn without Textual's styles cache (``textual_private.plain_rows``)
are cell for cell what that cache draws, and a style that adds to a row turns the shortcut off."""

from __future__ import annotations

import random

import pytest
from rich.segment import Segment
from textual.geometry import Region
from textual.scroll_view import ScrollView
from textual.strip import Strip

from eagle_tui.model.events import LineKind, LogLine
from eagle_tui.ui.textual_private import plain_rows
from eagle_tui.ui.widgets.logview import LogView
from tests.ui.test_ui_logview import LogApp

KINDS = list(LineKind)
WORDS = ("Decode batch", "accept len: 3.2", "[EAGLE3-DEBUG]", "ERROR", "Traceback", "ok",
         "gen throughput (token/s): 180.5", "#running-req: 4", "127.0.0.1:5 \"POST /x\" 200")


def _lines(rng: random.Random, start: int, n: int) -> list[LogLine]:
    return [LogLine(start + i, " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 30))),
                    rng.choice(KINDS)) for i in range(n)]


def _cells(strip: Strip, width: int) -> list[tuple[str, object]]:
    """(character, style) per cell of the row's first ``width`` cells."""
    return [(ch, seg.style) for seg in Segment.split_and_crop_lines(
        list(strip), width, pad=False).__next__() for ch in seg.text if not seg.control]


@pytest.mark.parametrize("no_color", [False, True])
async def test_plain_rows_are_what_the_styles_cache_draws(
        no_color: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if no_color:  # (Textual then adds a line filter that takes every colour away)
        monkeypatch.setenv("NO_COLOR", "1")
    rng = random.Random(7)
    app = LogApp(max_lines=400)
    async with app.run_test(size=(90, 24)) as pilot:
        view = app.query_one(LogView)
        assert len(view.get_line_filters()) == 1 + no_color
        seq = 1
        for round_ in range(8):
            view.append(_lines(rng, seq, rng.choice([3, 30, 120])))
            seq += 120
            if round_ % 3 == 2:
                view.scroll_to(x=rng.randint(0, 40), y=rng.randint(0, 200), animate=False)
            await pilot.pause()
            w, h = view.region.size
            shown = view.scrollable_content_region.width  # (a scrollbar covers the rest)
            for crop in (Region(0, 0, w, h), Region(0, 3, w, 5), Region(7, 0, shown - 7, h)):
                fast = view.render_lines(crop)
                slow = ScrollView.render_lines(view, crop)
                span = min(crop.width, shown - crop.x)
                assert [_cells(s, span) for s in fast] == [_cells(s, span) for s in slow]


async def test_the_log_view_takes_the_shortcut_and_a_padded_one_does_not() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(LogView)
        view.append(_lines(random.Random(1), 1, 40))
        await pilot.pause()
        crop = Region(0, 0, *view.region.size)
        assert plain_rows(view, crop, view.render_line) is not None
        view.styles.padding = (0, 1)
        await pilot.pause()
        assert plain_rows(view, crop, view.render_line) is None
        assert len(view.render_lines(crop)) == crop.height  # Textual's own path draws it
