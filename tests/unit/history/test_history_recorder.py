"""The history recorder keeps a watched run's row current: phases, ready time, figures."""

from __future__ import annotations

from pathlib import Path

from eagle_tui.history.recorder import HistoryRecorder
from eagle_tui.history.store import RunStore
from eagle_tui.model.events import DecodeStats, Phase, PhaseEvent, Tick
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState


def test_recorder_writes_on_changes_and_at_the_end(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite3")
    run = store.add(engine="sglang", started=1000.0)
    now = [0.0]
    rec = HistoryRecorder(store, run.id, every=5.0, clock=lambda: now[0])
    state = reduce(DashboardState(), [Tick(1000.0), PhaseEvent(Phase.INIT, 1, None)])
    rec.on_batch(state)
    rec.on_batch(state)  # nothing changed, too soon: no write
    assert rec.writes == 1
    evs = []
    for i, phase in enumerate((Phase.LOADING_WEIGHTS, Phase.KV_CACHE, Phase.READY), 2):
        evs += [Tick(1000.0 + 10 * i), PhaseEvent(phase, i, None)]
    for i in range(6):
        evs += [Tick(1050.0 + i), DecodeStats(10 + i, None, 150.0 + i, 3.3)]
    state = reduce(state, evs)
    rec.on_batch(state)
    row = store.get(str(run.id))
    assert row.state in ("ready", "serving")
    assert row.ready_s == 40.0
    assert row.phases == {"init": 20.0, "loading_weights": 10.0, "kv_cache": 10.0}
    assert row.metrics is not None and 150.0 <= row.metrics["tok_s_median"] <= 156.0
    assert row.metrics["accept_len"] == 3.3
    rec.finish(state, final="stopped")
    row = store.get(str(run.id))
    assert row.state == "stopped" and row.ended is not None


def test_a_broken_history_is_reported_once(tmp_path: Path) -> None:
    import io

    store = RunStore(tmp_path / "h.sqlite3")
    run = store.add(engine="sglang")
    (tmp_path / "h.sqlite3").unlink()
    (tmp_path / "h.sqlite3").mkdir()  # the file is gone and a folder stands in its place
    err = io.StringIO()
    rec = HistoryRecorder(store, run.id, every=0.0, err=err)
    state = reduce(DashboardState(), [Tick(1.0), PhaseEvent(Phase.INIT, 1, None)])
    rec.on_batch(state)
    rec.on_batch(state)
    assert err.getvalue().count("not updated") == 1
