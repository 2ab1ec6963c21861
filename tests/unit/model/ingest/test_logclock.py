"""Phase times from the server's own clock when a startup is read in one catch-up burst."""

from __future__ import annotations

from eagle_tui.model.events import Phase, PhaseEvent, Tick
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.logclock import best_span, log_seconds, span
from eagle_tui.model.state import DashboardState
from eagle_tui.ui.widgets.startup import step_states


def test_stamps_of_every_engine() -> None:
    a = log_seconds("2026-12-01 10:00:00")
    assert a is not None and log_seconds("2026-12-01 10:00:36") == a + 36
    assert log_seconds("2026-12-01T10:00:36.5Z") == a + 36.5
    v = log_seconds("12-01 10:00:00")
    assert v is not None and log_seconds("12-01 10:01:00") == v + 60
    assert log_seconds("10:00:00") == 36_000
    for bad in ("", None, "25:00:00", "2026-13-01 10:00:00", "x" * 100, "10:00"):
        assert log_seconds(bad) is None
    assert span(log_seconds("23:59:50"), log_seconds("00:00:10")) == 20


def test_burst_rule() -> None:
    assert best_span(0.01, 36.0) == 36.0  # read in one burst: the log's clock
    assert best_span(12.0, 96.0) == 12.0  # watched live (a compressed simulator): observed
    assert best_span(None, 5.0) == 5.0 and best_span(2.0, None) == 2.0


def test_attach_after_startup_shows_the_logs_durations() -> None:
    # every phase line arrives within a few ms (catch-up), stamped 36 s apart by the server
    evs = [Tick(1000.0)]
    stamps = [("10:00:00", Phase.INIT), ("10:00:04", Phase.LOADING_WEIGHTS),
              ("10:00:20", Phase.WEIGHTS_LOADED), ("10:00:22", Phase.KV_CACHE),
              ("10:00:30", Phase.CUDA_GRAPH), ("10:00:35", Phase.HTTP_SERVER),
              ("10:00:36", Phase.READY)]
    for i, (stamp, phase) in enumerate(stamps, 1):
        evs.append(PhaseEvent(phase, i, f"2026-12-01 {stamp}"))
        evs.append(Tick(1000.0 + i * 0.001))
    state = reduce(DashboardState(), evs)
    steps = {step.label: elapsed for step, status, elapsed in step_states(state)}
    assert steps["ready"] == 36.0
    assert steps["weights"] == 16.0
    assert all(v is None or v > 0 for v in steps.values())
