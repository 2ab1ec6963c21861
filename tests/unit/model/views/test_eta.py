"""Startup ETA from the run history's usual phase times, and the slow-phase alert."""

from __future__ import annotations

from eagle_tui.model.events import Phase, PhaseEvent, Progress, Tick, UsualTimes
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.eta import step_eta
from eagle_tui.model.views.steps import step_states
from eagle_tui.ui.widgets.startup import startup_content

USUAL = UsualTimes((("init", 5.0), ("loading_weights", 30.0), ("weights_loaded", 1.0),
                    ("kv_cache", 4.0), ("cuda_graph", 45.0), ("http_server", 3.0)), 4)


def at_graphs(seconds: float, usual: UsualTimes | None = USUAL) -> DashboardState:
    evs = [Tick(0.0), *([usual] if usual else []), PhaseEvent(Phase.INIT, 1, None), Tick(5.0),
           PhaseEvent(Phase.LOADING_WEIGHTS, 2, None), Tick(35.0),
           PhaseEvent(Phase.WEIGHTS_LOADED, 3, None), PhaseEvent(Phase.KV_CACHE, 4, None),
           Tick(40.0), PhaseEvent(Phase.CUDA_GRAPH, 5, None), Tick(40.0 + seconds)]
    return reduce(DashboardState(), evs)


def active(state: DashboardState) -> tuple[str, float | None]:
    return next((s.label, e) for s, st, e in step_states(state) if st == "active")


def test_eta_from_history_and_slow_alert() -> None:
    s = at_graphs(15.0)
    label, elapsed = active(s)
    eta = step_eta(s, label, elapsed)
    assert label == "CUDA graphs" and eta is not None and eta.left == 30.0 and not eta.slow
    assert "~0:30 left" in startup_content(s, 80).plain
    assert not [a for a in s.alerts if a.kind == "slow-phase"]
    slow = at_graphs(190.0)
    alert = next(a for a in slow.alerts if a.kind == "slow-phase")
    assert alert.severity == "warning"
    assert alert.message.startswith("CUDA graphs: 3:10, usually 0:45")
    assert "usually 0:45" in startup_content(slow, 80).plain


def test_weights_eta_from_the_shard_rate_without_history() -> None:
    evs = [Tick(1000.0), PhaseEvent(Phase.INIT, 1, None),
           PhaseEvent(Phase.LOADING_WEIGHTS, 2, None), Tick(1020.0),
           Progress("shards", 10, 40, 3), Tick(1020.0)]
    s = reduce(DashboardState(), evs)
    label, elapsed = active(s)
    eta = step_eta(s, label, elapsed)
    assert label == "weights" and eta is not None and eta.basis == "shards"
    assert eta.left == 60.0
    assert at_graphs(400.0, usual=None).alerts == () or not [
        a for a in at_graphs(400.0, usual=None).alerts if a.kind == "slow-phase"]


def test_usual_times_from_the_history(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from eagle_tui.history.store import RunStore
    from eagle_tui.history.usual import usual_times

    store = RunStore(tmp_path / "h.sqlite3")
    flags = {"model_path": "/m", "speculative_algorithm": "EAGLE3", "port": "30000"}
    for i, graphs in enumerate((40.0, 45.0, 60.0)):
        store.add(engine="sglang", host="box", flags={**flags, "port": str(30000 + i)},
                  phases={"cuda_graph": graphs, "init": 5.0}, ready_s=90.0, state="stopped")
    store.add(engine="sglang", host="box", flags={**flags, "speculative_num_steps": "5"},
              phases={"cuda_graph": 500.0}, ready_s=600.0, state="stopped")
    store.add(engine="sglang", host="other", flags=flags, phases={"cuda_graph": 900.0},
              ready_s=990.0, state="stopped")
    got = usual_times(store, host="box", engine="sglang", flags=flags)
    assert got is not None and got.runs == 3
    assert dict(got.phases) == {"cuda_graph": 45.0, "init": 5.0}
    assert usual_times(store, host="box", engine="vllm", flags=flags) is None
