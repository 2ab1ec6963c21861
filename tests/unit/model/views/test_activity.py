"""Telling downloading, loading, compiling and hung apart; the stuck-collective alert.

Everything is driven by events through ``reduce`` (the state's clock is the events' ``t``), so
each verdict is a pure function of a short scripted startup.
"""

from __future__ import annotations

from eagle_tui.model.events import (
    CrashEvent,
    DownloadSample,
    EngineDetected,
    GpuInfo,
    GpuProcess,
    GpuSample,
    LineKind,
    LogLine,
    MetricsSample,
    Phase,
    PhaseEvent,
    ProcessSample,
    Tick,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.state.activity import (
    NCCL_TIMEOUT_S,
    SGLANG_WATCHDOG_S,
    on_server_args,
    server_gpus,
)
from eagle_tui.model.state.activity import ActivityTrack as Track
from eagle_tui.model.views.activity import startup_activity, stuck_collective
from eagle_tui.sources.download import parse_find
from eagle_tui.sources.remote_process import parse_proc

GIB = 1 << 30


def start(t: float = 1000.0) -> DashboardState:
    """A server that printed its args at ``t`` and then went quiet in weight loading."""
    return reduce(DashboardState(), [Tick(t), LogLine(1, "[x] Load weight begin"),
                                     PhaseEvent(Phase.LOADING_WEIGHTS, 1)])


def proc(t: float, cpu: float | None = 1.0, read: int | None = 0,
         pids: tuple[int, ...] = (10, 11)) -> ProcessSample:
    return ProcessSample(t, 10, "sleeping", "python", cpu_percent=cpu, read_bytes=read, pids=pids)


def gpu(t: float, used: int, util: float = 0.0, pid: int = 11) -> GpuSample:
    g = GpuInfo(0, "H200", mem_used=used, mem_total=141 * GIB, util_gpu=util,
                processes=(GpuProcess(pid, "python", used),))
    return GpuSample(t, "ok", (g,), backend="nvml")


def test_no_verdict_while_the_log_talks() -> None:
    s = reduce(start(), [Tick(1005.0)])
    assert startup_activity(s) is None


def test_downloading_from_growing_incomplete_files() -> None:
    s = reduce(start(), [DownloadSample(1002.0, 4, 1_000_000_000, ("Qwen/Qwen3-8B",)),
                         DownloadSample(1004.0, 4, 1_200_000_000, ("Qwen/Qwen3-8B",))])
    act = startup_activity(s)
    assert act is not None and act.kind == "downloading"
    assert "Qwen/Qwen3-8B" in act.detail and "100.0 MB/s" in act.detail


def test_loading_from_reads() -> None:
    s = reduce(start(), [proc(1030.0, read=0), proc(1031.0, read=300_000_000)])
    act = startup_activity(s)
    assert act is not None and act.kind == "loading" and "reading" in act.detail


def test_loading_from_gpu_memory_growth_of_the_servers_processes() -> None:
    s = reduce(start(), [proc(1020.0), gpu(1025.0, 10 * GIB), gpu(1030.0, 14 * GIB)])
    act = startup_activity(s)
    assert act is not None and act.kind == "loading" and "GPU memory" in act.detail


def test_compiling_from_cpu_with_nothing_else_moving() -> None:
    s = reduce(start(), [proc(1040.0, cpu=350.0), proc(1041.0, cpu=350.0)])
    act = startup_activity(s)
    assert act is not None and act.kind == "compiling"


def test_hung_after_a_long_silence_with_nothing_moving() -> None:
    s = reduce(start(), [proc(1100.0, cpu=0.5), proc(1200.0, cpu=0.5)])
    act = startup_activity(s)
    assert act is not None and act.kind == "hung" and "3m20s" in act.detail
    s = reduce(start(), [Tick(1050.0)])
    waiting = startup_activity(s)
    assert waiting is not None and waiting.kind == "waiting"


def test_hung_without_process_data_says_it_cannot_tell() -> None:
    s = reduce(start(), [Tick(1300.0)])
    act = startup_activity(s)
    assert act is not None and act.kind == "hung" and "no process data" in act.detail


def test_no_verdict_once_ready_or_crashed() -> None:
    s = reduce(start(), [PhaseEvent(Phase.READY, 2), Tick(1300.0)])
    assert startup_activity(s) is None
    s = reduce(start(), [CrashEvent("nccl", 2, "x", "y"), Tick(1300.0)])
    assert startup_activity(s) is None


def test_server_gpus_without_process_lists_counts_every_gpu() -> None:
    g = GpuSample(1.0, "ok", (GpuInfo(0, mem_used=GIB), GpuInfo(1, mem_used=GIB)))
    assert server_gpus(g, (10,)) == ([0, 1], 2 * GIB)
    listed = gpu(1.0, GIB, pid=99)  # someone else's process: not the server's GPU
    assert server_gpus(listed, (10, 11)) == ([], 0)


# ----------------------------------------------------------------------------- stuck collective


def serving(t: float = 1000.0, engine: str = "vllm") -> DashboardState:
    return reduce(DashboardState(), [Tick(t), EngineDetected(engine),  # type: ignore[arg-type]
                                     PhaseEvent(Phase.READY, 1), LogLine(2, "x"), proc(t)])


def test_stuck_collective_names_nccl_and_counts_down() -> None:
    s = reduce(serving(), [gpu(1001.0, 40 * GIB, util=100.0), gpu(1091.0, 40 * GIB, util=100.0)])
    stuck = stuck_collective(s)
    assert stuck is not None and stuck.watchdog_s == NCCL_TIMEOUT_S
    assert 89 <= stuck.busy_s <= 91 and 509 <= stuck.remaining_s <= 511
    alert = next(a for a in s.alerts if a.kind == "stuck_collective")
    assert alert.severity == "critical" and "NCCL" in alert.message
    assert "aborts in about 8m" in alert.message


def test_no_stuck_alert_when_tokens_flow_or_gpus_idle() -> None:
    s = reduce(serving(), [gpu(1001.0, 40 * GIB, util=100.0), gpu(1091.0, 40 * GIB, util=100.0),
                           MetricsSample(1090.0, gen_tps=120.0)])
    assert stuck_collective(s) is None
    s = reduce(serving(), [gpu(1001.0, 40 * GIB, util=3.0), gpu(1091.0, 40 * GIB, util=3.0)])
    assert stuck_collective(s) is None
    # the log talks: not stuck
    s = reduce(serving(), [gpu(1001.0, 40 * GIB, util=100.0), Tick(1090.0), LogLine(3, "y"),
                           gpu(1091.0, 40 * GIB, util=100.0)])
    assert stuck_collective(s) is None


def test_sglang_watchdog_from_server_args_or_its_default() -> None:
    line = LogLine(1, "[x] server_args=ServerArgs(model_path='m', watchdog_timeout=120.0, x=1)",
                   LineKind.MILESTONE)
    s = reduce(serving(engine="sglang"), [line, gpu(1001.0, GIB, util=99.0),
                                          gpu(1070.0, GIB, util=99.0)])
    stuck = stuck_collective(s)
    assert stuck is not None and stuck.watchdog_s == 120.0
    assert "--watchdog-timeout (120 s)" in stuck.watchdog_name
    plain = reduce(serving(engine="sglang"), [gpu(1001.0, GIB, util=99.0),
                                              gpu(1070.0, GIB, util=99.0)])
    stuck = stuck_collective(plain)
    assert stuck is not None and stuck.watchdog_s == SGLANG_WATCHDOG_S
    dict_form = on_server_args(Track(), "server_args={'watchdog_timeout': 450, 'x': 1}")
    assert dict_form.watchdog_s == 450


# ----------------------------------------------------------------------------- source parsers


def test_parse_find_of_the_hf_cache() -> None:
    out = ("root /home/u/.cache/huggingface/hub\n"
           "1000 models--Qwen--Qwen3-8B/blobs/aa.incomplete\n"
           "2000 models--Qwen--Qwen3-8B/blobs/bb.incomplete\n"
           "5 models--org--draft-eagle3/blobs/cc.incomplete\n")
    assert parse_find(out) == ("/home/u/.cache/huggingface/hub", 3, 3005,
                               ("Qwen/Qwen3-8B", "org/draft-eagle3"))
    assert parse_find("root /x\n") == ("/x", 0, 0, ())


def test_parse_proc_sums_the_tree() -> None:
    assert parse_proc("100\n10 250 4096\n11 50 -\n12 x 1\n") == (100.0, 300, 4096)
    assert parse_proc("250\n") == (250.0, 0, None)


def test_without_a_log_nothing_is_called_hung_or_stuck() -> None:
    s = reduce(DashboardState(), [Tick(1000.0), proc(1300.0, cpu=0.0)])
    act = startup_activity(s)
    assert act is not None and act.kind == "waiting" and "no log line in 5m00s" in act.detail
    busy = reduce(DashboardState(), [Tick(1000.0), gpu(1001.0, GIB, util=100.0),
                                     gpu(1200.0, GIB, util=100.0)])
    assert stuck_collective(busy) is None


def test_compiling_names_the_compile_step_the_log_last_named() -> None:
    from eagle_tui.model.events import SubStep

    s = reduce(start(), [SubStep("DeepGEMM JIT", 9, None), proc(1040.0, cpu=350.0),
                         proc(1041.0, cpu=350.0)])
    act = startup_activity(s)
    assert act is not None and act.kind == "compiling" and "(DeepGEMM JIT)" in act.detail
    done = reduce(s, [SubStep("DeepGEMM JIT", 10, None, finished=True), proc(1090.0, cpu=350.0),
                      proc(1091.0, cpu=350.0)])
    act = startup_activity(done)
    assert act is not None and "JIT kernels" in act.detail
