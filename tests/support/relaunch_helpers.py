"""Helpers of the real-server relaunch tests (launch, the dashboard with K/R/E, E)."""

from __future__ import annotations

import io
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil
from textual.pilot import Pilot

from eagle_tui.model.views.runsummary import figures_summary
from eagle_tui.ui.app import EagleApp

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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
