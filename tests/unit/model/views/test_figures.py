"""Which number is shown and where it came from: one rule for every consumer (the status line's
and the Metrics pane's side: tests/ui/test_ui_figures.py)."""

from __future__ import annotations

from eagle_tui.model.events import (
    Baseline,
    DecodeStats,
    Event,
    MetricsSample,
    ServerInfo,
    SpecStats,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.alerts import rule_drafts_rejected
from eagle_tui.model.views.figures import accept_len, figures, tok_s


def st(*events: Event) -> DashboardState:
    return reduce(DashboardState(), events)


def test_nothing_known() -> None:
    f = figures(DashboardState())
    assert not f.tok_s.known and f.tok_s.source == "" and len(f.tok_s.series) == 0
    assert not f.accept_len.known and not f.accept_lifetime.known and not f.speedup.known
    assert f.requests.source == "" and f.per_position.value is None


def test_the_log_wins_over_metrics_and_metrics_fills_in() -> None:
    metrics = [MetricsSample(1.0, gen_tps=50.0, accept_len=2.0, acceptance_rate=0.4,
                             per_position=(0.9, 0.5), running=3)]
    f = figures(st(*metrics))
    assert (f.tok_s.value, f.tok_s.source) == (50.0, "/metrics")
    assert (f.accept_len.value, f.accept_len.source) == (2.0, "/metrics")
    assert (f.accept_rate.value, f.accept_rate.source) == (0.4, "/metrics")
    assert f.per_position.value == (0.9, 0.5) and f.per_position.source == "/metrics"
    assert (f.requests.value, f.requests.source) == (3, "/metrics")
    both = st(*metrics, DecodeStats(1, gen_tps=120.0, accept_len=3.1, accept_rate=0.7,
                                    running=5), SpecStats(2, per_position=(0.8,)))
    f = figures(both)
    assert (f.tok_s.value, f.tok_s.source) == (120.0, "log")
    assert (f.accept_len.value, f.accept_len.source) == (3.1, "log")
    assert f.accept_len.series is both.stats.accept_len
    assert (f.accept_rate.value, f.accept_rate.source) == (0.7, "log")
    assert f.per_position.value == (0.8,) and f.per_position.source == "log"
    assert (f.requests.value, f.requests.source) == (5, "log")
    assert tok_s(both).value == 120.0 and accept_len(both).value == 3.1  # the state's shorthands


def test_lifetime_accept_length_is_its_own_figure() -> None:
    s = st(ServerInfo(1.0, avg_accept_len=2.75))
    f = figures(s)
    assert not f.accept_len.known  # the status line shows no accept length
    assert (f.accept_lifetime.value, f.accept_lifetime.source) == (2.75, "server_info")
    assert f.accept_lifetime.window == "lifetime average"


def test_speedup_uses_the_median_and_falls_back_on_an_idle_log() -> None:
    s = st(Baseline(100.0), *(DecodeStats(i, gen_tps=v) for i, v in enumerate((150, 250, 200))))
    f = figures(s).speedup
    assert f.value == 2.0 and f.source == "log" and f.window == "median of the last 20"
    idle = st(Baseline(100.0), DecodeStats(1, gen_tps=0.0), MetricsSample(1.0, gen_tps=80.0))
    assert figures(idle).speedup.value == 0.8 and figures(idle).speedup.source == "/metrics"
    assert figures(st(DecodeStats(1, gen_tps=10.0))).speedup.value is None  # no baseline


def test_alerts_judge_the_number_that_is_shown() -> None:
    s = st(*(MetricsSample(float(t), gen_tps=90.0, accept_len=1.02) for t in range(1, 4)))
    assert figures(s).accept_len.source == "/metrics"
    assert rule_drafts_rejected(s) is not None
