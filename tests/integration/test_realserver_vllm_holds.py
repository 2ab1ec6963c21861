"""Pause and sleep level 0 on the REAL vLLM 0.32 CPU server (``VLLM_SERVER_DEV_MODE=1``).

vLLM 0.32 refuses ``--enable-sleep-mode`` on CPU (``config/model.py``: "Sleep mode is not
supported on current platform."; ``is_sleep_mode_available`` is CUDA/ROCm/XPU only), so levels
1 and 2 are the simulator's to prove. What runs here: ``POST /pause`` / ``/resume`` (the
scheduler's pause) and ``POST /sleep?level=0`` (scheduling paused, no memory moved: vLLM still
sets its sleep gauge), read through eagle-tui's own readers: the log lines, ``/is_paused``,
``/is_sleeping`` and ``vllm:engine_sleep_state``. One real start of its own.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from eagle_tui.model.events import HealthSample, HoldLine, HoldSample
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.sources.hold import HoldWatch
from eagle_tui.sources.metrics import RateWindow, parse_metrics, to_sample
from tests.support.ports import free_port

pytestmark = [pytest.mark.realserver, pytest.mark.slow]
START_LIMIT_S = 420.0
Command = Callable[[str, int], tuple[list[str], dict[str, str]]]


@pytest.fixture()
def dev_server(vllm_command: Command, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()
    argv, env = vllm_command("eagle3", port)
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, env={**os.environ, **env, "VLLM_SERVER_DEV_MODE": "1"},
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=tmp_path)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_LIMIT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"vLLM exited: {log.read_text(errors='replace')[-3000:]}")
            try:
                if httpx.get(f"{url}/health", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1.0)
        else:
            pytest.fail(f"vLLM not healthy within {START_LIMIT_S:.0f} s")
        yield url, log
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def _holds(log: Path) -> list[HoldLine]:
    parser = LogParser()
    return [e for line in log.read_text(errors="replace").splitlines()
            for e in parser.feed_line(line) if isinstance(e, HoldLine)]


def _asked(url: str) -> list[HoldSample]:
    async def run() -> list[HoldSample]:
        watch = HoldWatch(lambda: "vllm")
        async with httpx.AsyncClient(base_url=url, trust_env=False, timeout=5) as client:
            return await watch.ask(client, HealthSample("ready", time.time(), 200))
    return asyncio.run(run())


def _gauge(url: str) -> tuple[bool | None, int | None]:
    text = httpx.get(f"{url}/metrics", timeout=5, trust_env=False).text
    sample = to_sample(parse_metrics(text, time.time()), RateWindow())
    return sample.asleep, sample.sleep_level


def _until(check: Callable[[], bool], what: str, within_s: float = 20.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise AssertionError(what)


def test_real_vllm_pause_and_sleep_level_0(dev_server: tuple[str, Path]) -> None:
    url, log = dev_server
    with httpx.Client(base_url=url, trust_env=False, timeout=30) as client:
        assert _gauge(url) == (False, None)
        awake = _asked(url)[0]
        assert (awake.paused, awake.sleeping) == (False, False)
        assert client.post("/pause").json() == {"status": "paused"}
        assert client.get("/is_paused").json() == {"is_paused": True}
        held = _asked(url)[0]
        assert held.paused is True and held.sleeping is True  # (is_sleeping: paused too)
        _until(lambda: any(h.what == "paused" for h in _holds(log)), "the pause line")
        assert client.post("/resume").json() == {"status": "resumed"}
        _until(lambda: any(h.what == "resumed" for h in _holds(log)), "the resume line")
        assert client.post("/sleep", params={"level": 0}).json() == {"status": "sleeping",
                                                                    "level": 0}
        assert _gauge(url) == (True, 0)  # level 0: not awake, neither level set
        assert client.post("/wake_up").json()["status"] == "awake"
        assert _gauge(url) == (False, None)
