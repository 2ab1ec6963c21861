"""Watching an idle REAL SGLang 0.5.23 server puts no work on it.

SGLang's ``/health`` is the same handler as ``/health_generate``: once the server is up it runs a
one-token generation, and every such poll adds a scheduler ``Prefill batch`` line to the log the
user reads. ``eagle-tui watch`` against the ready, idle server for 30 s must leave the log without
a single scheduler line (``Prefill batch`` / ``Decode batch``): readiness comes from ``/ready``.

The server is the session fixture ``sglang_eagle3`` of tests/integration/conftest.py, shared with
test_realserver_sglang.py and test_realserver_sglang_window.py (asked for by name, so the
fixture's last user keeps it up); it skips with the reason where SGLang is not installed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = [pytest.mark.realserver, pytest.mark.realserver_sglang, pytest.mark.slow]

ROOT_DIR = Path(__file__).resolve().parents[2]
WATCH_S = 30
SETTLE_S = 3.0  # the fixture's own /health (a generation) logs its line about a second later
SCHEDULER_LINE = re.compile(r"\] (Prefill|Decode) batch")


def _settled_size(log: Path) -> int:
    """The log's size once it stopped growing for ``SETTLE_S`` (bounded)."""
    deadline = time.monotonic() + 30.0
    size = log.stat().st_size
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = log.stat().st_size
        if now != size:
            size, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= SETTLE_S:
            break
    return size


def _latency(url: str, path: str) -> float:
    with httpx.Client(trust_env=False, timeout=10) as client:
        t0 = time.perf_counter()
        client.get(f"{url}{path}")
        return time.perf_counter() - t0


def test_watching_the_idle_server_adds_no_scheduler_line(sglang_eagle3: Any) -> None:
    sglang_eagle3.ready()
    start = _settled_size(sglang_eagle3.log)
    t0 = time.monotonic()
    watch = subprocess.run(
        [sys.executable, "-m", "eagle_tui", "watch", "--url", sglang_eagle3.url, "--log",
         str(sglang_eagle3.log), "--headless", "--json", "--gpu", "none",
         "--duration", str(WATCH_S)],
        capture_output=True, text=True, timeout=WATCH_S + 60, cwd=ROOT_DIR)
    took = time.monotonic() - t0
    time.sleep(SETTLE_S)  # a generation in flight at the end logs its line after it
    with sglang_eagle3.log.open("rb") as fh:
        fh.seek(start)
        added = fh.read().decode("utf-8", "replace").splitlines()
    assert watch.returncode == 0, watch.stderr[-2000:]
    states = [json.loads(x) for x in watch.stdout.splitlines() if x.startswith("{")]
    assert any(s.get("health") == "ready" for s in states), watch.stdout[-2000:]
    scheduler = [ln for ln in added if SCHEDULER_LINE.search(ln)]
    own = [ln for ln in added if "eagle-tui" in ln and '"GET ' in ln]
    print(f"watch ran {took:.1f} s: {len(added)} lines added to the log, {len(scheduler)} "
          f"scheduler lines, {len(own)} own requests; GET /health took "
          f"{_latency(sglang_eagle3.url, '/health'):.3f} s, GET /ready "
          f"{_latency(sglang_eagle3.url, '/ready'):.3f} s")
    assert not scheduler, "\n".join(added[-40:])
