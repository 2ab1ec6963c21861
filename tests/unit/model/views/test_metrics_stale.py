"""``/metrics`` figures that stopped refreshing are marked stale (issue 17, item 3): the
dashboard once kept showing the last tok/s as current while every scrape failed."""

from __future__ import annotations

from eagle_tui.model.events import HealthSample, MetricsSample, SourceFailed, Tick
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.figures import METRICS_STALE_S, figures


def _state(now: float) -> DashboardState:
    return reduce(DashboardState(), [
        Tick(100.0),
        MetricsSample(t=100.0, engine="vllm", gen_tps=50.0, running=2, queued=0),
        SourceFailed("metrics", "/metrics answered HTTP 500", 102.0, 1, 1.0),
        HealthSample("ready", now - 0.5, 200, 0.01),
        Tick(now),
    ])


def test_fresh_metrics_are_current() -> None:
    figs = figures(_state(100.0 + METRICS_STALE_S - 1))
    assert figs.tok_s.value == 50.0 and figs.tok_s.freshness == "current"


def test_metrics_that_stopped_are_stale_with_their_age() -> None:
    figs = figures(_state(100.0 + METRICS_STALE_S + 2))
    assert figs.tok_s.value == 50.0 and figs.tok_s.freshness == "stale"
    assert figs.tok_s.age_s is not None and figs.tok_s.age_s > METRICS_STALE_S
    assert figs.requests.freshness == "stale"
