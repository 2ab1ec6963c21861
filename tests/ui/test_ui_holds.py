"""A held server in the status line and the Metrics pane: what it is and since when, never
IDLE or stale."""

from __future__ import annotations

from eagle_tui.model.events import HealthSample, HoldLine, HoldSample, MetricsSample, Tick
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.ui.widgets.metrics import metrics_content
from eagle_tui.ui.widgets.startup import _health_parts
from eagle_tui.ui.widgets.status import status_line

T = 1_796_000_000.0


def _served() -> DashboardState:
    return reduce(DashboardState(), [
        Tick(T), HealthSample("ready", T, 200, 0.001),
        MetricsSample(t=T, engine="vllm", gen_tps=80.0, running=2, queued=0, accept_len=2.5)])


def test_sleeping_in_the_status_line_and_metrics_pane() -> None:
    late = T + 120  # idle or stale without the hold
    state = reduce(_served(), [Tick(late), HealthSample("ready", late, 200, 0.001),
                               MetricsSample(t=late, engine="vllm", running=0, gen_tps=0.0,
                                             asleep=True, sleep_level=1)])
    status = status_line(state).plain
    assert "SLEEPING" in status and "sleeping (level 1) since" in status
    assert "IDLE" not in status and "no data" not in status
    pane = metrics_content(state, 120).plain
    assert "SLEEPING" in pane and "sleeping (level 1) since" in pane


def test_recovering_in_the_status_line() -> None:
    state = reduce(_served(), [Tick(T + 1), HoldLine("ft_fault", 3, "12-02 08:40:00",
                                                     detail="engine 0 UNHEALTHY")])
    status = status_line(state).plain
    assert "RECOVERING" in status and "fault-tolerance: engine 0 UNHEALTHY since" in status


def test_a_paused_sglang_reads_paused_not_starting_in_the_startup_pane() -> None:
    state = reduce(_served(), [
        Tick(T + 1), HealthSample("ready", T + 1, 200, 0.001, path="/ready"),
        HealthSample("starting", T + 2, 503, 0.001, path="/ready"),
        HoldSample(T + 2, paused=True, path="/ping")])
    text = "".join(p if isinstance(p, str) else p[0] for p in _health_parts(state))
    assert "health paused 503" in text and "starting" not in text
