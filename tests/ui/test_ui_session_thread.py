"""The session on its own thread: same states and lines as in-loop, errors surface, clean stop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.app import App

from eagle_tui.assembly.open import open_dashboard
from eagle_tui.assembly.spec import DashboardSpec
from eagle_tui.assembly.threaded import Closer, Opener, ThreadedSession, session_opener
from eagle_tui.model.events import Event, LogLine, Tick
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.session import Session
from eagle_tui.sources.scripted import ScriptedSource
from eagle_tui.ui.app_factory import build_app
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.inbox import BatchInbox, SessionBatch
from eagle_tui.ui.textual_private import screen_text
from tests.support.ui_helpers import settle
from tests.support.ui_scenarios import SCENARIOS


def closing_opener(opened: Session | Callable[[], Session], closed: list[bool]) -> Opener:
    """An opener returning ``opened`` (a session or its builder); closing appends to ``closed``."""

    async def opener() -> tuple[Session | Callable[[], Session], Closer]:
        async def close() -> None:
            closed.append(True)

        return opened, close

    return opener


def threaded(events: list[Event], *, hold: bool = False) -> ThreadedSession:
    session = Session([ScriptedSource(events, hold=hold)], tick_interval=None, batch_interval=0.0)
    return ThreadedSession(session_opener(session))


async def test_dashboard_over_a_threaded_session_matches_the_reduced_state() -> None:
    events = SCENARIOS["misconfigured"]()
    ts = threaded(events)
    app = build_app(UiConfig(), session=ts)
    ts.start()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        expected = reduce(DashboardState(), events)
        assert app.state.alerts == expected.alerts
        assert app.state.config.hidden_dims == expected.config.hidden_dims
        assert app.log_view.line_count == expected.log.lines
        assert "7168 ✗ expected 21504 = 3×7168" in screen_text(app)
    ts.join()


async def test_batches_coalesce_when_the_ui_is_behind() -> None:
    seen: list[tuple[DashboardState, int]] = []

    class InboxApp(App[None]):
        def on_session_batch(self, message: SessionBatch) -> None:
            state, events = inbox.take(message)
            seen.append((state, len(events)))

    app = InboxApp()
    inbox = BatchInbox(app)
    ts = ThreadedSession(session_opener(Session([], tick_interval=None)))
    ts.subscribe(inbox)
    s1 = reduce(DashboardState(), [Tick(1.0)])
    s2 = reduce(s1, [LogLine(1, "a")])
    async with app.run_test() as pilot:
        # two batches from the session thread while the UI is busy: one message, merged
        def two_batches() -> None:
            ts._fanout(s1, [Tick(1.0)])
            ts._fanout(s2, [LogLine(1, "a"), LogLine(2, "b")])

        sender = threading.Thread(target=two_batches)
        sender.start()
        sender.join()
        final = await ts.run()  # the session (no sources) ends at once
        await pilot.pause()
    assert seen[0] == (s2, 3)
    assert inbox.posted == 1
    assert final.log.lines == 0  # the real session's own (empty) final state


async def test_opener_errors_surface_from_start() -> None:
    async def failing() -> tuple[Session, object]:
        raise ConnectionRefusedError("host key refused")

    ts = ThreadedSession(failing)  # type: ignore[arg-type]
    with pytest.raises(ConnectionRefusedError, match="host key refused"):
        await asyncio.to_thread(ts.start, 10.0)


async def test_stop_ends_a_held_session_and_closes() -> None:
    closed: list[bool] = []
    session = Session([ScriptedSource([Tick(1.0)], hold=True)], tick_interval=None)
    ts = ThreadedSession(closing_opener(session, closed))
    await asyncio.to_thread(ts.start, 10.0)
    runner = asyncio.ensure_future(ts.run())
    await asyncio.sleep(0.1)
    ts.stop()
    final = await asyncio.wait_for(runner, 10)
    assert final.clock.now == 1.0
    await asyncio.to_thread(ts.join, 10.0)
    assert closed == [True]


def test_watch_dashboard_reports_config_errors_before_the_tui(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)  # a terminal: the dashboard path
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    spec = DashboardSpec(log=str(tmp_path / "server.log"), config_path=tmp_path / "missing.toml")
    assert open_dashboard(spec) == 2
    assert "does not exist" in capsys.readouterr().err


async def test_a_session_builder_runs_after_release_and_gets_early_posts() -> None:
    built: list[str] = []
    closed: list[bool] = []

    def build() -> Session:  # the dashboard's builder: sources are imported and built here
        built.append("built")
        return Session([ScriptedSource([Tick(1.0)])], tick_interval=None, batch_interval=0.0)

    ts = ThreadedSession(closing_opener(build, closed))
    await asyncio.to_thread(ts.start, 10.0)
    await asyncio.sleep(0.1)
    assert built == []  # not while the UI starts up
    ts.post(LogLine(7, "posted before the session existed"))
    final = await asyncio.wait_for(ts.run(), 10)  # run() releases the thread
    assert built == ["built"] and final.clock.now == 1.0
    assert [ln.text for ln in final.log.recent_lines] == ["posted before the session existed"]
    await asyncio.to_thread(ts.join, 10.0)
    assert closed == [True]


async def test_stop_before_release_never_builds_the_session() -> None:
    built: list[str] = []
    closed: list[bool] = []

    def build() -> Session:
        built.append("built")
        return Session([], tick_interval=None)

    ts = ThreadedSession(closing_opener(build, closed))
    await asyncio.to_thread(ts.start, 10.0)
    ts.stop()
    await asyncio.to_thread(ts.join, 10.0)
    assert built == [] and closed == [True]


async def test_the_test_app_runs_the_users_wiring_and_a_burst_arrives_merged() -> None:
    from tests.support.ui_helpers import make_app

    events: list[Event] = [Tick(1.0), *(LogLine(i, f"line {i}") for i in range(1, 5001))]
    app = make_app(events)
    assert isinstance(app.session, ThreadedSession)  # not an in-loop session
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app, expect_lines=5000)
        assert app.log_view.line_count == 5000 == app.state.log.lines
        assert app._inbox.posted < 100  # messages, for 5,001 events: merged while pending
