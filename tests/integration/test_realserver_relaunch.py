"""The seed's story end to end on the REAL SGLang 0.5.23 CPU server, the way a user lives it.

``lint`` flags ``--speculative-algorithm EAGLE`` with the EAGLE-3 draft as an error naming
EAGLE3 (and ``launch`` refuses it without ``--force``); ``launch --force`` starts it anyway and
the dashboard (Pilot) shows accept len ~1.00 and the critical alert; ``E`` with the flag fixed
relaunches it — a new run, its own row with the old one as parent — and the new run shows accept
len > 3 on the same requests. Two server starts, one after the other (the old group is stopped
before the new one starts); no other SGLang server of the suite runs meanwhile (this file runs
before ``test_realserver_sglang.py``, whose servers start lazily).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.ui.control import EditScreen
from tests.support.relaunch_helpers import (
    ROOT_DIR,
    START_LIMIT_S,
    Command,
    accept_after,
    assert_run_counted,
    collapse_then_F,
    free_port,
    group_alive,
    launched_dashboard,
    load,
    near,
    no_tui_run,
    server_accept,
    until,
)

pytestmark = [pytest.mark.realserver, pytest.mark.realserver_sglang, pytest.mark.slow]

def test_lint_names_eagle3_and_launch_refuses_without_force(sglang_command: Command,
                                                            tmp_path: Path) -> None:
    argv, env = sglang_command("EAGLE", free_port())
    lint = subprocess.run([sys.executable, "-m", "eagle_tui", "lint", "--", *argv],
                          capture_output=True, text=True, timeout=60, cwd=ROOT_DIR)
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert "error" in lint.stdout and "use EAGLE3" in lint.stdout
    assert "fix: --speculative-algorithm EAGLE3" in lint.stdout
    launch = subprocess.run(
        [sys.executable, "-m", "eagle_tui", "launch", "--no-tui",
         *[f"--env={k}={v}" for k, v in env.items()], "--", *argv],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env={**os.environ, "EAGLE_TUI_DATA_DIR": str(tmp_path / "data")})
    assert launch.returncode == 2 and "refused: lint found errors" in launch.stderr


async def test_launch_force_shows_the_collapse_and_E_fixes_it(
        sglang_command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EAGLE_TUI_DATA_DIR", str(tmp_path / "data"))
    argv, env = sglang_command("EAGLE", free_port())
    started, store, control, dash = await launched_dashboard(argv, env, tmp_path, "seed")
    app = dash.app
    first = started.run
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: app.state.startup.ready, "the misconfigured server",
                        START_LIMIT_S)
            await asyncio.to_thread(load, started.prep.url)
            t_load = time.time()
            await until(pilot, lambda: accept_after(app, t_load) is not None, "its accept len",
                        60)
            bad = accept_after(app, t_load) or 0.0
            bad_counters = await asyncio.to_thread(server_accept, started.prep.url)
            kinds = {a.kind for a in app.state.alerts if a.severity == "critical"}
            print(f"misconfigured run: accept len {bad:.2f} (the server's counters "
                  f"{bad_counters:.4f}), critical alerts {sorted(kinds)}")
            assert bad <= 1.05 and kinds, app.state.alerts
            old_session = app.session
            await pilot.press("E")
            edit = app.screen
            assert isinstance(edit, EditScreen)
            edit.area.text = "\n".join(
                "--speculative-algorithm EAGLE3" if x == "--speculative-algorithm EAGLE" else x
                for x in edit.area.text.split("\n"))
            await pilot.pause()
            await pilot.press("enter")  # lint: no error now, so it relaunches at once
            await until(pilot, lambda: app.session is not old_session, "the relaunch", 90)
            assert first.pgid is not None and not group_alive(first.pgid)
            await until(pilot, lambda: app.state.startup.ready, "the fixed server", START_LIMIT_S)
            await asyncio.to_thread(load, started.prep.url)
            t_load = time.time()
            await until(pilot, lambda: accept_after(app, t_load) is not None, "its accept len",
                        60)
            good = accept_after(app, t_load) or 0.0
            await asyncio.sleep(1.0)
            good_counters = await asyncio.to_thread(server_accept, started.prep.url)
            print(f"relaunched run: accept len {good:.2f} (was {bad:.2f}; the server's counters "
                  f"{good_counters:.4f})")
            assert good > 3.0
            assert not any(a.severity == "critical" for a in app.state.alerts), app.state.alerts
            assert app.state.startup.previous is not None
            assert (app.state.startup.previous.accept_len or 9) < 1.1
            rows = sorted(store.list(), key=lambda r: r.id)
            assert [r.parent for r in rows] == [None, first.id]
            assert rows[0].state == "stopped" and "EAGLE3" in (rows[1].command or "")
            # issue 14: the history compares the two runs: one changed flag, both figures
            cmp_: dict[str, Any] = {}
            for _ in range(30):  # the recorder writes at changes and every 5 s
                out = subprocess.run([sys.executable, "-m", "eagle_tui", "runs", "compare",
                                      "last~1", "last", "--json"], capture_output=True,
                                     text=True, timeout=60, check=True)
                cmp_ = json.loads(out.stdout)
                if all(r["accept_len"] is not None and r["tok_s"] for r in cmp_["runs"]) and \
                        near(cmp_["runs"][1]["accept_len"], good_counters):
                    break
                await asyncio.sleep(1.0)
            print(f"runs compare: {cmp_}")
            assert cmp_["flags_changed"] == [{"flag": "--speculative-algorithm", "from": "EAGLE",
                                              "to": "EAGLE3"}]
            bad_run, good_run = cmp_["runs"]
            print(f"accept vs the server's counters: misconfigured {bad_run['accept_len']} "
                  f"({bad_run['accept_source']}) vs {bad_counters:.4f}, fixed "
                  f"{good_run['accept_len']} ({good_run['accept_source']}) vs "
                  f"{good_counters:.4f}")
            assert near(bad_run["accept_len"], bad_counters), (bad_run, bad_counters)
            assert near(good_run["accept_len"], good_counters), (good_run, good_counters)
            assert bad_run["accept_source"] == good_run["accept_source"] == "server counters"
            assert bad_run["state_text"] == f"stopped → relaunched as #{rows[1].id}"
            assert [e["state"] for e in bad_run["timeline"]][-2:] == ["stopped", "relaunched"]
            assert bad_run["accept_len"] < 1.1 and good_run["accept_len"] > 3.0
            assert bad_run["tok_s"] and good_run["tok_s"]
    finally:
        await asyncio.to_thread(dash.close)
        await asyncio.to_thread(control.stop_current, 60.0)


async def test_launch_force_then_F_relaunches_with_the_fix(
        sglang_command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fix in one key: the critical alert offers ``F``; ``F`` then ``Enter`` relaunches
    with ``--speculative-algorithm EAGLE3`` (the alert's and the lint's remedy) as a new run
    with its parent, and the fixed run serves with at least twice the accept length."""
    monkeypatch.setenv("EAGLE_TUI_DATA_DIR", str(tmp_path / "data"))
    argv, env = sglang_command("EAGLE", free_port())
    started, store, control, dash = await launched_dashboard(argv, env, tmp_path, "fix")
    app = dash.app
    first = started.run
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            bad, old_session = await collapse_then_F(pilot, app, started.prep.url)
            await pilot.press("enter")
            await until(pilot, lambda: app.session is not old_session, "the relaunch", 90)
            await until(pilot, lambda: app.state.startup.ready, "the fixed server", START_LIMIT_S)
            await asyncio.to_thread(load, started.prep.url)
            t_load = time.time()
            await until(pilot, lambda: accept_after(app, t_load) is not None, "its accept len",
                        60)
            good = accept_after(app, t_load) or 0.0
            print(f"F: accept len {good:.2f} (was {bad:.2f})")
            assert good >= 2.5 and good >= 2 * bad
            rows = sorted(store.list(), key=lambda r: r.id)
            assert [r.parent for r in rows] == [None, first.id]
            assert "EAGLE3" in (rows[1].command or "")
    finally:
        await asyncio.to_thread(dash.close)
        await asyncio.to_thread(control.stop_current, 60.0)


async def test_no_tui_launch_gets_its_figures_from_the_server_counters(
        sglang_command: Command, tmp_path: Path) -> None:
    """``launch --no-tui`` exits at ready; the load comes after, with nobody watching: ``runs
    show`` reads the live counters, ``stop`` the final ones, and ``runs compare`` shows the
    run's acceptance within 2 % of the server's own counters over the run."""
    argv, env = sglang_command("EAGLE3", free_port())
    got = await no_tui_run(argv, env, tmp_path, load)
    assert_run_counted(got)
    assert got["after"]["tok_s"], got
    assert "accept: " in got["shown"] and "(server counters)" in got["shown"]
    assert "timeline:" in got["shown"]
