"""One-row widgets drawn from their content (``ui/widgets/onerow``) are cell for cell what
Textual's own path draws, keep their row while nothing changes, and leave to Textual a widget
whose styles add more than padding."""

from __future__ import annotations

import random

import pytest
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from eagle_tui.ui.widgets.logpane import FindBox, LogStatusBar

STYLES = ("", "$success", "$warning bold", "$text-muted", "$accent bold", "reverse", "$error",
          "bold", "italic $secondary")
WORDS = ("● following", " · ", "1,470 lines", "⏸ paused", "host ", "node-1", "filter: ",
         "Decode", "ünïcode", "宽字符", " — End/f to follow", "x")


class BarApp(App[None]):
    CSS = "LogStatusBar { height: 1; padding: 0 1; background: $panel; }"

    def compose(self) -> ComposeResult:
        yield LogStatusBar(id="log-status")


def _content(rng: random.Random, width: int) -> Content:
    parts: list[tuple[str, str]] = []
    while True:
        part = (rng.choice(WORDS), rng.choice(STYLES))
        if Content.assemble(*parts, part).cell_length > width:
            return Content.assemble(*parts)
        parts.append(part)


def _cells(strip: Strip) -> list[tuple[str, object, object, object, object]]:
    """Per cell: the character, its background and, where something is drawn, its colour,
    boldness and reversal (a blank cell's foreground is not seen)."""
    out = []
    for seg in strip:
        if seg.control:
            continue
        style = seg.style
        for ch in seg.text:
            if style is None:
                out.append((ch, None, None, None, None))
            else:
                shown = ch != " " or style.reverse
                out.append((ch, style.bgcolor, style.color if shown else None,
                            bool(style.bold) if shown else None, bool(style.reverse)))
    return out


@pytest.mark.parametrize("no_color", [False, True])
async def test_the_row_is_what_textuals_own_path_draws(no_color: bool,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    rng = random.Random(11)
    app = BarApp()
    async with app.run_test(size=(70, 5)) as pilot:
        bar = app.query_one(LogStatusBar)
        for i in range(60):
            if i % 3 == 0:
                bar.edit(FindBox("filter", "".join(rng.choice("ab [/]") for _ in range(
                    rng.randint(0, 90))), 0, note=rng.choice(["", " (3 shown)"])))
            else:
                bar.edit(None)
                bar.show(_content(rng, rng.randint(0, 68)))
            if i % 5 == 0:
                app.theme = rng.choice(["textual-dark", "textual-light", "nord"])
            await pilot.pause()
            width = bar.outer_size.width
            for crop in (Region(0, 0, width, 1), Region(3, 0, width - 10, 1)):
                fast = bar.render_lines(crop)
                slow = Widget.render_lines(bar, crop)
                assert [_cells(s) for s in fast] == [_cells(s) for s in slow], (i, crop)


async def test_the_row_is_kept_until_its_content_width_or_style_change() -> None:
    app = BarApp()
    async with app.run_test(size=(60, 5)) as pilot:
        bar = app.query_one(LogStatusBar)
        bar.show(Content.assemble(("● following", "$success"), " · 7 lines"))
        await pilot.pause()
        crop = Region(0, 0, bar.outer_size.width, 1)
        first = bar.render_lines(crop)[0]
        assert bar.render_lines(crop)[0] is first
        bar.show(Content.assemble(("● following", "$success"), " · 8 lines"))
        assert bar.render_lines(crop)[0] is not first
        again = bar.render_lines(crop)[0]
        app.theme = "textual-light"
        await pilot.pause()
        assert bar.render_lines(crop)[0] is not again
        await pilot.resize_terminal(50, 5)
        await pilot.pause()
        assert bar.render_lines(Region(0, 0, bar.outer_size.width, 1))[0].cell_length == 50


async def test_a_row_wider_than_the_widget_is_cut_at_its_padding() -> None:
    app = BarApp()
    async with app.run_test(size=(30, 5)) as pilot:
        bar = app.query_one(LogStatusBar)
        bar.show(Content("0123456789" * 5))
        await pilot.pause()
        row = bar.render_lines(Region(0, 0, 30, 1))[0]
        assert row.text == " " + "0123456789" * 2 + "01234567 "


async def test_a_border_leaves_the_widget_to_textual() -> None:
    app = BarApp()
    async with app.run_test(size=(40, 8)) as pilot:
        bar = app.query_one(LogStatusBar)
        bar.styles.height = 3
        bar.styles.border = ("round", "red")
        bar.show(Content("inside"))
        await pilot.pause()
        rows = bar.render_lines(Region(0, 0, 40, 3))
        assert len(rows) == 3 and "╭" in rows[0].text and "inside" in rows[1].text
        assert [Segment.get_line_length(list(r)) for r in rows] == [40, 40, 40]


@pytest.mark.parametrize("rule", ["content_align", "text_align", "tint"])
async def test_a_style_that_moves_or_tints_the_text_leaves_it_to_textual(rule: str) -> None:
    app = BarApp()
    async with app.run_test(size=(40, 5)) as pilot:
        bar = app.query_one(LogStatusBar)
        bar.show(Content.assemble(("● following", "$success"), " · 3 lines"))
        if rule == "content_align":
            bar.styles.content_align = ("center", "top")
        elif rule == "text_align":
            bar.styles.text_align = "right"
        else:
            bar.styles.tint = "red 40%"
        await pilot.pause()
        crop = Region(0, 0, 40, 1)
        assert [_cells(s) for s in bar.render_lines(crop)] == [
            _cells(s) for s in Widget.render_lines(bar, crop)]
        if rule != "tint":
            assert not bar.render_lines(crop)[0].text.startswith(" ●")
