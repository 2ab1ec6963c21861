"""Sleep and pause driven on the simulator (vLLM 0.32's dev-mode endpoints, SGLang 0.5.23's
pause), watched in ``watch --headless --json`` and in the fleet through a real Prometheus."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eagle_tui.model.fleet.snapshot import SLEEPING
from tests.support.fleet_helpers import (
    Sim,
    prometheus_available,
    running_prometheus,
    start_sim,
    wait_serving,
)
from tests.support.headless_watch import Watch, hold_state

DEV = {"VLLM_SERVER_DEV_MODE": "1"}


@contextlib.contextmanager
def sim(tmp: Path, engine: str, env: dict[str, str] | None = None) -> Iterator[Sim]:
    s = start_sim(tmp / engine, engine, env=env)
    try:
        wait_serving(s.url)
        yield s
    finally:
        s.stop()


def test_vllm_sleep_wake_pause_resume_in_the_headless_lines(tmp_path: Path) -> None:
    with sim(tmp_path, "vllm", DEV) as s:
        w = Watch(s.url, tmp_path / s.engine / "server.log")
        try:
            w.until(lambda o: o["phase"] in ("ready", "serving"))
            assert httpx.post(f"{s.url}/sleep?level=1", timeout=5).json() == {
                "status": "sleeping", "level": 1}
            got = w.until(lambda o: hold_state(o) == "sleeping" and (o["hold"] or {}).get("level")
                          == 1)
            assert got["hold"]["text"].startswith("sleeping (level 1) since ")
            assert httpx.get(f"{s.url}/is_sleeping", timeout=5).json() == {"is_sleeping": True}
            httpx.post(f"{s.url}/wake_up", timeout=5)
            w.until(lambda o: o["hold"] is None)
            assert httpx.post(f"{s.url}/pause", timeout=5).json() == {"status": "paused"}
            got = w.until(lambda o: hold_state(o) == "paused")
            assert got["hold"]["text"].startswith("paused since ")
            httpx.post(f"{s.url}/resume", timeout=5)
            w.until(lambda o: o["hold"] is None)
        finally:
            w.stop()


def test_vllm_without_dev_mode_has_no_hold_endpoints(tmp_path: Path) -> None:
    with sim(tmp_path, "vllm") as s:
        assert httpx.post(f"{s.url}/sleep", timeout=5).status_code == 404
        assert httpx.get(f"{s.url}/is_paused", timeout=5).status_code == 404


def test_sglang_pause_reads_paused_not_starting(tmp_path: Path) -> None:
    with sim(tmp_path, "sglang") as s:
        w = Watch(s.url, tmp_path / s.engine / "server.log")
        try:
            w.until(lambda o: o["phase"] in ("ready", "serving") and o["health"] == "ready")
            r = httpx.post(f"{s.url}/pause_generation", json={}, timeout=5)
            assert r.json() == {"message": "Generation paused successfully.", "status": "ok"}
            assert httpx.get(f"{s.url}/ready", timeout=5).status_code == 503
            assert httpx.get(f"{s.url}/ping", timeout=5).status_code == 200
            got = w.until(lambda o: hold_state(o) == "paused")
            assert got["health"] == "starting" and got["crash"] is None
            httpx.post(f"{s.url}/continue_generation", json={}, timeout=5)
            w.until(lambda o: o["hold"] is None and o["health"] == "ready")
        finally:
            w.stop()


@pytest.mark.skipif(not prometheus_available(),
                    reason="Debian's prometheus is not installed (tests/install.sh)")
def test_fleet_row_sleeps_and_wakes(tmp_path: Path) -> None:
    import asyncio

    from eagle_tui.sources.prometheus import FleetPoller

    with sim(tmp_path, "vllm", DEV) as s, running_prometheus(tmp_path / "prom",
                                                             [s.target]) as prom:
        poller = FleetPoller(prom.url, window="5s", interval=0.5, deadline_s=3.0)

        async def one() -> Any:
            async with poller.client() as client:
                return await poller.refresh(client)

        def row_state(want: str, within_s: float = 30.0) -> Any:
            deadline = time.monotonic() + within_s
            row = None
            while time.monotonic() < deadline:
                snap = asyncio.run(one())
                row = next((r for r in snap.rows if r.instance == s.target), None)
                if row is not None and row.state == want:
                    return row
                time.sleep(0.5)
            raise AssertionError(f"{s.target}: {row}")

        row_state("ready")
        httpx.post(f"{s.url}/sleep?level=2", timeout=5)
        row = row_state(SLEEPING)
        assert row.sleep_level == 2 and row.state_text == "sleeping (level 2)"
        httpx.post(f"{s.url}/wake_up", timeout=5)
        row_state("ready")


def test_sglang_health_on_a_paused_server_times_out_and_marks_it_unhealthy(tmp_path: Path) -> None:
    """SGLang 0.5.23: ``/health`` generates, the generation waits for the pause, the handler
    gives up after ``HEALTH_CHECK_TIMEOUT`` (503, an error line) and ``/ping`` then says 503
    too, until a ``/health`` succeeds again (why eagle-tui never asks it: ``/ready``)."""
    with sim(tmp_path, "sglang") as s:
        httpx.post(f"{s.url}/pause_generation", json={}, timeout=5)
        assert httpx.get(f"{s.url}/health", timeout=10).status_code == 503
        assert httpx.get(f"{s.url}/ping", timeout=5).status_code == 503
        log = (tmp_path / "sglang" / "server.log").read_text()
        assert "Health check failed. Server couldn't get a response from detokenizer" in log
        httpx.post(f"{s.url}/continue_generation", json={}, timeout=5)
        assert httpx.get(f"{s.url}/health", timeout=10).status_code == 200
        assert httpx.get(f"{s.url}/ping", timeout=5).status_code == 200
