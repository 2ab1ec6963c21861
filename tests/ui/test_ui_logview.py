"""The log view: bounded buffer, follow/pause, filter, search, jumps, wrap, inert rendering."""

from __future__ import annotations

from pathlib import Path

from rich.segment import Segment
from textual.app import App, ComposeResult

from eagle_tui.model.events import LineKind, LogLine
from eagle_tui.model.ingest.normalize import sanitize
from eagle_tui.ui.theme import builtin_themes, load_stylesheet, variable_defaults
from eagle_tui.ui.widgets.logpane import status_content
from eagle_tui.ui.widgets.logview import LogView, compile_query, wrap_cuts


class LogApp(App[None]):
    CSS = load_stylesheet()

    def __init__(self, max_lines: int = 100) -> None:
        super().__init__()
        self.max_lines = max_lines
        for theme in builtin_themes():
            self.register_theme(theme)
        self.theme = "eagle-dark"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return variable_defaults()

    def compose(self) -> ComposeResult:
        yield LogView(self.max_lines)


def lines(start: int, n: int, kind: LineKind = LineKind.PLAIN, text: str = "line") -> list[LogLine]:
    return [LogLine(i, f"{text} {i}", kind) for i in range(start, start + n)]


def strip_text(view: LogView, y: int) -> str:
    return "".join(seg.text for seg in view.render_line(y))


def test_pure_helpers() -> None:
    assert wrap_cuts("abcdefg", 3) == [(0, 3), (3, 6), (6, 7)]
    assert wrap_cuts("", 3) == [(0, 0)]
    assert wrap_cuts("日本語", 4) == [(0, 2), (2, 3)]
    pat = compile_query("error")
    assert pat is not None and pat.search("ERROR here")
    pat = compile_query("Error")
    assert pat is not None and not pat.search("ERROR here")
    pat = compile_query("[EAGLE3")  # invalid regex → literal
    assert pat is not None and pat.search("x [EAGLE3-DEBUG]")
    assert compile_query("") is None


async def test_bounded_buffer_and_skip_ahead() -> None:
    app = LogApp(max_lines=100)
    async with app.run_test(size=(40, 12)):
        view = app.query_one(LogView)
        for start in range(1, 251, 50):
            view.append(lines(start, 50))
        assert view.line_count == 100
        assert view.texts()[0] == "line 151" and view.texts()[-1] == "line 250"
        view.append(lines(251, 1000))
        assert view.line_count == 100
        assert view.skipped == 900
        assert view.status().dropped == 150 + 100 + 900
        assert view.status().stream == 1250
        assert "· 1,250 lines (100 kept)" in status_content(view.status()).plain
        assert view.texts()[-1] == "line 1250"


async def test_follow_pause_and_resume() -> None:
    app = LogApp()
    async with app.run_test(size=(40, 12)) as pilot:
        view = app.query_one(LogView)
        view.focus()
        view.append(lines(1, 60))
        await pilot.pause()
        assert view.follow and view.scroll_y == view.max_scroll_y
        await pilot.press("up", "up")
        assert not view.follow
        view.append(lines(61, 5))
        assert view.unseen == 5
        top = view.scroll_y
        await pilot.pause()
        assert view.scroll_y == top  # paused: the view does not move
        await pilot.press("end")
        await pilot.pause()
        assert view.follow and view.unseen == 0
        assert view.scroll_y == view.max_scroll_y


async def test_scrolling_up_pauses_before_the_next_batch_can_undo_it() -> None:
    # a flood appends between the key and its (animated) scroll: the key must still pause
    app = LogApp(max_lines=1000)
    async with app.run_test(size=(40, 12)) as pilot:
        view = app.query_one(LogView)
        view.focus()
        view.append(lines(1, 200))
        await pilot.pause()
        for key, more in (("pageup", 201), ("up", 301), ("home", 401)):
            assert view.follow
            view.action_page_up() if key == "pageup" else (
                view.action_scroll_up() if key == "up" else view.action_scroll_home())
            assert not view.follow  # at once, not when the scroll lands
            view.append(lines(more, 100))  # the next batch, before any frame
            await pilot.pause()
            assert not view.follow and view.unseen >= 100
            assert view.scroll_y < view.max_scroll_y
            view.action_scroll_end()
            await pilot.pause()
        view.append(lines(501, 3))
        await pilot.pause()
        assert view.follow and view.scroll_y == view.max_scroll_y


async def test_scrolling_up_with_nothing_to_scroll_keeps_following() -> None:
    app = LogApp()
    async with app.run_test(size=(40, 12)) as pilot:
        view = app.query_one(LogView)
        view.focus()
        view.append(lines(1, 3))
        await pilot.pause()
        await pilot.press("pageup", "up", "home")
        assert view.follow


async def test_paused_view_keeps_its_lines_while_old_ones_are_pruned() -> None:
    app = LogApp(max_lines=100)
    async with app.run_test(size=(40, 12)) as pilot:
        view = app.query_one(LogView)
        view.focus()
        view.append(lines(1, 100))
        await pilot.pause()
        await pilot.press("pageup")
        assert not view.follow
        first_visible = view.row_text(int(view.scroll_y))
        view.append(lines(101, 20))  # prunes 20 from the top
        assert view.row_text(int(view.scroll_y)) == first_visible


async def test_filter_search_and_jumps() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(LogView)
        batch = lines(1, 30)
        batch[9] = LogLine(10, "boom: RuntimeError", LineKind.ERROR)
        batch[19] = LogLine(20, "Decode batch accept len: 2.1", LineKind.STATS)
        batch[24] = LogLine(25, "Decode batch accept len: 2.3", LineKind.STATS)
        view.append(batch)
        view.set_filter("decode")
        assert view.row_count == 2
        assert [view.row_text(i) for i in range(2)] == [batch[19].text, batch[24].text]
        view.set_filter("")
        assert view.row_count == 30
        view.set_search("accept")
        assert view.find(True) == (True, False)
        assert view.cursor_lineno in (20, 25)
        first = view.cursor_lineno
        found, _ = view.find(True)
        assert found and view.cursor_lineno != first
        found, wrapped = view.find(True)
        assert found and wrapped and view.cursor_lineno == first
        assert view.find(False)[0] and view.cursor_lineno != first
        assert not view.follow
        assert view.jump_to_first_error() == 10
        assert view.cursor_lineno == 10
        assert view.jump_to_lineno(3) and view.cursor_lineno == 3
        assert not view.jump_to_lineno(999)
        view.set_search("no such text")
        assert view.find(True) == (False, False)
        await pilot.pause()


async def test_jump_into_hidden_line_clears_the_filter() -> None:
    app = LogApp()
    async with app.run_test(size=(60, 12)):
        view = app.query_one(LogView)
        view.append(lines(1, 30))
        view.set_filter("line 2")
        assert view.jump_to_lineno(7)
        assert view.filter_text == "" and view.cursor_lineno == 7


async def test_first_error_forgotten_when_pruned() -> None:
    app = LogApp(max_lines=100)
    async with app.run_test(size=(60, 12)):
        view = app.query_one(LogView)
        view.append([LogLine(1, "Traceback (most recent call last):", LineKind.TRACEBACK)])
        view.append(lines(2, 150))
        assert view.jump_to_first_error() is None


async def test_wrap_and_markers() -> None:
    app = LogApp()
    async with app.run_test(size=(40, 12)) as pilot:
        view = app.query_one(LogView)
        width = view.scrollable_content_region.width
        view.append([LogLine(1, "x" * (2 * width + 3))])
        assert view.row_count == 1
        view.set_wrap(True)
        assert view.row_count == 3 and view.wrap
        assert view.add_marker("12:00:00") == 1
        assert view.row_count == 4
        assert view.row_text(3).startswith("──── marker 1 · 12:00:00")
        view.set_wrap(False)
        assert view.row_count == 2
        await pilot.pause()


async def test_log_text_is_inert_and_markup_is_literal(tmp_path: Path) -> None:
    app = LogApp()
    async with app.run_test(size=(100, 8)) as pilot:
        view = app.query_one(LogView)
        evil = ("\x1b]0;pwned\x07title \x1b[2Jclear \x1b[?1049l alt [link=http://x]x[/link] "
                "[/] [bold]b[/bold] \x9b31m")
        # sanitized once, where LogLines are made (the parser): the view trusts LogLine text
        clean = sanitize(evil)
        view.append([LogLine(1, clean, LineKind.ERROR)])
        await pilot.pause()
        assert clean != evil  # (was: the view's own re-check counted one unsafe line)
        stored = view.texts()[0]
        assert "\x1b" not in stored and "\x9b" not in stored and "\x07" not in stored
        rendered = strip_text(view, 0)
        assert "[link=http://x]x[/link] [/] [bold]b[/bold]" in rendered
        segments = list(view.render_line(0))
        assert all(seg.style is None or seg.style.link is None for seg in segments)
        assert all("\x1b" not in seg.text for seg in segments)
        assert isinstance(segments[0], Segment)
        out = tmp_path / "saved.txt"
        assert view.save(out) == 1
        assert out.read_text(encoding="utf-8") == stored + "\n"


async def test_highlight_styles_come_from_the_theme() -> None:
    app = LogApp()
    async with app.run_test(size=(100, 8)) as pilot:
        view = app.query_one(LogView)
        view.append([LogLine(1, "[EAGLE3-DEBUG] hidden_states shape=torch.Size([21, 21504])",
                             LineKind.DEBUG), LogLine(2, "plain line")])
        await pilot.pause()
        debug_colour = view.get_component_rich_style("log--debug").color
        plain_colour = view.rich_style.color
        def colours(y: int) -> set[object]:
            return {seg.style.color for seg in view.render_line(y)
                    if seg.style and seg.text.strip()}

        styles_0, styles_1 = colours(0), colours(1)
        assert debug_colour in styles_0
        assert styles_1 == {plain_colour}
        app.theme = "eagle-light"
        await pilot.pause()
        assert view.get_component_rich_style("log--debug").color != debug_colour


async def test_following_stays_at_the_end_when_a_scrollbar_appears() -> None:
    app = LogApp()
    async with app.run_test(size=(40, 12)) as pilot:
        view = app.query_one(LogView)
        view.append(lines(1, 5))
        await pilot.pause()
        view.append([LogLine(6, "x" * 200), *lines(7, 30)])  # wide: a horizontal scrollbar
        for _ in range(50):
            if not view.paint_pending:
                break
            await pilot.pause(0.02)
        await pilot.pause()
        assert view.show_horizontal_scrollbar
        assert view.scroll_y == view.max_scroll_y
        bottom = int(view.scroll_y) + view.scrollable_content_region.height - 1
        assert view.row_text(bottom) == "line 36"


async def test_the_mouse_wheel_up_pauses_following_and_scrolls() -> None:
    """The public ``on_mouse_scroll_up`` pauses first; Textual's own handler still scrolls."""
    from textual import events

    app = LogApp(max_lines=1000)
    async with app.run_test(size=(40, 12)) as pilot:
        view = app.query_one(LogView)
        view.append(lines(1, 200))
        await pilot.pause()
        assert view.follow and view.scroll_y == view.max_scroll_y
        bottom = view.scroll_y
        view.post_message(events.MouseScrollUp(view, 1, 1, 0, -1, 0, False, False, False))
        await pilot.pause()
        assert not view.follow and view.scroll_y < bottom
        sideways = view.scroll_y
        view.post_message(events.MouseScrollUp(view, 1, 1, 0, -1, 0, True, False, False))
        await pilot.pause()
        assert not view.follow and view.scroll_y == sideways  # shift+wheel: horizontal only


async def test_a_row_of_a_huge_line_styles_only_what_it_shows(monkeypatch: object) -> None:
    """A screen of 1 MiB lines costs each row its width, not its line's length:
    the piece of text a row styles and renders is bounded by the scroll and the width."""
    import pytest

    from eagle_tui.ui.widgets import logrender

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    styled: list[int] = []
    real = logrender.inert

    def counting(text: str) -> str:
        styled.append(len(text))
        return real(text)

    monkeypatch.setattr(logrender, "inert", counting)
    app = LogApp(max_lines=100)
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(LogView)
        big = "x" * (1 << 20)
        view.append([LogLine(i, f"{i}:{big}", LineKind.PLAIN) for i in range(1, 11)])
        await pilot.pause()
        styled.clear()
        view._draw.cache.clear()
        rows = [strip_text(view, y) for y in range(view.scrollable_content_region.height)]
        assert any(r.startswith("10:xxx") for r in rows)
        assert styled and max(styled) <= 60 + 64 + 1  # width + slack, never the 1 MiB line
        view.set_wrap(True)
        await pilot.pause()
        styled.clear()
        view._draw.cache.clear()
        [strip_text(view, y) for y in range(view.scrollable_content_region.height)]
        assert styled and max(styled) <= 60 + 64 + 1
