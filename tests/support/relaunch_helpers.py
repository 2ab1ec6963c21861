"""Helpers of the real-server relaunch tests (launch, the dashboard with K/R/E, E)."""

from __future__ import annotations

import asyncio
import io
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil
from textual.pilot import Pilot

from eagle_tui.model.views.runsummary import figures_summary
from eagle_tui.ui.app import EagleApp
from tests.support import ports

Command = Callable[[str, int], tuple[list[str], dict[str, str]]]
ROOT_DIR = Path(__file__).resolve().parents[2]
START_LIMIT_S = 330.0  # a start measured 100-185 s on 2 busy cores
PROMPTS = (
    "six hundred one, six hundred two, six hundred three, six hundred four,",
    "seven hundred ten, seven hundred eleven, seven hundred twelve,",
    "one, two, three, four, five, six, seven, eight, nine, ten,",
    "eight hundred ninety-eight, eight hundred ninety-nine, nine hundred,",
)


def free_port() -> int:
    return ports.free_port()  # (outside the ephemeral range: tests/support/ports.py)


def load(url: str) -> None:
    """The same bounded requests on each run: 4 greedy /generate calls of 96 tokens."""
    with httpx.Client(trust_env=False, timeout=120) as client:
        for prompt in PROMPTS:
            body = {"text": prompt, "sampling_params": {"max_new_tokens": 96,
                                                        "temperature": 0}}
            client.post(f"{url}/generate", json=body).raise_for_status()


async def until(pilot: Pilot[int], ok: Callable[[], bool], what: str, limit: float) -> None:
    deadline = time.monotonic() + limit
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out ({limit:.0f} s) waiting for {what}")
        await pilot.pause(0.25)


def accept_of(app: EagleApp) -> float | None:
    """The run's acceptance length over its decode lines (weighted), once there are two."""
    if len(app.state.stats.accept_len) < 2:
        return None
    value = figures_summary(app.state).get("accept_len")
    return float(value) if value is not None else None




def accept_after(app: EagleApp, t0: float) -> float | None:
    """:func:`accept_of` once a ``/metrics`` scrape taken after ``t0`` (the load's end) is in:
    the run's figure is its counters' ratio, and a scrape from before the load's last
    requests finished holds only the warmup's."""
    m = app.state.metrics.last
    return accept_of(app) if m is not None and m.t > t0 + 0.5 else None


async def collapse_then_F(pilot: Pilot[int], app: EagleApp, url: str) -> tuple[float, Any]:
    """The seed's misconfigured server in the dashboard: ready, its accept length after a
    load, ``F`` offered by a critical alert with a remedy, ``F`` pressed. Returns the accept
    length and the session before the relaunch; the fix screen is ``app.screen``."""
    from eagle_tui.ui.fix import FixScreen

    await until(pilot, lambda: app.state.startup.ready, "the misconfigured server",
                START_LIMIT_S)
    await asyncio.to_thread(load, url)
    t_load = time.time()
    await until(pilot, lambda: accept_after(app, t_load) is not None, "its accept len", 60)
    bad = accept_after(app, t_load) or 0.0
    await until(pilot, lambda: app.fix_offered, "F to be offered", 30)
    assert any(a.remedy is not None and a.severity == "critical"
               for a in app.state.alerts), app.state.alerts
    old_session = app.session
    await pilot.press("F")
    assert isinstance(app.screen, FixScreen)
    assert "--speculative-algorithm EAGLE3" in app.screen.command_text()
    return bad, old_session


def group_alive(pgid: int) -> bool:
    for p in psutil.process_iter():
        try:
            if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                return True
        except (OSError, psutil.Error):
            continue
    return False




async def launched_dashboard(argv: list[str], env: dict[str, str], cwd: Path,
                             name: str) -> tuple[Any, Any, Any, Any]:
    """``launch --force`` of ``argv`` and its dashboard with K/R/E (no GPU sampling):
    ``(started, store, control, dashboard)``; the caller closes the dashboard and stops."""
    import argparse
    from dataclasses import replace

    from eagle_tui.assembly.control import LaunchControl
    from eagle_tui.assembly.open import prepare_dashboard
    from eagle_tui.commands.launch import launch_async
    from eagle_tui.history.recorder import HistoryRecorder
    from eagle_tui.history.store import RunStore
    from eagle_tui.ui.config import UiConfig

    args = argparse.Namespace(env=[f"{k}={v}" for k, v in env.items()], cwd=str(cwd),
                              force=True, name=name, log=None, baseline=None, no_tui=False,
                              json=False)
    code, started = await launch_async(args, argv, io.StringIO(), io.StringIO())
    assert started is not None, code
    store = RunStore()
    spec = replace(started.spec, gpu="none")
    control = LaunchControl(store=store, spec=spec, prep=started.prep, run=started.run,
                            launched=started.launched)
    dash = prepare_dashboard(spec, control=control, config=UiConfig(),
                             subscribers=[HistoryRecorder(store, started.run.id).on_batch])
    return started, store, control, dash


def server_accept(url: str) -> float:
    """The server's own acceptance over its life, from its ``/metrics`` counters (what the run
    history must show within 2 %): SGLang Σgeneration_tokens / Σspec_verify_calls, vLLM
    1 + Σaccepted / Σdrafts."""
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{url}/metrics", timeout=30, trust_env=False).text
    sums: dict[str, float] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            sums[s.name] = sums.get(s.name, 0.0) + float(s.value)
    if sums.get("vllm:spec_decode_num_drafts_total"):
        return 1.0 + (sums["vllm:spec_decode_num_accepted_tokens_total"]
                      / sums["vllm:spec_decode_num_drafts_total"])
    return sums["sglang:generation_tokens_total"] / sums["sglang:spec_verify_calls_total"]


def runs_json(*words: str, env: dict[str, str] | None = None) -> Any:
    """``eagle-tui runs WORDS --json``, parsed."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "eagle_tui", "runs", *words, "--json"],
                         capture_output=True, text=True, timeout=120, check=True, cwd=ROOT_DIR,
                         env=env)
    return json.loads(out.stdout)


def near(value: float | None, want: float, rel: float = 0.02) -> bool:
    return value is not None and abs(value - want) <= rel * want


def assert_run_counted(got: dict[str, Any]) -> None:
    """A ``--no-tui`` run's live and final acceptance are the server counters', within 2 %."""
    want = got["counters"]
    assert near(got["live"]["accept_len"], want), got
    assert near(got["after"]["accept_len"], want), got
    assert got["after"]["accept_source"] == "server counters", got
    assert got["after"]["state"] == "stopped"


async def no_tui_run(argv: list[str], env: dict[str, str], tmp_path: Path,
                     load_fn: Callable[[str], None]) -> dict[str, Any]:
    """``launch --no-tui`` (exits at ready), the load, the server's own counters, ``runs
    show`` while it serves, ``stop``, and ``runs compare`` of it after: what each said."""
    import asyncio
    import json
    import subprocess
    import sys

    run_env = {**os.environ, "EAGLE_TUI_DATA_DIR": str(tmp_path / "data")}
    launch = await asyncio.to_thread(subprocess.run, [
        sys.executable, "-m", "eagle_tui", "launch", "--no-tui", "--timeout", str(START_LIMIT_S),
        "--name", "no-tui", *[f"--env={k}={v}" for k, v in env.items()], "--", *argv],
        capture_output=True, text=True, timeout=START_LIMIT_S + 60, cwd=tmp_path, env=run_env)
    assert launch.returncode == 0, launch.stdout[-2000:] + launch.stderr[-2000:]
    url = runs_json("show", "no-tui", env=run_env)["url"]
    try:
        await asyncio.to_thread(load_fn, url)
        await asyncio.sleep(1.0)
        counters = await asyncio.to_thread(server_accept, url)
        live = runs_json("show", "no-tui", env=run_env)
    finally:
        stop = await asyncio.to_thread(subprocess.run, [
            sys.executable, "-m", "eagle_tui", "stop", "no-tui", "--yes"],
            capture_output=True, text=True, timeout=120, cwd=ROOT_DIR, env=run_env)
    assert stop.returncode == 0, stop.stdout + stop.stderr
    after = runs_json("compare", "no-tui", "no-tui", env=run_env)["runs"][0]
    shown = subprocess.run([sys.executable, "-m", "eagle_tui", "runs", "show", "no-tui"],
                           capture_output=True, text=True, timeout=60, cwd=ROOT_DIR,
                           env=run_env).stdout
    print(f"--no-tui run: server counters {counters:.4f}, runs show while serving "
          f"{live['accept_len']} ({live['accept_source']}), after stop {after['accept_len']} "
          f"({after['accept_source']}), state {after['state_text']}\n{shown}")
    return {"counters": counters, "live": live, "after": after, "shown": shown,
            "json": json.dumps(after)}
