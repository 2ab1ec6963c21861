"""Endpoint chaos at the sources and the commands (issue 17, item 3): every failure below
reproduced on the code before the HTTP budget, and is bounded now.

The commands run as subprocesses against :class:`~eagle_tui.sim.hostile.HostileServer` so that
what is measured is what a user waits for (``wait --timeout N`` returns within N + a margin,
headless ``--duration`` is honoured) whatever the server does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.sim.hostile import HostileServer
from eagle_tui.sources.health import HealthPoller
from eagle_tui.sources.metrics import MetricsError, MetricsScraper
from eagle_tui.sources.serverinfo import ServerInfoSource
from eagle_tui.transport.local import LocalTransport

ROOT = Path(__file__).resolve().parents[2]
MARGIN_S = 3.0  # process start (~1 s on a loaded 2-core machine) + the session's stop


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    with HostileServer(drip_s=0.2, max_conn_s=30.0) as srv:
        yield srv


async def test_drip_health_is_timeout_not_ready(hostile: HostileServer) -> None:
    """Headers "200" then a byte every 0.2 s: once "ready 200" forever; now ``timeout``."""
    hostile.set_mode("drip")
    poller = HealthPoller(LocalTransport(), hostile.url, timeout=1.0, max_polls=1)
    t0 = time.monotonic()
    samples = [s async for s in poller.events()]
    assert time.monotonic() - t0 < 2.0
    assert [s.state for s in samples] == ["timeout"]
    assert "HTTP 200 came" in samples[0].error


@pytest.mark.parametrize("mode", ["huge", "endless"])
async def test_huge_and_endless_metrics_are_skipped_with_a_note(hostile: HostileServer,
                                                                 mode: str) -> None:
    """50 MB / endless ``/metrics``: once 1.2 GB / 3 GB; now the read stops at the cap."""
    hostile.set_mode(mode)
    scraper = MetricsScraper(LocalTransport(), hostile.url, timeout=5.0, max_polls=1)
    t0 = time.monotonic()
    with pytest.raises(MetricsError, match=r"larger than|more than"):
        _ = [s async for s in scraper.events()]
    assert time.monotonic() - t0 < 4.0


async def test_unrepresentable_values_are_skipped_not_fatal(hostile: HostileServer) -> None:
    """A 400-digit value failed every scrape with ``OverflowError``; now it is skipped with a
    note and the scrape goes on (and the note reaches the alerts)."""
    hostile.set_mode("numbers")
    scraper = MetricsScraper(LocalTransport(), hostile.url, max_polls=2, interval=0.05)
    samples = [s async for s in scraper.events()]
    assert len(samples) == 2
    assert samples[-1].running is None and samples[-1].gen_tps is None
    assert "not representable" in samples[-1].skipped
    assert "vllm:num_requests_running" in samples[-1].skipped
    state = reduce(DashboardState(), [samples[-1]])
    assert any(a.kind == "metrics_values_skipped" for a in state.alerts)


async def test_server_info_of_1e308_is_not_shown(hostile: HostileServer) -> None:
    hostile.set_mode("numbers")
    src = ServerInfoSource(LocalTransport(), hostile.url, max_polls=1)
    infos = [i async for i in src.events()]
    assert infos and infos[0].avg_accept_len is None and infos[0].memory_gb == ()
    assert infos[0].spec is not None and infos[0].spec.num_steps == 3


MAX_RSS_MB = 400  # the process with Textual-free imports is ~60-90 MB; a 50 MB body was 1.2 GB


def _eagle(*args: str, timeout: float, tmp: Path) -> tuple[int, float, str]:
    """Run eagle-tui; (exit code, seconds, output). Fails when its peak RSS passes the bound."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    out_path = tmp / "out.txt"
    t0 = time.monotonic()
    with out_path.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "eagle_tui", *args], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
        deadline = t0 + timeout
        while time.monotonic() < deadline:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.05)
        else:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - t0
    text = out_path.read_bytes().decode("utf-8", "replace")
    assert usage.ru_maxrss / 1024 < MAX_RSS_MB, f"peak RSS {usage.ru_maxrss >> 10} MB\n{text}"
    return proc.returncode, took, text


@pytest.mark.parametrize("mode", ["drip", "hang", "huge", "endless", "garbage", "500"])
def test_wait_returns_within_its_timeout(hostile: HostileServer, mode: str,
                                         tmp_path: Path) -> None:
    """``wait --timeout 3`` once returned after 32 s on a 50 MB ``/metrics``; here ``/health``
    says "starting" (503) while ``/metrics`` floods, so ``wait`` keeps waiting to its end."""
    hostile.set_mode(mode)
    if mode in ("huge", "endless"):
        hostile.health_mode = "503"
    rc, took, out = _eagle("wait", "--url", hostile.url, "--timeout", "3", timeout=60,
                           tmp=tmp_path)
    assert took < 3 + MARGIN_S, out
    assert rc in (1, 3), out  # timed out (500: /health failing is not ready either)


@pytest.mark.parametrize("mode", ["huge", "endless", "drip"])
def test_headless_watch_honours_duration(hostile: HostileServer, mode: str,
                                         tmp_path: Path) -> None:
    """Headless ``--duration 20`` once ran 47 s at 1.2 GB on a 50 MB ``/metrics``."""
    hostile.set_mode(mode)
    rc, took, out = _eagle("watch", "--headless", "--url", hostile.url, "--duration", "3",
                           timeout=60, tmp=tmp_path)
    assert took < 3 + MARGIN_S, out
    assert rc == 0, out


@pytest.mark.parametrize("mode", ["drip", "hang", "garbage", "500", "503", "numbers"])
async def test_a_hostile_load_endpoint_is_quiet_and_bounded(hostile: HostileServer,
                                                            mode: str) -> None:
    """``/v1/loads`` that drips, hangs, answers garbage or an error: no event, no failure, and
    each poll ends within its timeout."""
    from eagle_tui.sources.loads import LoadsSource

    hostile.set_mode(mode)
    src = LoadsSource(LocalTransport(), hostile.url, timeout=1.0, max_polls=2, interval=0.05)
    t0 = time.monotonic()
    assert [ev async for ev in src.events()] == []
    assert time.monotonic() - t0 < 4.0
