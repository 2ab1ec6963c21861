"""The engine's own startup figures where phase times are shown and kept, the compile
sub-steps and the checkpoint's bytes in the Startup pane, headless output, the report and the
run history."""

from __future__ import annotations

from pathlib import Path

from eagle_tui.headless.lines import diagnosis_lines, phase_text, progress_dict, result_dict
from eagle_tui.history.recorder import HistoryRecorder
from eagle_tui.history.store import RunStore
from eagle_tui.history.usual import usual_times
from eagle_tui.model.events import (
    EngineTimings,
    MetricsSample,
    Phase,
    PhaseEvent,
    Progress,
    ServerInfo,
    SubStep,
    Tick,
    WeightBytes,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.eta import step_eta
from eagle_tui.model.views.runsummary import phase_times, summarize
from eagle_tui.model.views.steps import step_detail, step_states
from eagle_tui.ui.widgets.startup import startup_content

TIMES = EngineTimings("log", (("loading_weights", 12.5), ("kv_cache", 1.25), ("cuda_graph", 30.0)),
                      (("load_weight", 12.5), ("kv_cache_allocation", 1.25),
                       ("cuda_graph.decode", 30.0), ("scheduler_e2e", 50.0)), 40)


def started(*extra: object) -> DashboardState:
    evs = [Tick(100.0), PhaseEvent(Phase.INIT, 1, None), Tick(105.0),
           PhaseEvent(Phase.LOADING_WEIGHTS, 2, None), Tick(125.0),
           PhaseEvent(Phase.WEIGHTS_LOADED, 3, None), PhaseEvent(Phase.KV_CACHE, 4, None),
           Tick(130.0), PhaseEvent(Phase.CUDA_GRAPH, 5, None), Tick(170.0),
           PhaseEvent(Phase.HTTP_SERVER, 6, None), Tick(172.0), PhaseEvent(Phase.READY, 7, None),
           *extra]
    return reduce(DashboardState(), evs)  # type: ignore[arg-type]


def test_engine_figures_win_over_the_log_estimate() -> None:
    before = started()
    assert phase_times(before)["loading_weights"] == 20.0
    s = started(TIMES)
    times = phase_times(s)
    assert times["loading_weights"] == 12.5 and times["cuda_graph"] == 30.0
    assert times["kv_cache"] == 1.25 and times["init"] == 5.0
    steps = {st.label: e for st, _, e in step_states(s)}
    assert steps["weights"] == 12.5 and steps["CUDA graphs"] == 30.0 and steps["KV cache"] == 1.25
    assert steps["args"] == 5.0
    pane = startup_content(s, 80).plain
    assert "engine" in pane and "engine" not in startup_content(before, 80).plain
    summary = summarize(s)
    assert summary["phases"]["loading_weights"] == 12.5
    sources = summary["metrics"]["phase_sources"]
    assert sources["loading_weights"] == "engine (log)" and sources["init"] == "log timestamps"
    assert summary["metrics"]["engine_startup"]["figures"]["scheduler_e2e"] == 50.0


def test_zero_graph_time_is_not_a_phase_reached() -> None:
    # a CPU server: SGLang prints every graph family as 0.00, and reaches no graph phase
    cpu = EngineTimings("log", (("loading_weights", 0.06), ("kv_cache", 1.22),
                                ("cuda_graph", 0.0)), (("load_weight", 0.06),))
    s = reduce(DashboardState(), [Tick(0.0), PhaseEvent(Phase.INIT, 1, None),
                                  PhaseEvent(Phase.LOADING_WEIGHTS, 2, None), Tick(1.0),
                                  PhaseEvent(Phase.KV_CACHE, 3, None), Tick(2.0),
                                  PhaseEvent(Phase.HTTP_SERVER, 4, None), cpu])
    assert "cuda_graph" not in phase_times(s) and phase_times(s)["loading_weights"] == 0.06


def test_first_report_is_kept_and_a_fuller_one_replaces_it() -> None:
    partial = EngineTimings("/metrics", (("loading_weights", 1.0),), (("load_weight", 1.0),))
    s = started(partial, TIMES, MetricsSample(t=180.0, startup=partial))
    assert s.startup.engine_times == TIMES
    s2 = started(ServerInfo(t=180.0, version="0.5.23", startup=TIMES))
    assert s2.startup.engine_times == TIMES and s2.config.server_info is not None
    assert s2.config.server_info.version == "0.5.23"


def test_the_kept_source_does_not_depend_on_which_arrives_first() -> None:
    import itertools
    from dataclasses import replace
    kinds = [replace(TIMES, source=src, lineno=40 if src == "log" else 0)
             for src in ("server_info", "/metrics", "log")]
    for order in itertools.permutations(kinds):
        evs = [ServerInfo(t=180.0, version="0.5.23", startup=t) if t.source == "server_info"
               else MetricsSample(t=180.0, startup=t) if t.source == "/metrics" else t
               for t in order]
        kept = started(*evs).startup.engine_times
        assert kept is not None and kept.source == "log" and kept.lineno == 40, order
    no_log = started(kinds[0], kinds[1]).startup.engine_times
    assert no_log is not None and no_log.source == "/metrics"


def test_headless_and_result_name_the_engine_figures() -> None:
    s = started(TIMES)
    result = result_dict(s, "ready", "health", 0)
    assert result["phase_times"]["cuda_graph"] == 30.0
    assert result["phase_sources"]["cuda_graph"] == "engine (log)"
    assert result["engine_startup"]["source"] == "log"
    assert progress_dict(s)["engine_startup"]["phases"]["kv_cache"] == 1.25
    text = "\n".join(diagnosis_lines(s, "ready", "health ok"))
    assert "startup as the engine measured it (log): load_weight 12.50 s" in text
    assert "engine_startup" not in result_dict(started(), "ready", "health", 0)


def test_compile_substep_shows_under_the_graph_step() -> None:
    base = [Tick(0.0), PhaseEvent(Phase.INIT, 1, None), PhaseEvent(Phase.LOADING_WEIGHTS, 2, None),
            PhaseEvent(Phase.WEIGHTS_LOADED, 3, None), PhaseEvent(Phase.KV_CACHE, 4, None),
            Tick(10.0)]
    s = reduce(DashboardState(), [*base, SubStep("DeepGEMM JIT", 5, None, "x", 100, 222),
                                  Tick(300.0)])
    # a silent compile moves the stepper to the graph step, and says what it compiles
    assert s.startup.phase is Phase.CUDA_GRAPH
    assert step_detail(s, "CUDA graphs", "active") == ("DeepGEMM JIT 100/222", 100 / 222)
    assert "DeepGEMM JIT 100/222" in startup_content(s, 80).plain
    assert phase_text(s) == "cuda_graph (DeepGEMM JIT 100/222)"
    assert progress_dict(s)["substep"] == {"what": "DeepGEMM JIT", "done": 100, "total": 222,
                                           "finished": False}
    done = reduce(s, [SubStep("FlashInfer autotune", 6, None, "", finished=True)])
    assert step_detail(done, "CUDA graphs", "active") is None
    capture = reduce(s, [Progress("graphs", 3, 10, 9)])
    assert step_detail(capture, "CUDA graphs", "active") is None  # the capture's own count
    later = reduce(started(), [SubStep("DeepGEMM JIT", 99, None)])
    assert later.startup.phase is Phase.READY  # a warm-up's compile after ready moves nothing


def test_weights_progress_and_eta_from_checkpoint_bytes() -> None:
    evs = [Tick(1000.0), PhaseEvent(Phase.INIT, 1, None),
           PhaseEvent(Phase.LOADING_WEIGHTS, 2, None), WeightBytes(3, size_gib=20.0),
           Tick(1030.0), WeightBytes(4, percent=30.0), Tick(1030.0)]
    s = reduce(DashboardState(), evs)
    assert s.startup.weight_bytes == WeightBytes(4, 20.0, 30.0)
    eta = step_eta(s, "weights", 30.0)
    assert eta is not None and eta.basis == "bytes" and eta.left == 70.0
    assert step_detail(s, "weights", "active") == ("6.0/20.0 GiB", 0.3)
    assert "6.0/20.0 GiB" in startup_content(s, 80).plain
    assert "~1:10 left" in startup_content(s, 80).plain
    assert phase_text(s) == "loading_weights (6.0/20.0 GiB)"
    shards = reduce(s, [Progress("shards", 1, 4, 5)])
    assert step_detail(shards, "weights", "active") is None  # shards counted: they say it
    assert phase_text(shards) == "loading_weights (shards 1/4)"


def test_history_keeps_the_engine_figures_and_the_medians_use_them(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "h.sqlite3")
    flags = {"model_path": "/m"}
    for load in (10.0, 12.5, 14.0):
        run = store.add(engine="sglang", host="box", flags=flags, state="starting")
        timings = EngineTimings("log", (("loading_weights", load),), (("load_weight", load),))
        rec = HistoryRecorder(store, run.id)
        rec.finish(started(timings), final="stopped")
        kept = store.get(str(run.id))
        assert kept.phases is not None and kept.phases["loading_weights"] == load
        assert kept.metrics is not None
        assert kept.metrics["phase_sources"]["loading_weights"] == "engine (log)"
    usual = usual_times(store, host="box", engine="sglang", flags=flags)
    assert usual is not None and dict(usual.phases)["loading_weights"] == 12.5


def test_hostile_recorded_values_render_bounded() -> None:
    # a replayed record file may hold any value: shown bounded or not at all, never a crash
    nan, inf = float("nan"), float("inf")
    base = [Tick(10.0), PhaseEvent(Phase.INIT, 1, None), PhaseEvent(Phase.LOADING_WEIGHTS, 2, None)]
    for wb in (WeightBytes(3, nan, nan), WeightBytes(3, inf, -5.0), WeightBytes(3, 1e300, 1e300),
               WeightBytes(3, -1.0, 50.0)):
        s = reduce(DashboardState(), [*base, wb, Tick(20.0)])
        detail = step_detail(s, "weights", "active")
        assert detail is None or len(detail[0]) < 40
        assert len(startup_content(s, 80).plain) < 2000 and phase_text(s)
        step_eta(s, "weights", 10.0)
    graph = [*base, PhaseEvent(Phase.CUDA_GRAPH, 3, None)]
    for sub in (SubStep("\x1b[31mx\x07", 4, None, "", 10**30, 3), SubStep("y", 4, None, "", -1, 0),
                SubStep("z" * 10000, 4, None, "", 5, 10)):
        s = reduce(DashboardState(), [*graph, sub, Tick(20.0)])
        text = startup_content(s, 80).plain
        assert "\x1b" not in text and "\x07" not in text
        assert "\x1b" not in phase_text(s)
