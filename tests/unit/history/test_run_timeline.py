"""States kept as they happened: a timeline per run (migrated into older files), a crashed
run relaunched stays crashed, a watched run ends when its server does, attaching never rewrites
a time to ready, and one meaning of "ready"."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from eagle_tui.history.recorder import HistoryRecorder
from eagle_tui.history.records import FIELDS, first_timeline, state_text, typed
from eagle_tui.history.store import SCHEMA_VERSION, RunStore
from eagle_tui.model.events import (
    HealthSample,
    Phase,
    PhaseEvent,
    ProcessExited,
    Tick,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.ready import ready_seconds
from eagle_tui.model.views.runsummary import summarize
from eagle_tui.model.views.steps import step_states


def _states(store: RunStore, run_id: int) -> list[str]:
    return [e[0] for e in store.get(str(run_id)).timeline or []]


def test_each_new_state_joins_the_timeline_with_its_time(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite3")
    run = store.add(engine="sglang", started=1000.0)
    assert store.get(str(run.id)).timeline == [["starting", 1000.0, ""]]
    store.update(run.id, state="ready")
    store.update(run.id, state="ready", ready_s=4.0)  # the same state: no entry
    store.update(run.id, state="serving")
    store.update(run.id, state="crashed", ended=1100.0)
    assert _states(store, run.id) == ["starting", "ready", "serving", "crashed"]
    assert store.get(str(run.id)).timeline[-1][1] == 1100.0  # type: ignore[index]
    store.mark(run.id, "relaunched", "#7")
    rec = store.get(str(run.id))
    assert rec.state == "crashed" and rec.state_text == "crashed → relaunched as #7"


def test_a_final_state_is_kept_against_a_watchers_later_write(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite3")
    run = store.add(engine="vllm")
    store.update(run.id, state="ended", ended=5.0)
    store.update(run.id, state="serving", unless_state="final")
    assert store.get(str(run.id)).state == "ended"
    store.update(run.id, state="stopped", ended=6.0)  # a stop right after: the stop explains it
    assert _states(store, run.id) == ["starting", "stopped"]


def test_an_older_file_gets_the_timeline_its_columns_imply(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    cols = [(n, k) for n, k in FIELDS if n != "timeline"]
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                   + ", ".join(f"{n} {k}" for n, k in cols) + ")")
        db.execute("INSERT INTO runs (started, state, ended, ready_s) VALUES "
                   "(1000.0, 'stopped', 1200.0, 43.0)")
        db.execute("INSERT INTO runs (started, state) VALUES (2000.0, 'serving')")
        db.execute("PRAGMA user_version = 1")
    store = RunStore(path)
    old, live = store.list()
    assert old.timeline == [["started", 1000.0, ""], ["ready", 1043.0, ""],
                            ["stopped", 1200.0, ""]]
    assert live.timeline == [["started", 2000.0, ""]]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 2


@pytest.mark.parametrize("value", [
    "x", {"a": 1}, [["ok"]], [[1, 2.0]], [["s", "t"]], [["s", 1e300]], [["s", 1.0, 5]]])
def test_typed_keeps_only_well_formed_timeline_entries(value: object) -> None:
    got = typed("timeline", value)
    assert got is None or got == []


def test_typed_timeline_reads_two_and_three_item_entries() -> None:
    assert typed("timeline", [["a", 1], ["b", 2.0, "n"], "junk"]) == [["a", 1.0, ""],
                                                                    ["b", 2.0, "n"]]
    assert state_text("stopped", None) == "stopped"
    assert state_text("stopped", [["relaunched", 1.0, ""]]) == "stopped → relaunched"
    assert first_timeline(1.0, "crashed", None, None)[-1][2].startswith("time unknown")


def test_a_hand_edited_timeline_reads_as_none(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite3")
    run = store.add(engine="vllm")
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        db.execute("UPDATE runs SET timeline = ? WHERE id = ?", (json.dumps({"x": 1}), run.id))
    assert store.get(str(run.id)).timeline is None
    store.update(run.id, state="ready")  # the state still changes; the timeline starts again
    assert _states(store, run.id) == ["ready"]


def _ready_state() -> DashboardState:
    return reduce(DashboardState(), [Tick(1000.0), PhaseEvent(Phase.INIT, 1, None),
                                     Tick(1043.0), PhaseEvent(Phase.READY, 9, None),
                                     HealthSample("ready", 1043.0, 200)])


def test_a_watched_run_ends_when_its_server_does(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite3")
    run = store.add(kind="watched", state="watched", started=1000.0)
    rec = HistoryRecorder(store, run.id, every=0.0)
    state = _ready_state()
    rec.on_batch(state)
    assert store.get(str(run.id)).state in ("ready", "serving")
    state = reduce(state, [Tick(1100.0), ProcessExited(1100.0, 42, 0)])
    assert summarize(state)["state"] == "ended"
    rec.on_batch(state)
    row = store.get(str(run.id))
    assert row.state == "ended" and row.ended == 1100.0
    assert _states(store, run.id)[-1] == "ended"
    rec.on_batch(reduce(state, [Tick(1200.0)]))  # later writes keep it ended
    assert store.get(str(run.id)).state == "ended"


def test_a_server_whose_health_is_gone_long_enough_ended() -> None:
    state = _ready_state()
    short = reduce(state, [Tick(1070.0), HealthSample("no_listener", 1070.0)])
    assert summarize(short)["state"] != "ended"  # shown dead; a minute is not over yet
    long = reduce(short, [Tick(1110.0), HealthSample("no_listener", 1110.0)])
    got = summarize(long)
    assert got["state"] == "ended" and got["end_reason"].startswith("nothing listens")


def test_attaching_never_rewrites_the_time_to_ready(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite3")
    run = store.add(engine="sglang", started=1000.0)
    HistoryRecorder(store, run.id).finish(_ready_state())
    assert store.get(str(run.id)).ready_s == 43.0
    # an attach later: the server was up; its log read from the end shows no startup line
    attached = reduce(DashboardState(), [Tick(5000.0), HealthSample("ready", 5000.4, 200),
                                         Tick(5000.4), PhaseEvent(Phase.READY, 3, None)])
    assert ready_seconds(attached) is None  # it did not see the start
    late = HistoryRecorder(store, run.id, owns_start=False)
    late.on_batch(attached)
    assert store.get(str(run.id)).ready_s == 43.0
    # even one that saw a start of its own does not replace the first observer's
    late.on_batch(reduce(_ready_state(), [Tick(1045.0)]))
    assert store.get(str(run.id)).ready_s == 43.0


def test_one_meaning_of_ready_the_pane_and_the_record_agree() -> None:
    state = _ready_state()
    ready_step = [e for s, st, e in step_states(state) if s.label == "ready" and st == "done"]
    assert ready_step == [ready_seconds(state)] == [43.0]
    assert summarize(state)["ready_s"] == 43.0


@pytest.mark.parametrize("name", ["pid", "pgid", "parent", "log_offset", "id"])
def test_typed_integers_are_never_negative(name: str) -> None:
    """An edited history's ``-1`` pid or log offset reads as NULL (its default), as any value
    of the wrong type does: none of these columns has a negative meaning."""
    assert typed(name, -1) is None and typed(name, 0) == 0 and typed(name, 7) == 7
