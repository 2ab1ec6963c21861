"""Endpoint chaos through the dashboard (Pilot): for every hostile mode the dashboard shows an
honest state, the failing source is named, and a key is still handled at once (issue 17).

The key latency *figures* are the benchmark's (``benchmarks/bench_chaos.py``, in a real
terminal); this test only proves the behaviour, with a loose bound on each key.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from eagle_tui.assembly.open import prepare_dashboard
from eagle_tui.assembly.spec import DashboardSpec, check_sources
from eagle_tui.sim.hostile import HostileServer
from eagle_tui.ui.app import EagleApp
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.textual_private import screen_text

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "eagle_tui" / "data" / "sample-sglang-eagle3.log"
KEY_BOUND_S = 1.0  # loose: Pilot on a shared 2-core machine; the benchmark gives the figures

# mode → the health state the dashboard must reach, and what else must show
EXPECT: dict[str, tuple[str, str]] = {
    "ok": ("ready", ""),
    "refused": ("no_listener", ""),
    "503": ("starting", ""),
    "500": ("error", ""),
    "garbage": ("error", ""),
    "hang": ("timeout", ""),
    "drip": ("timeout", ""),
    "huge": ("ready", "metrics"),  # the metrics source failing: "larger than ..."
    "endless": ("ready", "metrics"),
    "numbers": ("ready", "metrics_values_skipped"),
}


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    with HostileServer(drip_s=0.2, max_conn_s=30.0) as srv:
        yield srv


async def _until(pilot: Pilot[int], ok: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(ok) and ok():
            return True
        await pilot.pause(0.05)
    return bool(callable(ok) and ok())


async def _key_latency(pilot: Pilot[int], app: EagleApp) -> float:
    t0 = time.monotonic()
    await pilot.press("slash")
    opened = await _until(pilot, lambda: "filter: show only" in screen_text(app), 3.0)
    took = time.monotonic() - t0
    await pilot.press("escape")
    assert opened, screen_text(app)
    return took


@pytest.mark.parametrize("mode", list(EXPECT))
async def test_dashboard_under_endpoint_chaos(hostile: HostileServer, mode: str) -> None:
    hostile.set_mode(mode)
    spec = check_sources(DashboardSpec(log=str(SAMPLE), url=hostile.url, gpu="none"))
    dashboard = prepare_dashboard(spec, config=UiConfig())
    app = dashboard.app
    want_health, want_more = EXPECT[mode]
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            def health() -> bool:
                h = app.state.live.health
                return h is not None and h.state == want_health

            assert await _until(pilot, health, 12.0), (mode, app.state.live.health)
            if want_more == "metrics":
                assert await _until(pilot, lambda: any(
                    f.source == "metrics" and ("larger than" in f.error or "more than" in f.error)
                    for f in app.state.live.failures), 12.0), app.state.live.failures
            elif want_more:
                assert await _until(pilot, lambda: any(
                    a.kind == want_more for a in app.state.alerts), 12.0), app.state.alerts
            latencies = [await _key_latency(pilot, app) for _ in range(3)]
            assert max(latencies) < KEY_BOUND_S, latencies
            assert "\x1b" not in screen_text(app)
    finally:
        dashboard.close()
