"""The run history: round trip, references, two writers at once, unusable folders, compare."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eagle_tui.history.store import HistoryError, RunStore
from eagle_tui.model.bench.compare import flag_changes, flatten


def test_round_trip_and_references(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite3")
    a = store.add(engine="sglang", command="python -m sglang.launch_server --x",
                  flags={"speculative_algorithm": "EAGLE"}, started=100.0,
                  metrics={"tok_s_median": 56.7, "accept_len": 1.0}, phases={"load": 3.5})
    b = store.add(engine="sglang", name="fixed", flags={"speculative_algorithm": "EAGLE3"},
                  started=200.0, state="ready")
    assert a.name == "sglang-1" and a.state == "starting" and a.metrics == {
        "tok_s_median": 56.7, "accept_len": 1.0}
    assert store.get("last").id == b.id and store.get("last~1").id == a.id
    assert store.get("fixed").id == b.id and store.get(str(a.id)).phases == {"load": 3.5}
    store.note(a.id, "EAGLE with an EAGLE-3 draft")
    assert store.get("1").notes == "EAGLE with an EAGLE-3 draft"
    store.update(b.id, state="stopped", ended=250.0)
    assert store.get("fixed").ended == 250.0
    with pytest.raises(HistoryError):
        store.get("last~5")
    with pytest.raises(HistoryError):
        store.add(name="fixed", started=1.0)
    store.remove(a.id)
    assert [r.id for r in store.list()] == [b.id]


def test_demo_runs_are_kept_apart(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite3")
    store.add(engine="sglang", demo=True)
    real = store.add(engine="vllm")
    assert [r.id for r in store.list()] == [real.id]
    assert len(store.list(demo=True)) == 1 and len(store.list(demo=None)) == 2


def _writer(path: str, n: int, tag: str) -> None:
    store = RunStore(Path(path))
    for i in range(n):
        run = store.add(engine=tag, started=float(i))
        store.update(run.id, state="ready", metrics={"i": i})


def test_two_processes_writing_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "h.sqlite3")
    RunStore(Path(path))
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, 60, tag)) for tag in ("sglang", "vllm")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    runs = RunStore(Path(path)).list(limit=1000)
    assert len(runs) == 120 and all(r.state == "ready" for r in runs)
    assert len({r.name for r in runs}) == 120


def test_unusable_directory_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(HistoryError, match=r"unusable.*EAGLE_TUI_DATA_DIR"):
        RunStore(blocker / "sub" / "h.sqlite3")
    env = {**os.environ, "EAGLE_TUI_DATA_DIR": str(blocker / "sub")}
    p = subprocess.run([sys.executable, "-m", "eagle_tui", "runs", "list"], capture_output=True,
                       text=True, env=env, timeout=60, check=False)
    assert p.returncode == 2 and "unusable" in p.stderr and "Traceback" not in p.stderr


def test_flag_diff_is_one_line_for_sglang_and_inside_vllm_json() -> None:
    sg = flag_changes([{"model_path": "/m", "speculative_algorithm": "EAGLE"},
                       {"model_path": "/m", "speculative_algorithm": "EAGLE3"}])
    assert [(c.flag, c.before, c.after) for c in sg] == [
        ("--speculative-algorithm", "EAGLE", "EAGLE3")]
    vl = flag_changes([
        {"speculative_config": '{"method": "eagle", "model": "/d", "num_speculative_tokens": 3}'},
        {"speculative_config": {"method": "eagle3", "model": "/d", "num_speculative_tokens": 3}}])
    assert [(c.flag, c.before, c.after) for c in vl] == [
        ("--speculative-config.method", "eagle", "eagle3")]
    assert flatten({"enforce_eager": True, "served_model_name": ["a", "b"]}) == {
        "--enforce-eager": "true", "--served-model-name": "a b"}


def test_runs_cli_compare_json(tmp_path: Path) -> None:
    env = {**os.environ, "EAGLE_TUI_DATA_DIR": str(tmp_path)}
    store = RunStore(tmp_path / "runs.sqlite3")
    store.add(engine="sglang", flags={"speculative_algorithm": "EAGLE"}, state="stopped",
              metrics={"tok_s_median": 56.7, "accept_len": 1.0},
              phases={"http_server": 41.0, "init": 8.0, "kv_cache": 0.6, "a_new_one": 1.0})
    store.add(engine="sglang", flags={"speculative_algorithm": "EAGLE3"}, state="ready",
              metrics={"tok_s_median": 150.0, "accept_len": 3.4},
              phases={"loading_weights": 2.0, "init": 7.0})
    base = [sys.executable, "-m", "eagle_tui", "runs"]
    p = subprocess.run([*base, "compare", "last~1", "last", "--json", "--baseline", "90"],
                       capture_output=True, text=True, env=env, timeout=60, check=True)
    out = json.loads(p.stdout)
    assert out["flags_changed"] == [{"flag": "--speculative-algorithm", "from": "EAGLE",
                                     "to": "EAGLE3"}]
    assert [r["accept_len"] for r in out["runs"]] == [1.0, 3.4]
    assert [round(r["speedup"], 2) for r in out["runs"]] == [0.63, 1.67]
    text = subprocess.run([*base, "compare", "last~1", "last", "--baseline", "90"],
                          capture_output=True, text=True,
                          env=env, timeout=60, check=True).stdout
    assert "--speculative-algorithm: EAGLE → EAGLE3" in text and "0.63×" in text
    # the phases in the order a launch passes them, one of another version's last
    rows = [ln.split()[0] for ln in text.splitlines() if ln.startswith("  ") and ln.strip()
            and not ln.startswith("   ")]
    assert rows[:5] == ["init", "loading_weights", "kv_cache", "http_server", "a_new_one"], text
    listed = json.loads(subprocess.run([*base, "list", "--json"], capture_output=True,
                                       text=True, env=env, timeout=60, check=True).stdout)
    assert {"id", "name", "engine", "command", "started", "state"} <= set(listed[0])
    assert subprocess.run([*base, "show", "nope"], capture_output=True, text=True, env=env,
                          timeout=60, check=False).returncode == 2


def test_baseline_run_on_watch_wait_and_launch(tmp_path: Path) -> None:
    from eagle_tui.history.store import baseline_of

    store = RunStore(tmp_path / "runs.sqlite3")
    store.add(engine="sglang", name="nospec", metrics={"tok_s_median": 90.0}, state="stopped")
    store.add(engine="sglang", name="empty", state="stopped")
    assert baseline_of("nospec", store) == 90.0
    with pytest.raises(HistoryError, match="no tok/s"):
        baseline_of("empty", store)
    env = {**os.environ, "EAGLE_TUI_DATA_DIR": str(tmp_path)}
    log = tmp_path / "s.log"
    log.write_text("[2026-12-01 10:00:00] Decode batch. #running-req: 1, #token: 9, token "
                   "usage: 0.00, accept len: 1.00, gen throughput (token/s): 45.00, "
                   "#queue-req: 0\n")
    p = subprocess.run([sys.executable, "-m", "eagle_tui", "watch", "--log", str(log),
                        "--baseline-run", "nospec", "--headless", "--json", "--duration", "2",
                        "--gpu", "none"], capture_output=True, text=True, env=env, timeout=60,
                       check=False)
    assert p.returncode == 0, p.stderr
    speedups = [json.loads(x)["numbers"]["speedup"] for x in p.stdout.splitlines()
                if x.startswith("{") and json.loads(x).get("numbers", {}).get("speedup")]
    assert speedups and abs(speedups[-1]["value"] - 0.5) < 1e-6
    bad = subprocess.run([sys.executable, "-m", "eagle_tui", "wait", "--log", str(log),
                          "--baseline-run", "empty", "--timeout", "1"], capture_output=True,
                         text=True, env=env, timeout=60, check=False)
    assert bad.returncode == 2 and "no tok/s" in bad.stderr
