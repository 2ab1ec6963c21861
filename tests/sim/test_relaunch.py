"""K / R / E in the dashboard against the simulator, launched as ``demo`` launches it.

The simulated server is the engine's own command line (``python -m sglang.launch_server ...
--speculative-algorithm EAGLE --speculative-draft-model-path <draft>``), started detached in its
own process group through the launch machinery, recorded in a history of the test's own, and
watched by the real dashboard (Pilot) with its run control. Each test bounds its waits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import psutil
import pytest
from textual.pilot import Pilot

from eagle_tui.assembly.open import Dashboard, prepare_dashboard
from eagle_tui.commands.demo_launch import DemoLaunch, demo_subscribers
from eagle_tui.history.store import RunStore
from eagle_tui.model.events import Phase
from eagle_tui.model.launching.cmdline import split_command
from eagle_tui.model.views import figures
from eagle_tui.model.views.runsummary import ready_seconds
from eagle_tui.ui.app import EagleApp
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.control import ConfirmScreen, EditScreen
from eagle_tui.ui.textual_private import screen_text

LIMIT_S = 60.0




def group_alive(pgid: int) -> list[int]:
    alive = []
    for p in psutil.process_iter():
        try:
            if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                alive.append(p.pid)
        except (OSError, psutil.Error):
            continue
    return alive


def demo_args(scenario: str) -> argparse.Namespace:
    return argparse.Namespace(engine="sglang", scenario=scenario, gpus=2, seed=0, speed=40.0,
                              port=0, record=None)


class Launched:
    def __init__(self, demo: DemoLaunch, dash: Dashboard) -> None:
        self.demo = demo
        self.dash = dash
        self.app: EagleApp = dash.app
        self.store = demo.store


@pytest.fixture
async def launched(tmp_path: Path, request: pytest.FixtureRequest
                   ) -> AsyncIterator[Launched]:
    scenario = getattr(request, "param", "misconfigured")
    demo = DemoLaunch(demo_args(scenario), store=RunStore(tmp_path / "runs.sqlite3"))
    dash: Dashboard | None = None
    try:
        spec, control = await demo.start()
        first = demo_subscribers(demo.store)(control.run, spec)
        dash = prepare_dashboard(spec, control=control, subscribers=first, config=UiConfig())
        yield Launched(demo, dash)
    finally:
        if dash is not None:
            await asyncio.to_thread(dash.close)
        await asyncio.to_thread(demo.close)


async def until(pilot: Pilot[int], ok: Callable[[], bool], what: str,
                limit: float = LIMIT_S) -> None:
    deadline = time.monotonic() + limit
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.1)


def serving_accept(app: EagleApp) -> float | None:
    state = app.state
    if state.startup.phase is not Phase.SERVING or len(state.stats.accept_len) < 2:
        return None
    return figures.accept_len(state).value


async def test_kill_asks_then_stops_the_group(launched: Launched) -> None:
    app, store = launched.app, launched.store
    run = store.list(demo=True)[0]
    assert run.pgid is not None and group_alive(run.pgid)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.state.live.process is not None, "the process")
        footer = str(app.query_one("KeyFooter").render())
        assert "Kill" in footer and "Restart" in footer and "Edit" in footer
        await pilot.press("K")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # cancelled: nothing happens
        assert not isinstance(app.screen, ConfirmScreen) and group_alive(run.pgid)
        await pilot.press("K")
        await pilot.press("y")
        await until(pilot, lambda: not group_alive(run.pgid or 0), "the group to be gone", 20)
        await until(pilot, lambda: app.state.live.process_exit is not None,
                    "the exit on screen", 10)
        await until(pilot, lambda: store.get(str(run.id)).state == "stopped", "the row", 10)
        # the user's own stop is no failure: no alert, and the screen says who stopped it
        await until(pilot, lambda: figures.figures(app.state).live.activity == "stopped",
                    "the stopped state", 10)
        await pilot.pause(0.5)
        kinds = {a.kind for a in app.state.alerts}
        assert not kinds & {"process_exited", "health_lost", "crash"}, kinds
        await until(pilot, lambda: "STOPPED" in screen_text(app).split("\n")[0],
                    "STOPPED on the status line", 10)
        assert "stopped by you at" in screen_text(app)


async def test_restart_is_a_new_run_with_a_parent(launched: Launched) -> None:
    app, store = launched.app, launched.store
    first = store.list(demo=True)[0]
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.state.startup.ready, "the first run to be ready")
        old_session, old_pid = app.session, first.pid
        ready_t = app.state.startup.phase_mark(Phase.READY)
        await pilot.press("R")
        await pilot.press("y")
        await until(pilot, lambda: app.session is not old_session, "the relaunch")
        # a new run: fresh phases, pid and ready time, the old one kept for comparison
        assert app.state.startup.phase_mark(Phase.READY) is None or app.state.startup.phase_mark(
            Phase.READY) != ready_t
        await until(pilot, lambda: app.state.startup.ready, "the new run to be ready")
        rows = store.list(demo=True)
        assert len(rows) == 2
        new = next(r for r in rows if r.id != first.id)
        assert new.parent == first.id and new.pid != old_pid and new.demo
        assert store.get(str(first.id)).state == "stopped"
        assert first.pgid is not None and group_alive(first.pgid) == []
        # the replaced run was stopped by the user: its end raised no alert
        assert old_session.state.live.stopped is not None
        kinds = {a.kind for a in old_session.state.alerts}
        assert not kinds & {"process_exited", "health_lost", "crash"}, kinds
        # stopped while serving its load: the engine's shutdown lines, no asyncio traceback
        assert first.log_path is not None
        old_log = Path(first.log_path).read_text()
        assert "Shutting down" in old_log and "CancelledError" not in old_log
        assert app.state.live.process is not None and app.state.live.process.pid == new.pid
        assert app.state.startup.previous is not None
        assert app.state.startup.previous.label == f"#{first.id}"
        assert app.control is not None and app.control.label == new.label


async def test_edit_lints_fixes_eagle_and_acceptance_recovers(launched: Launched) -> None:
    app, store = launched.app, launched.store
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: serving_accept(app) is not None, "the misconfigured run's "
                    "acceptance")
        assert (serving_accept(app) or 9) < 1.3
        assert any(a.severity == "critical" for a in app.state.alerts)
        old_session = app.session
        await pilot.press("E")
        edit = app.screen
        assert isinstance(edit, EditScreen)
        assert "--speculative-algorithm EAGLE" in edit.area.text.split("\n")
        # first: the same mistake is refused by the lint, with the reason in the modal
        await pilot.press("enter")
        await until(pilot, lambda: edit.armed is not None, "the lint's findings")
        assert app.session is old_session
        edit.area.text = "\n".join(
            "--speculative-algorithm EAGLE3" if x == "--speculative-algorithm EAGLE" else x
            for x in edit.area.text.split("\n"))
        await pilot.pause()
        assert edit.armed is None  # changed: linted again
        await pilot.press("enter")
        await until(pilot, lambda: app.session is not old_session, "the relaunch")
        assert not isinstance(app.screen, EditScreen)
        await until(pilot, lambda: app.state.startup.previous is not None,
                    "the previous run's line", 10)
        assert app.state.startup.phase_mark(Phase.READY) is None
        assert app.state.startup.previous is not None
        assert app.state.startup.previous.accept_len is not None
        assert app.state.startup.previous.accept_len < 1.3
        await until(pilot, lambda: (serving_accept(app) or 0) > 2.0, "acceptance to recover")
        assert not any(a.severity == "critical" for a in app.state.alerts)
        new = max(store.list(demo=True), key=lambda r: r.id)
        assert new.parent is not None and "EAGLE3" in (new.command or "")
        await pilot.pause(0.3)
        assert "prev #1    accept 1." in screen_text(app)


async def test_fix_key_relaunches_with_the_known_fix(launched: Launched) -> None:
    from eagle_tui.ui.fix import FixScreen
    from eagle_tui.ui.widgets.alerts import AlertsPane

    app, store = launched.app, launched.store
    first = store.list(demo=True)[0]
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: any(a.remedy is not None for a in app.state.alerts),
                    "an alert with a fix")
        await until(pilot, lambda: app.fix_offered, "F to be offered")
        assert "Fix" in str(app.query_one("KeyFooter").render())
        await until(pilot, lambda: "F fix" in str(app.query_one(AlertsPane).render()),
                    "the alert's F fix", 10)  # (the panes repaint at most every interval)
        old_session = app.session
        await pilot.press("F")
        fix = app.screen
        assert isinstance(fix, FixScreen)
        line = fix.command_text()
        assert "--speculative-algorithm EAGLE3" in line
        assert fix.argv() == split_command(fix.fixed_command)
        assert fix.original == launched.demo.control.command != fix.fixed_command
        assert "EAGLE3" in str(fix.query_one("#fix-diff").render())
        assert "EAGLE3" in str(fix.query_one("#edit-diff").render())  # the editor's own diff
        await pilot.press("ctrl+r")  # back to the running command, and to the fix again
        assert fix.argv() == split_command(fix.original)
        await pilot.press("ctrl+r")
        assert fix.command_text() == line
        await pilot.press("enter")
        await until(pilot, lambda: app.session is not old_session, "the relaunch")
        assert not isinstance(app.screen, FixScreen)
        await until(pilot, lambda: (serving_accept(app) or 0) > 2.0, "acceptance to recover")
        new = max(store.list(demo=True), key=lambda r: r.id)
        assert new.parent == first.id and "EAGLE3" in (new.command or "")
        await until(pilot, lambda: not app.fix_offered, "F to go with the fix")
        assert "Fix" not in str(app.query_one("KeyFooter").render())


async def test_read_only_has_no_keys(tmp_path: Path) -> None:
    demo = DemoLaunch(demo_args("healthy"), store=RunStore(tmp_path / "runs.sqlite3"))
    dash: Dashboard | None = None
    try:
        spec, _control = await demo.start()
        dash = prepare_dashboard(spec, config=UiConfig())  # no control: --read-only, watch
        app = dash.app
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            for key in ("kill_run", "restart_run", "edit_run", "fix_run"):
                assert app.check_action(key, ()) is False
            await pilot.press("K")
            await pilot.press("E")
            await pilot.pause()
            assert not isinstance(app.screen, ConfirmScreen | EditScreen)
            footer = app.query_one("KeyFooter")
            assert "Kill" not in str(footer.render())
    finally:
        if dash is not None:
            await asyncio.to_thread(dash.close)
        await asyncio.to_thread(demo.close)


def _start_by_hand(tmp_path: Path, log: Path, port: int, algo: str) -> subprocess.Popen[bytes]:
    """The user's own ``nohup python -m sglang.launch_server ... >> server.log &``."""
    from eagle_tui.sim.engine_cli import ENGINES_DIR
    from eagle_tui.sim.runtime import prepare_workdir

    work = tmp_path / f"work-{algo}"
    draft = prepare_workdir(work, "sglang", 1, 0)["draft"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ENGINES_DIR), *filter(None, [
        os.environ.get("PYTHONPATH")])]), "EAGLE_TUI_SIM_SPEED": "40",
        "EAGLE_TUI_SIM_WORKDIR": str(work)}
    env.pop("EAGLE_TUI_SIM_SCENARIO", None)
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "sglang.launch_server", "--model-path", "my/model",
             "--speculative-algorithm", algo, "--speculative-draft-model-path", draft,
             "--port", str(port)], stdout=out, stderr=subprocess.STDOUT, env=env,
            start_new_session=True, cwd=tmp_path)


async def test_a_server_restarted_under_a_watch_is_a_new_run(tmp_path: Path) -> None:
    """The finding: kill the server, start it again on the same log and port; the dashboard
    (``watch --log --url``) follows the new pid and counts its ready time from its start."""
    from eagle_tui.assembly.spec import DashboardSpec, check_sources
    from eagle_tui.sim.runtime import free_port

    port, log = free_port(), tmp_path / "server.log"
    procs = [_start_by_hand(tmp_path, log, port, "EAGLE")]
    spec = check_sources(DashboardSpec(log=str(log), url=f"http://127.0.0.1:{port}",
                                       gpu="none", health_interval=0.5))
    dash = prepare_dashboard(spec, config=UiConfig())
    app = dash.app
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot,
                        lambda: app.state.startup.ready and app.state.live.process is not None,
                        "the first run")
            first_pid = app.state.live.process.pid if app.state.live.process else 0
            first_ready = app.state.startup.phase_mark(Phase.READY)
            assert first_pid == procs[0].pid and app.control is None
            procs[0].kill()
            procs[0].wait(10)
            await until(pilot, lambda: app.state.live.process_exit is not None, "the exit", 20)
            await asyncio.sleep(1.0)  # a user's pause between the kill and the new start
            procs.append(_start_by_hand(tmp_path, log, port, "EAGLE3"))
            await until(pilot, lambda: app.state.live.process is not None
                        and app.state.live.process.pid == procs[1].pid, "the new pid", 30)
            assert app.state.live.process_exit is None
            assert app.state.live.process is not None and app.state.live.process.status != "zombie"
            await until(pilot, lambda: app.state.startup.ready, "the new run to be ready")
            ready = app.state.startup.phase_mark(Phase.READY)
            assert ready is not None and first_ready is not None
            assert ready.lineno > first_ready.lineno and app.state.startup.previous is not None
            secs = ready_seconds(app.state)
            assert secs is not None and secs < 30  # not counted from the first run
            await pilot.pause(0.3)
            assert f"pid {procs[1].pid}" in screen_text(app)
    finally:
        await asyncio.to_thread(dash.close)
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)


def test_the_simulated_vllm_refuses_method_eagle_as_the_real_one(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from eagle_tui.model.fold.reducer import reduce
    from eagle_tui.model.ingest.parser import LogParser
    from eagle_tui.model.state import DashboardState
    from eagle_tui.sim.engine_cli import main
    from eagle_tui.sim.runtime import prepare_workdir

    draft = prepare_workdir(tmp_path, "vllm", 1, 0)["draft"]
    spec = json.dumps({"method": "eagle", "model": draft, "num_speculative_tokens": 3})
    assert main("vllm", ["my/model", "--speculative-config", spec, "--port", "1"]) == 1
    p = LogParser()
    out = capsys.readouterr().out
    st = reduce(DashboardState(), [e for ln in out.splitlines() for e in p.feed_line(ln)]
                + p.finish())
    assert st.startup.engine == "vllm"
    assert st.startup.crash is not None
    assert st.startup.crash.kind == "config_error"
    assert '"method": "eagle3" in --speculative-config' in st.startup.crash.hint


async def test_the_vllm_demo_loop_crash_then_E(tmp_path: Path) -> None:
    args = demo_args("misconfigured")
    args.engine = "vllm"
    demo = DemoLaunch(args, store=RunStore(tmp_path / "runs.sqlite3"))
    dash: Dashboard | None = None
    try:
        spec, control = await demo.start()
        first = demo_subscribers(demo.store)(control.run, spec)
        dash = prepare_dashboard(spec, control=control, subscribers=first, config=UiConfig())
        app = dash.app
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: app.state.startup.crash is not None, "the refusal")
            assert app.state.startup.crash is not None and "eagle3" in app.state.startup.crash.hint
            old = app.session
            await pilot.press("E")
            edit = app.screen
            assert isinstance(edit, EditScreen)
            lines = edit.area.text.split("\n")
            assert "--speculative-config.method eagle" in lines
            edit.area.text = "\n".join(x + "3" if x == "--speculative-config.method eagle" else x
                                        for x in lines)
            await pilot.pause()
            await pilot.press("enter")
            await until(pilot, lambda: app.session is not old, "the relaunch")
            await until(pilot, lambda: (serving_accept(app) or 0) > 2.0, "a healthy run")
            assert app.state.startup.crash is None and app.state.startup.previous is not None
            assert app.state.startup.previous.crash == "config_error"
    finally:
        if dash is not None:
            await asyncio.to_thread(dash.close)
        await asyncio.to_thread(demo.close)
