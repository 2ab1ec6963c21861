"""Pilot tests of the dashboard: every key and flow, through the real composition root."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import pytest
from textual.events import Paste

from eagle_tui.model.events import Event, LineKind, LogLine, LogRestarted, Tick
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.session import Session
from eagle_tui.ui.app import EagleApp
from eagle_tui.ui.app_factory import build_app
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.keys import KEYS
from eagle_tui.ui.screens.help import HelpScreen
from eagle_tui.ui.textual_private import screen_text
from eagle_tui.ui.widgets.gpus import GpuPane
from eagle_tui.ui.widgets.logpane import LogPane, LogStatusBar
from eagle_tui.ui.widgets.logview import LogView
from eagle_tui.ui.widgets.startup import RootCause
from tests.support.ui_helpers import make_app, settle
from tests.support.ui_scenarios import SCENARIOS

WIDE = (160, 48)
COMPACT = (80, 24)


def notes(app: EagleApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_wide_layout_shows_all_five_panes() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        for title in ("Startup", "Metrics", "GPUs", "Log", "Alerts"):
            assert f"─ {title}" in text
        assert "178.4 tok/s" in text
        assert not app.screen.has_class("-compact")
        assert isinstance(app.focused, LogView)


async def test_compact_layout_tabs_and_number_keys() -> None:
    app = make_app(SCENARIOS["misconfigured"]())
    async with app.run_test(size=COMPACT) as pilot:
        await settle(pilot, app)
        assert app.screen.has_class("-compact")
        assert app.query_one("#startup").has_class("-active")
        for key, pane in (("2", "#log-pane"), ("3", "#gpus"), ("4", "#metrics"),
                          ("5", "#alerts"), ("1", "#startup")):
            await pilot.press(key)
            await pilot.pause()
            assert app.query_one(pane).has_class("-active"), key
            assert app.query_one(pane).region.height > 10
        await pilot.press("3")
        await pilot.pause()
        text = screen_text(app)
        for i in range(8):  # 8 GPUs fit 80x24
            assert f" {i} " in text
        assert text.count("/140G") == 8


async def test_resize_keeps_log_filter_and_pause() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        view = app.log_view
        view.set_filter("e")
        shown = view.row_count
        assert 30 < shown < view.line_count
        await pilot.press("up", "up")
        assert not view.follow
        await pilot.resize_terminal(*COMPACT)
        await pilot.pause()
        assert app.screen.has_class("-compact")
        await pilot.press("2")
        await pilot.pause()
        assert view.filter_text == "e" and view.row_count == shown and not view.follow
        await pilot.resize_terminal(200, 60)
        await pilot.pause()
        assert not app.screen.has_class("-compact")
        assert view.row_count == shown and view.line_count > shown


async def test_help_lists_every_key_and_closes() -> None:
    app = make_app([])
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for k in KEYS:
            assert k.display in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_quit_key_exits() -> None:
    app = make_app([], hold=True)
    async with app.run_test(size=COMPACT) as pilot:
        assert not app._exit
        await pilot.press("q")
        assert app._exit and app.return_code == 0


async def test_theme_cycles_dark_light_high_contrast() -> None:
    app = make_app([])
    async with app.run_test(size=COMPACT) as pilot:
        assert app.theme == "eagle-dark"
        seen = []
        for _ in range(3):
            await pilot.press("t")
            seen.append(app.theme)
        assert seen == ["eagle-light", "eagle-high-contrast", "eagle-dark"]


async def test_screenshot_and_save_log_name_their_files(tmp_path: Path) -> None:
    app = make_app(SCENARIOS["loading_weights"](), UiConfig(output_dir=tmp_path))
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        await pilot.press("s")
        await pilot.pause()
        svgs = list(tmp_path.glob("eagle-tui-*.svg"))
        assert len(svgs) == 1 and svgs[0].read_text(encoding="utf-8").startswith("<svg")
        assert any(str(svgs[0]) in n for n in notes(app))
        await pilot.press("ctrl+s")
        await pilot.pause()
        logs = list(tmp_path.glob("eagle-tui-log-*.txt"))
        assert len(logs) == 1
        assert logs[0].read_text(encoding="utf-8").splitlines() == app.log_view.texts()
        assert any(str(logs[0]) in n for n in notes(app))
        await pilot.press("s")
        await pilot.pause()
        assert len(list(tmp_path.glob("eagle-tui-*.svg"))) == 2  # same second: a new name


async def test_save_log_error_is_a_notification(tmp_path: Path) -> None:
    app = make_app([], UiConfig(output_dir=tmp_path / "missing" / "dir"))
    async with app.run_test(size=COMPACT) as pilot:
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert any("Could not save" in n for n in notes(app))


async def test_filter_box_live_filter_enter_and_escape() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        pane = app.query_one(LogPane)
        await pilot.press("slash")
        await pilot.pause()
        # the box is drawn in the status row; the log keeps the focus
        assert pane.mode == "filter" and isinstance(app.focused, LogView)
        assert "filter: show only matching lines" in screen_text(app)
        await pilot.press(*"debug")
        await pilot.pause()
        view = app.log_view
        assert view.filter_text == "debug" and view.row_count == 3
        assert "filter: debug   (3 shown)" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
        assert pane.mode is None and isinstance(app.focused, LogView)
        assert view.filter_text == "debug"
        assert "filter debug (3 shown)" in screen_text(app)
        await pilot.press("slash")
        await pilot.pause()
        assert pane.query_text == "debug"
        await pilot.press("escape")
        await pilot.pause()
        assert view.filter_text == "" and pane.mode is None
        assert "filter:" not in screen_text(app)


async def test_filter_box_keys_type_instead_of_acting() -> None:
    """While the box is open, q / ? / f / End edit the query; the app's keys wait."""
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        pane, view = app.query_one(LogPane), app.log_view
        await pilot.press("slash", *"q?f/", "left", "left", "backspace", "end", "x")
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, HelpScreen)
        assert pane.query_text == "qf/x" and view.filter_text == "qf/x"
        await pilot.press("home", "delete", "ctrl+e", "ctrl+w")
        assert pane.query_text == ""  # "f/x" was one word
        await pilot.press(*"a b", "ctrl+a", "ctrl+k")
        assert pane.query_text == ""
        await pilot.press(*"zz", "ctrl+u")
        assert pane.query_text == "" and view.filter_text == ""
        app.post_message(Paste("warn\x1b[2J\nx"))  # first line, printable characters only
        await pilot.pause()
        assert pane.query_text == "warn[2J" and view.filter_text == "warn[2J"
        await pilot.press("escape")
        await pilot.pause()
        assert pane.mode is None and view.filter_text == ""
        await pilot.press("f")  # the keys act again
        assert view.follow


async def test_filter_box_markup_is_shown_literally() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        await pilot.press("slash", *"[b]x[/b]")
        await pilot.pause()
        assert "filter: [b]x[/b]" in screen_text(app)


async def test_focus_elsewhere_closes_the_box_and_keeps_the_filter() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        pane = app.query_one(LogPane)
        await pilot.press("slash", *"debug")
        await pilot.pause()
        app.query_one(GpuPane).focus()
        await pilot.pause()
        assert pane.mode is None and app.log_view.filter_text == "debug"
        assert app.query_one(LogStatusBar).box is None


async def test_search_enter_then_n_and_shift_n() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        view = app.log_view
        await pilot.press("n")
        assert any("No search yet" in n for n in notes(app))
        await pilot.press("ctrl+f")
        await pilot.press(*"EAGLE3-DEBUG", "enter")
        await pilot.pause()
        debug = [e.lineno for e in view.entries() if "EAGLE3-DEBUG" in e.text]
        assert len(debug) == 3
        first = view.cursor_lineno
        assert first in debug
        await pilot.press("n")
        second = view.cursor_lineno
        assert second == debug[(debug.index(first) + 1) % 3]
        await pilot.press("N")
        assert view.cursor_lineno == first
        assert not view.follow
        await pilot.press("f")
        assert view.follow and view.cursor_lineno is None
        await pilot.press("ctrl+f", *"zzz-none", "enter")
        await pilot.pause()
        assert any("No line matches 'zzz-none'" in n for n in notes(app))


async def test_first_error_and_crash_line_jumps() -> None:
    app = make_app(SCENARIOS["oom_crash"]())
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        view = app.log_view
        await pilot.press("e")
        assert view.cursor_lineno == 14
        await pilot.press("end")
        assert view.follow
        await pilot.press("c")
        assert view.cursor_lineno == 17
        await pilot.press("f")
        await pilot.click(RootCause)
        await pilot.pause()
        assert view.cursor_lineno == 17
        app.query_one(RootCause).focus()
        await pilot.press("end")  # the banner does not eat End: app follows again
        await pilot.pause()
        assert view.follow


async def test_no_error_and_no_crash_messages() -> None:
    app = make_app(SCENARIOS["loading_weights"]())
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        await pilot.press("e", "c")
        await pilot.pause()
        assert "No error lines so far." in notes(app)
        assert "No crash detected." in notes(app)


async def test_marker_wrap_follow_keys() -> None:
    app = make_app(SCENARIOS["ready_metrics"](), hold=True)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app, expect_lines=59)
        view = app.log_view
        await pilot.press("m")
        await pilot.pause(0.1)
        assert view.texts()[-1].startswith("──── marker 1 · ")
        assert [m.label for m in app.state.log.markers] == ["marker 1"]
        rows = view.row_count
        await pilot.press("w")
        assert view.wrap and view.row_count > rows
        await pilot.press("w")
        assert not view.wrap and view.row_count == rows
        await pilot.press("up", "up", "up")
        assert not view.follow
        await pilot.press("f")
        assert view.follow


async def test_gpu_selection_lists_processes() -> None:
    app = make_app(SCENARIOS["ready_metrics"]())
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        await pilot.press("3")
        gpus = app.query_one(GpuPane)
        assert app.focused is gpus
        await pilot.press("down")
        await pilot.pause()
        assert gpus.selected == 0
        assert "└ pid 4242" in screen_text(app)
        await pilot.press("down", "down")
        assert gpus.selected == 1
        await pilot.press("escape")
        await pilot.pause()
        assert gpus.selected is None and "└ pid" not in screen_text(app)


async def test_palette_has_an_entry_for_every_action() -> None:
    app = make_app([])
    async with app.run_test(size=WIDE) as pilot:
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for k in KEYS:
            assert f"{k.label} ({k.display})" in titles
            name = k.action.split("(")[0]
            assert callable(getattr(app, f"action_{name}", None)), name
        cmd = next(c for c in app.get_system_commands(app.screen) if c.title.startswith("Wrap"))
        result = cmd.callback()
        if asyncio.iscoroutine(result):
            await result
        await pilot.pause()
        assert app.log_view.wrap


async def test_critical_alerts_notify_once_per_kind() -> None:
    app = make_app(SCENARIOS["misconfigured"]())
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        crit = [n for n in app._notifications if n.severity == "error"]
        assert sorted(n.title for n in crit) == sorted(
            ["eagle3_draft_with_eagle", "hidden_dims", "drafts_rejected"])
        assert any("EAGLE instead of EAGLE3" in str(n.message) and "7168" in str(n.message)
                   for n in crit)
        app.state = reduce(app.state, [Tick(2e9)])
        await pilot.pause()
        assert len([n for n in app._notifications if n.severity == "error"]) == 3


class GatedSource:
    """Yields ``before``, waits until ``gate`` is set, then yields ``after``."""

    name = "gated"

    def __init__(self, before: list[Event], after: list[Event]) -> None:
        self.before, self.after = before, after
        self.gate = asyncio.Event()

    async def events(self) -> AsyncIterator[Event]:
        for ev in self.before:
            yield ev
        await self.gate.wait()
        for ev in self.after:
            yield ev


async def test_crash_switches_compact_view_to_the_banner() -> None:
    events = SCENARIOS["oom_crash"]()
    crash_at = next(i for i, e in enumerate(events) if type(e).__name__ == "CrashEvent")
    source = GatedSource(events[:crash_at], events[crash_at:])
    session = Session([source], tick_interval=None, batch_interval=0.0)
    app = build_app(UiConfig(), session=session)
    async with app.run_test(size=COMPACT) as pilot:
        await pilot.press("2")
        await pilot.pause()
        assert app.query_one("#log-pane").has_class("-active")
        source.gate.set()  # the crash arrives while the user looks at the log
        await settle(pilot, app)
        assert app.query_one("#startup").has_class("-active")
        assert "CRASHED" in screen_text(app)


async def test_escape_sequences_and_markup_render_inert_in_the_app() -> None:
    evil: list[Event] = [
        Tick(1.0),
        LogLine(1, "\x1b]0;pwned\x07\x1b[2J\x1b[?1049l [link=http://evil]x[/link] [/] [b]y[/b]",
                LineKind.ERROR)]
    app = make_app(evil)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        assert "[link=http://evil]x[/link] [/] [b]y[/b]" in text
        assert "pwned" not in text.split("\n")[0]
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "http://evil" not in svg.split("[link=")[0]


@pytest.mark.parametrize(("reason", "separator", "status"), [
    ("truncated", "──── ✂ log truncated: the file shrank, its lines start again at 1 ────",
     "✂ log truncated"),
    ("replaced", "──── ↻ log replaced: a new file at the path ────", "↻ restarted"),
])
async def test_log_restart_inserts_a_separator(reason: str, separator: str, status: str) -> None:
    """A truncated log (copytruncate) is named so, not as a restarted server: "restarted" is kept
    for a replaced file (a new process's log)."""
    events: list[Event] = [Tick(1.0), LogLine(1, "old"), LogRestarted(reason, t=2.0),
                           LogLine(1, "new")]
    app = make_app(events)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        assert app.log_view.texts() == ["old", separator, "new"]
        line = screen_text(app).split("\n")[0]
        assert status in line
        other = "↻ restarted" if reason == "truncated" else "✂ log truncated"
        assert other not in line


class FailingSession:
    """A session whose run() fails: the app must say so, not crash."""

    def __init__(self) -> None:
        self.state = DashboardState()
        self.stopped = False

    def subscribe(self, cb: Callable[[DashboardState, Sequence[Event]], None]
                  ) -> Callable[[], None]:
        return lambda: None

    def post(self, *events: Event) -> None:
        return None

    async def run(self) -> DashboardState:
        raise RuntimeError("transport exploded")

    def stop(self) -> None:
        self.stopped = True


async def test_session_failure_is_shown_not_raised() -> None:
    session = FailingSession()
    app = build_app(UiConfig(), session=session)
    async with app.run_test(size=WIDE) as pilot:
        await pilot.pause(0.1)
        assert app.session_error == "RuntimeError: transport exploded"
        assert any("transport exploded" in n for n in notes(app))
        assert "session failed" in screen_text(app)
    assert session.stopped


@pytest.mark.parametrize("size", [COMPACT, WIDE, (200, 60)])
async def test_every_layout_renders_each_scenario(size: tuple[int, int]) -> None:
    for name in ("capturing_graphs", "no_gpu"):
        app = make_app(SCENARIOS[name]())
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app)
            assert screen_text(app).strip()
