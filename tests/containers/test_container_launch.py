"""``launch -- podman run …`` / ``docker run …`` with the real engine (podman, and the docker CLI
through its API socket): started detached with the run's label, recorded with its container,
watched until ready; ``stop`` leaves no container; in the dashboard ``F`` then ``Enter`` starts
the fixed command as a new container and run (the old one removed), ``R`` the same again, ``K``
stops and removes it, and ``runs compare`` shows the flag that changed."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.containers.launching import ROOT, labelled, remove_runs, sim_run
from tests.support.containers import ContainerEngine
from tests.support.ports import free_port

LIMIT_S = 60.0


def eagle(containers: ContainerEngine, data: Path, *args: str,
          timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**containers.envs(), "PYTHONPATH": str(ROOT), "EAGLE_TUI_DATA_DIR": str(data)}
    return subprocess.run([sys.executable, "-m", "eagle_tui", *args], env=env, text=True,
                          capture_output=True, timeout=timeout)


@pytest.mark.parametrize("cli", ["podman", "docker"])
def test_launch_no_tui_records_the_container_and_stop_removes_it(
        containers: ContainerEngine, tmp_path: Path, cli: str) -> None:
    from eagle_tui.sim.runtime import prepare_workdir

    data = tmp_path / "data"
    # podman: the EAGLE mix-up, launched with --fix (the engine's words fixed, the rest kept)
    draft = prepare_workdir(tmp_path / "sim", "sglang", 1, 0)["draft"]
    spec = ("--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", draft) \
        if cli == "podman" else ()
    words = sim_run(containers, cli, free_port(), tmp_path, *spec)
    named = containers.name("launch")  # docker: the user's --name (kept: renamed, name freed)
    if cli == "docker":
        words[2:2] = ["--name", named]
    try:
        got = eagle(containers, data, "launch", "--no-tui", "--timeout", "60",
                    *(["--fix"] if spec else []),
                    "--env=EAGLE_TUI_SIM_LAUNCH_TEST=secret-value", "--", *words)
        assert got.returncode == 0, got.stdout + got.stderr
        assert "READY" in got.stdout and f", {cli}), image" in got.stderr, got.stdout + got.stderr
        run = json.loads(eagle(containers, data, "runs", "show", "last", "--json").stdout)
        if spec:
            assert "fixed" in got.stderr and "EAGLE3" in got.stderr, got.stderr
            assert run["flags"]["speculative_algorithm"] == "EAGLE3"
            assert run["command"].startswith(f"{cli} run --network=host")
        box = run["container"]
        assert box["cli"] == cli and box["image"]
        assert box["name"] == named if cli == "docker" else box["name"].startswith(
            "eagle-tui-run-")  # (a name given is kept; else eagle-tui names it)
        assert labelled(containers, _token(data)) == [box["id"]]  # the run's label finds it
        opts = box["options"]
        assert opts["network"] == "host" and opts["shm-size"] == "1g"
        assert "EAGLE_TUI_SIM_SPEED" in opts["env"] and "PYTHONPATH" in opts["env"]
        assert "secret-value" not in json.dumps(run)  # an --env value is never recorded
        env = containers.podman("inspect", "--format", "{{json .Config.Env}}", box["id"]).stdout
        assert "EAGLE_TUI_SIM_LAUNCH_TEST=secret-value" in env  # passed as `-e NAME`
        assert "secret-value" not in " ".join(
            containers.podman("inspect", "--format", "{{json .Config.Cmd}}{{json .Args}}",
                              box["id"]).stdout)
        if cli == "podman":  # discovery tells it launched (its label); attach RUN watches it
            found = json.loads(eagle(containers, data, "attach", "--list", "--json").stdout)
            mine = [f for f in found if f.get("id") == box["id"]]
            assert mine and mine[0]["launched"] is True, found
            seen = eagle(containers, data, "attach", "last", "--headless", "--duration", "2")
            pid = containers.podman("inspect", "--format", "{{.State.Pid}}", box["id"]).stdout
            assert seen.returncode == 0 and f"process {pid.strip()} running" in seen.stdout, \
                seen.stdout + seen.stderr
        listed = eagle(containers, data, "runs", "list").stdout
        assert f"container {box['name']}" in listed, listed
        if cli == "docker":  # (--keep: the stopped container is kept)
            stop = eagle(containers, data, "stop", "--yes", "--grace", "3", "--keep", "last")
            assert box["name"] == named
            assert stop.returncode == 0 and f"(kept as {named}-{box['id'][:6]}" in stop.stdout, \
                stop.stdout + stop.stderr
            state = containers.podman("inspect", "--format", "{{.State.Status}} {{.Name}}",
                                      box["id"])
            assert state.stdout.split() == ["exited", f"{named}-{box['id'][:6]}"]
            assert containers.podman("inspect", named).returncode != 0  # the name is free
        stop = eagle(containers, data, "stop", "--yes", "--grace", "3", "last")
        assert stop.returncode == 0 and stop.stdout.count(f"container {box['name']} (") == 1, \
            stop.stderr
        # (docker: the kept container, exited, is removed now)
        assert ("stopped and removed" if cli == "podman" else "had exited and removed") \
            in stop.stdout, stop.stdout
        assert labelled(containers, _token(data)) == []  # no container left behind
        again = eagle(containers, data, "stop", "--yes", "last")
        assert again.returncode == 0 and "gone already" in again.stdout, again.stderr
    finally:
        remove_runs(containers, data)


def _token(data: Path) -> str:
    from eagle_tui.history.store import RunStore

    return RunStore(data / "runs.sqlite3").get("last").token or "-"


async def _until(pilot: Pilot[int], ok: Callable[[], bool], what: str,
                 limit: float = LIMIT_S) -> None:
    deadline = time.monotonic() + limit
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.1)


async def test_dashboard_F_and_R_relaunch_new_containers_and_K_removes_it(
        containers: ContainerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eagle_tui.assembly.control import LaunchControl
    from eagle_tui.assembly.open import prepare_dashboard
    from eagle_tui.commands.demo_launch import demo_subscribers
    from eagle_tui.commands.launch import launch_async
    from eagle_tui.commands.runs import cmd_compare
    from eagle_tui.history.store import RunStore
    from eagle_tui.sim.runtime import prepare_workdir
    from eagle_tui.ui.config import UiConfig
    from eagle_tui.ui.control import ConfirmScreen
    from eagle_tui.ui.fix import FixScreen

    data = tmp_path / "data"
    monkeypatch.setenv("EAGLE_TUI_DATA_DIR", str(data))
    for k, v in containers.env.items():
        monkeypatch.setenv(k, v)
    draft = prepare_workdir(tmp_path / "sim", "sglang", 1, 0)["draft"]
    words = sim_run(containers, "podman", free_port(), tmp_path, "--speculative-algorithm",
                    "EAGLE", "--speculative-draft-model-path", draft)
    dash = control = None
    try:
        args = argparse.Namespace(env=[], cwd=str(tmp_path), force=True, name=None, log=None,
                                  baseline=None, no_tui=False, json=False, fix=False)
        err = io.StringIO()
        code, started = await launch_async(args, words, err, io.StringIO())
        assert started is not None, (code, err.getvalue())
        assert "use EAGLE3" in err.getvalue()  # the lint's error, launched anyway (--force)
        store = RunStore()
        first = started.run
        spec = replace(started.spec, gpu="none")
        assert spec.container == first.container_text("id") and spec.container_cli == "podman"
        assert first.container_text("name") in spec.label
        control = LaunchControl(store=store, spec=spec, prep=started.prep, run=first,
                                launched=started.launched, grace=2,
                                subscribers_for=demo_subscribers(store))
        dash = prepare_dashboard(spec, control=control, config=UiConfig(),
                                 subscribers=demo_subscribers(store)(first, spec))
        app = dash.app
        async with app.run_test(size=(160, 48)) as pilot:
            await _until(pilot, lambda: app.fix_offered, "F to be offered")
            old_session = app.session
            await pilot.press("F")
            fix = app.screen
            assert isinstance(fix, FixScreen)
            assert "--speculative-algorithm EAGLE3" in fix.command_text()
            assert fix.command_text().startswith("podman run --network=host")  # kept as typed
            await pilot.press("enter")
            await _until(pilot, lambda: app.session is not old_session, "the relaunch")
            new = store.get("last")
            assert new.id != first.id and new.parent == first.id
            assert new.container_text("id") not in ("", first.container_text("id"))
            assert labelled(containers, first.token or "-") == []  # the old one removed
            assert labelled(containers, new.token or "-") == [new.container_text("id")]
            assert "EAGLE3" in (new.command or "") and "--shm-size 1g" in (new.command or "")
            assert (new.container or {})["options"] == (first.container or {})["options"]
            await _until(pilot, lambda: app.state.startup.ready, "the new container's server")
            fixed_session = app.session
            await pilot.press("R")  # the same command again: a third container and run
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("y")
            await _until(pilot, lambda: app.session is not fixed_session, "the restart")
            fixed, new = new, store.get("last")
            assert new.parent == fixed.id and new.command == fixed.command
            assert labelled(containers, fixed.token or "-") == []
            assert labelled(containers, new.token or "-") == [new.container_text("id")]
            await _until(pilot, lambda: app.state.startup.ready, "the restarted server")
            await pilot.press("K")
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("y")
            await _until(pilot, lambda: store.get(str(new.id)).state == "stopped", "the stop",
                         30)
            assert labelled(containers, new.token or "-") == []  # stopped and removed
        out = io.StringIO()
        cmp_args = argparse.Namespace(runs=[str(first.id), str(new.id)], baseline=None,
                                      baseline_run=None, json=False)
        assert await asyncio.to_thread(cmd_compare, store, cmp_args, out) == 0
        text = out.getvalue()
        assert "--speculative-algorithm: EAGLE → EAGLE3" in text, text
        assert "image" in text and "shm-size" in text and "network" in text, text
    finally:
        if dash is not None:
            await asyncio.to_thread(dash.close)
        if control is not None:
            control.close()
        remove_runs(containers, data)
