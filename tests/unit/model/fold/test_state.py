"""The reducer: phases, crash specificity, stats, restarts and the live-source fields."""

from __future__ import annotations

from eagle_tui.model.events import (
    ConnectionState,
    CrashEvent,
    DecodeStats,
    DraftConfig,
    EngineDetected,
    GpuInfo,
    GpuSample,
    HiddenStateDims,
    LineKind,
    LogLine,
    LogRestarted,
    MetricsSample,
    Phase,
    PhaseEvent,
    ServerInfo,
    SourceFailed,
    SpecConfig,
    SpecStats,
    Tick,
    UserMarker,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import RECENT_LINES, DashboardState
from eagle_tui.model.views import figures


def crash(kind: str, line: int) -> CrashEvent:
    return CrashEvent(kind, line, kind, "hint")


def test_phase_is_the_furthest_reached_and_marks_the_first_time() -> None:
    s = reduce(DashboardState(), [PhaseEvent(Phase.INIT, 1, "t1"),
                                  PhaseEvent(Phase.CUDA_GRAPH, 5),
                                  PhaseEvent(Phase.LOADING_WEIGHTS, 7, role="draft"),
                                  PhaseEvent(Phase.CUDA_GRAPH, 9, role="draft")])
    assert s.startup.phase is Phase.CUDA_GRAPH
    assert [(m.phase, m.lineno) for m in s.startup.phases] == [
        (Phase.INIT, 1), (Phase.CUDA_GRAPH, 5), (Phase.LOADING_WEIGHTS, 7)]
    assert s.startup.phase_mark(Phase.INIT).time == "t1"  # type: ignore[union-attr]
    assert not s.startup.ready


def test_a_crash_freezes_the_phase_and_its_marks() -> None:
    s = reduce(DashboardState(), [PhaseEvent(Phase.KV_CACHE, 3), crash("cuda_oom", 4),
                                  PhaseEvent(Phase.READY, 9), DecodeStats(10, gen_tps=1.0)])
    assert s.startup.phase is Phase.KV_CACHE and not s.startup.ready
    assert [m.phase for m in s.startup.phases] == [Phase.KV_CACHE]


def test_most_specific_crash_wins_and_ties_keep_the_first() -> None:
    s = reduce(DashboardState(), [crash("killed", 9), crash("engine_dead", 8),
                                  crash("nccl", 3), crash("other_traceback", 4),
                                  crash("cuda_oom", 5)])
    assert (s.startup.crash.kind, s.startup.crash.lineno) == ("nccl", 3)  # type: ignore[union-attr]


def test_bind_error_after_startup_complete_takes_ready_back() -> None:
    s = reduce(DashboardState(), [PhaseEvent(Phase.READY, 2), crash("port_in_use", 3)])
    assert s.startup.phase is Phase.HTTP_SERVER and not s.startup.ready
    serving = reduce(DashboardState(), [PhaseEvent(Phase.READY, 2), DecodeStats(3, gen_tps=1.0),
                                        crash("port_in_use", 4)])
    assert serving.startup.phase is Phase.SERVING  # it did serve: a later bind error: a crash


def test_stats_mean_serving_even_without_a_ready_line() -> None:
    s = reduce(DashboardState(), [PhaseEvent(Phase.HTTP_SERVER, 1),
                                  DecodeStats(2, "t", gen_tps=10.0, accept_len=2.5, running=3,
                                              queued=1, kv_usage=0.2)])
    assert s.startup.phase is Phase.SERVING and s.startup.ready
    shown = (figures.tok_s(s).value, figures.accept_len(s).value)
    assert (s.stats.running, s.stats.queued, s.stats.kv_usage, *shown) == (3, 1, 0.2, 10.0, 2.5)


def test_spec_stats_feed_accept_len_and_per_position() -> None:
    s = reduce(DashboardState(), [SpecStats(1, mean_accept_len=2.8, acceptance_rate=0.6,
                                            per_position=(0.8, 0.6, 0.4))])
    assert s.stats.accept_len.values() == [2.8] and s.stats.per_position == (0.8, 0.6, 0.4)
    assert s.stats.accept_rate.values() == [0.6]


def test_spec_config_from_the_log_is_authoritative_and_filled_by_server_info() -> None:
    s = reduce(DashboardState(), [SpecConfig("EAGLE3", None, 3),
                                  ServerInfo(1.0, SpecConfig("EAGLE", "/d", 5, 1, 4, "server"))])
    assert s.config.spec == SpecConfig("EAGLE3", "/d", 3, 1, 4, "log")


def test_hidden_dims_are_distinct_in_order_of_first_sight() -> None:
    s = reduce(DashboardState(), [HiddenStateDims(d, i) for i, d in enumerate([7, 9, 7, 9, 8])])
    assert s.config.hidden_dims == (7, 9, 8)


def test_log_lines_keep_a_short_tail_and_the_first_error() -> None:
    lines = [LogLine(i, f"l{i}", LineKind.ERROR if i in (30, 40) else LineKind.PLAIN)
             for i in range(1, 51)]
    s = reduce(DashboardState(), lines)
    assert s.log.lines == 50 and len(s.log.recent_lines) == RECENT_LINES
    assert s.log.recent_lines[-1].text == "l50" and s.log.first_error_line == 30


def test_restart_starts_fresh_but_keeps_the_environment() -> None:
    cfg = DraftConfig("/d", is_eagle3=True)
    s = reduce(DashboardState(), [EngineDetected("sglang"), PhaseEvent(Phase.READY, 3),
                                  crash("killed", 4), cfg, LogRestarted("truncated", t=5.0)])
    assert (s.startup.phase, s.startup.crash, s.startup.engine, s.startup.restarts,
            s.config.draft_config) == (Phase.NONE, None, "unknown", 1, cfg)


def test_metrics_fill_in_until_the_log_has_stats_and_clock_advances() -> None:
    s = reduce(DashboardState(), [Tick(10.0), MetricsSample(12.0, "vllm", gen_tps=50.0,
                                                            running=2, kv_usage=0.5)])
    assert (s.startup.engine, s.stats.running, figures.tok_s(s).value, s.clock.t_start,
            s.clock.now, s.clock.elapsed) == ("vllm", 2, 50.0, 10.0, 12.0, 2.0)
    s = reduce(s, [DecodeStats(1, running=7), MetricsSample(13.0, running=9)])
    assert s.stats.running == 7


def test_gpu_peaks_failures_connections_and_markers() -> None:
    s = reduce(DashboardState(), [
        GpuSample(1.0, "ok", (GpuInfo(0, mem_used=5), GpuInfo(1, mem_used=9))),
        GpuSample(2.0, "ok", (GpuInfo(0, mem_used=3),)),
        SourceFailed("gpu", "a", 1.0), SourceFailed("gpu", "b", 2.0, attempt=2),
        ConnectionState("h", "reconnecting", 1.0), ConnectionState("h", "connected", 2.0),
        UserMarker(4, 3.0, "here"),
    ])
    assert s.gpu.mem_peak == (("", 0, 5), ("", 1, 9))
    assert [f.error for f in s.live.failures] == ["b"]
    assert [c.state for c in s.live.connections] == ["connected"]
    assert s.log.markers[0].label == "here"


def test_unchanged_state_is_returned_as_is() -> None:
    s = reduce(DashboardState(), [EngineDetected("vllm")])
    assert reduce(s, []) is s
