"""The seed's loop in two keys for the REAL SGLang 0.5.23 CPU server inside a podman container:
``launch --force -- podman run … --speculative-algorithm EAGLE`` with the EAGLE-3 draft → the
dashboard's critical alert offers ``F`` → ``F``, ``Enter`` start the fixed command as a new
container and run (the old container removed) → it serves with accept length ≥ 2.5 (the dashboard,
``wait --container`` and ``watch --container --headless`` on it) → ``runs compare`` shows the flag
that changed and the container options kept. Two server starts, one after
the other; the containers are removed at the end whatever happens."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.model.events import EngineTimings
from tests.containers.launching import labelled
from tests.containers.realsglang import sglang_container
from tests.support.containers import ContainerEngine
from tests.support.relaunch_helpers import (
    START_LIMIT_S,
    accept_after,
    collapse_then_F,
    load,
    until,
)

pytestmark = [pytest.mark.realserver, pytest.mark.realserver_sglang, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
NO_TIMES = EngineTimings("")


def eagle_json(containers: ContainerEngine, *args: str, timeout: float
               ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    done = subprocess.run([sys.executable, "-m", "eagle_tui", *args, "--json"],
                          env={**containers.envs(), "PYTHONPATH": str(ROOT)}, text=True,
                          capture_output=True, timeout=timeout)
    return done, [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]


def headless_checks(containers: ContainerEngine, cid: str, url: str) -> None:
    """``wait --container`` finds the fixed run's container serving, and the headless dashboard
    shows the EAGLE-3 acceptance the server's counters give (after its load)."""
    waited, lines = eagle_json(containers, "wait", "--container", cid, "--container-cli",
                               "podman", "--timeout", "60", "--gpu", "none", timeout=90)
    assert waited.returncode == 0, waited.stdout[-3000:] + waited.stderr
    assert lines[-1]["event"] == "result" and lines[-1]["status"] == "ready", lines[-1]
    load(url)  # (the figures are of the recent traffic: a load just before the watch)
    watched, states = eagle_json(containers, "watch", "--container", cid, "--container-cli",
                                 "podman", "--headless", "--duration", "8", "--gpu", "none",
                                 timeout=90)
    assert watched.returncode == 0, watched.stderr[-2000:]
    accept = [s["numbers"]["accept_len"] for s in states
              if (s.get("numbers") or {}).get("accept_len") is not None]
    assert accept and accept[-1]["value"] >= 2.5, states[-2:]


async def test_the_real_sglang_container_fixed_in_two_keys(
        containers: ContainerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eagle_tui.assembly.control import LaunchControl
    from eagle_tui.assembly.open import prepare_dashboard
    from eagle_tui.commands.launch import launch_async
    from eagle_tui.commands.runs import cmd_compare
    from eagle_tui.history.recorder import HistoryRecorder
    from eagle_tui.history.store import RunStore
    from eagle_tui.model.events import Phase
    from eagle_tui.ui.config import UiConfig
    from eagle_tui.ui.fix import FixScreen

    monkeypatch.setenv("EAGLE_TUI_DATA_DIR", str(tmp_path / "data"))
    for k, v in containers.env.items():
        monkeypatch.setenv(k, v)
    with sglang_container(containers, "EAGLE", start=False) as server:
        args = argparse.Namespace(env=[], cwd=str(tmp_path), force=True, name="seed", log=None,
                                  baseline=None, no_tui=False, json=False, fix=False)
        err = io.StringIO()
        code, started = await launch_async(args, server.words, err, io.StringIO())
        assert started is not None, (code, err.getvalue())
        assert "use EAGLE3" in err.getvalue()  # the lint's error, launched anyway (--force)
        store = RunStore()
        first = started.run
        spec = replace(started.spec, gpu="none")
        control = LaunchControl(store=store, spec=spec, prep=started.prep, run=first,
                                launched=started.launched)
        dash = prepare_dashboard(spec, control=control, config=UiConfig(),
                                 subscribers=[HistoryRecorder(store, first.id).on_batch])
        app = dash.app
        try:
            async with app.run_test(size=(160, 48)) as pilot:
                bad, old_session = await collapse_then_F(pilot, app, server.url)
                fix = app.screen
                assert isinstance(fix, FixScreen)
                assert fix.command_text().startswith("podman run -d --name")  # kept as typed
                await pilot.press("enter")
                await until(pilot, lambda: app.session is not old_session, "the relaunch", 120)
                new = store.get("last")
                assert new.parent == first.id and "EAGLE3" in (new.command or "")
                assert new.container_text("id") not in ("", first.container_text("id"))
                assert labelled(containers, first.token or "-") == []  # the old one removed
                await until(pilot, lambda: app.state.startup.ready, "the fixed server",
                            START_LIMIT_S)
                # the start as the container's log told it, the engine's own timings line too
                # (the same figures from /server_info may come first: the log's line wins)
                await until(pilot, lambda: (app.state.startup.engine_times or NO_TIMES).source
                            == "log", "the engine's startup timings line", 30)
                st = app.state.startup
                assert all(st.phase_mark(p) is not None
                           for p in (Phase.WEIGHTS_LOADED, Phase.KV_CACHE)), st.phases
                await asyncio.to_thread(load, server.url)
                t_load = time.time()
                await until(pilot, lambda: accept_after(app, t_load) is not None,
                            "its accept len", 60)
                good = accept_after(app, t_load) or 0.0
                print(f"container F: accept len {good:.2f} (was {bad:.2f})")
                assert good >= 2.5 and good >= 2 * bad
                await asyncio.to_thread(headless_checks, containers, new.container_text("id"),
                                        server.url)
        finally:
            await asyncio.to_thread(dash.close)
            await asyncio.to_thread(control.stop_current, 60.0)
            control.close()
        last = store.get(str(new.id))  # (the headless watch recorded a watched run after it)
        assert labelled(containers, last.token or "-") == []  # the stop removed it
        out = io.StringIO()
        cmp_args = argparse.Namespace(runs=[str(first.id), str(last.id)], baseline=None,
                                      baseline_run=None, json=False)
        assert await asyncio.to_thread(cmd_compare, store, cmp_args, out) == 0
        text = out.getvalue()
        print(text)
        assert "--speculative-algorithm: EAGLE → EAGLE3" in text, text
        block = text.split("container (* differs)\n")[1].split("flags changed")[0]
        assert "image" in block and "volume" in block, text
        assert not any(line.startswith("*") for line in block.splitlines()), text  # kept
