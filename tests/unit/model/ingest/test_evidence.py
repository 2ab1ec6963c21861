"""Evidence-based phase and engine (``model/ingest/evidence.py``): each rule, and real fragments.

The fragments in ``tests/fixtures/fragments/`` are excerpts of logs pasted in SGLang and vLLM
issues (sources in its README): ``report`` must infer what they imply and say it is inferred.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from eagle_tui.model.events import (
    CrashEvent,
    DecodeStats,
    EngineDetected,
    LineKind,
    LogLine,
    Phase,
    PhaseEvent,
    SpecStats,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.evidence import (
    engine_in_line,
    phase_in_line,
    phase_of_crash,
    worth_scanning,
)
from eagle_tui.model.state import DashboardState
from eagle_tui.report import build_report, close, render_text, to_plain
from tests.support.paths import TESTS

FRAGMENTS = TESTS / "fixtures" / "fragments"


def crash(kind: str, message: str) -> CrashEvent:
    return CrashEvent(kind, 5, message, "hint")


# ----------------------------------------------------------------------------- the rules


@pytest.mark.parametrize(("text", "engine"), [
    ('  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1748, in x',
     "sglang"),
    ('  File "/usr/lib/python3/dist-packages/vllm/v1/engine/core.py", line 294, in run', "vllm"),
    ("INFO:sglang.srt.server: started", "sglang"),
    ('  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main', None),
])
def test_engine_in_line(text: str, engine: str | None) -> None:
    found = engine_in_line(text)
    assert (found[0] if found else None) == engine


@pytest.mark.parametrize(("text", "phase"), [
    ('  File ".../cuda_graph_runner.py", line 212, in capture', Phase.CUDA_GRAPH),
    ('  File ".../cuda_graph_runner.py", line 233, in capture_one_batch_size', Phase.CUDA_GRAPH),
    ('  File ".../gpu_model_runner.py", line 2100, in capture_model', Phase.CUDA_GRAPH),
    ("Exception: Capture cuda graph failed: CUDA out of memory", Phase.CUDA_GRAPH),
    ('  File ".../model_runner.py", line 300, in profile_max_num_token', Phase.KV_CACHE),
    ('  File ".../core.py", line 120, in _initialize_kv_caches', Phase.KV_CACHE),
    ('  File ".../parallel_state.py", line 1100, in initialize_model_parallel', Phase.INIT),
    ("    self.comm: ncclComm_t = self.nccl.ncclCommInitRank(", Phase.INIT),
    ('  File ".../model_runner.py", line 400, in load_model', Phase.LOADING_WEIGHTS),
    # serving-time frames through the graph *replay* say nothing about startup
    ('  File ".../cuda_graph_runner.py", line 500, in replay', None),
])
def test_phase_in_line(text: str, phase: Phase | None) -> None:
    found = phase_in_line(text)
    assert (found[0] if found else None) is phase


@pytest.mark.parametrize(("kind", "message", "phase"), [
    ("port_in_use", "OSError: [Errno 98] Address already in use", Phase.HTTP_SERVER),
    ("port_in_use", "torch.distributed TCPStore: EADDRINUSE", Phase.INIT),
    ("port_in_use", "ERROR:    [Errno 98] error while attempting to bind on address "
     "('0.0.0.0', 8000): address already in use", Phase.HTTP_SERVER),
    ("port_in_use", "Port 30000 is not available in 10 seconds", Phase.INIT),
    ("not_enough_memory", "RuntimeError: Not enough memory. Please try to increase "
     "--mem-fraction-static.", Phase.KV_CACHE),
    ("not_enough_memory", "ValueError: No available memory for the cache blocks.",
     Phase.KV_CACHE),
    ("not_enough_memory", "ValueError: Free memory on device (3.1/79 GiB) on startup is less "
     "than desired GPU memory utilization", Phase.INIT),
    ("cuda_oom", "Capture cuda graph failed: CUDA out of memory", Phase.CUDA_GRAPH),
    ("cuda_oom", "torch.OutOfMemoryError: CUDA out of memory", None),
    ("cuda_oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. "
     "81.88 MiB allocated in private pools (e.g., CUDA Graphs)", None),  # PyTorch's every OOM
    ("nccl", "RuntimeError: NCCL error in ncclCommInitRank: unhandled cuda error", Phase.INIT),
    ("nccl", "Watchdog caught collective operation timeout", None),
    ("config_error", "error: argument --tp-size: invalid int value", None),  # before init
    ("model_not_found", "OSError: x is not a local folder and is not a valid model identifier",
     Phase.INIT),
    ("killed", "Killed", None),
])
def test_phase_of_crash(kind: str, message: str, phase: Phase | None) -> None:
    found = phase_of_crash(crash(kind, message))
    assert (found[0] if found else None) is phase


def test_vllm_binds_its_port_before_the_engine() -> None:
    found = phase_of_crash(crash("port_in_use", "OSError: [Errno 98] Address already in use"),
                           "vllm")
    assert found is not None and found[0] is Phase.INIT
    uvicorn = phase_of_crash(crash("port_in_use", "[Errno 98] error while attempting to bind on "
                                   "address ('0.0.0.0', 8000): address already in use"), "vllm")
    assert uvicorn is not None and uvicorn[0] is Phase.HTTP_SERVER


def test_worth_scanning_is_cheap_and_narrow() -> None:
    assert worth_scanning(LineKind.TRACEBACK, "x")
    assert worth_scanning(LineKind.PLAIN, "    self.capture()")
    assert not worth_scanning(LineKind.STATS, "[2025-01-01 00:00:00] Decode batch, ...")
    assert not worth_scanning(LineKind.PLAIN, "[2025-01-01 00:00:00] Load weight begin")


# ----------------------------------------------------------------------------- the reducer


def test_decode_line_alone_infers_serving() -> None:
    s = reduce(DashboardState(), [DecodeStats(3, "10:00:00", 100.0, 2.5)])
    assert s.startup.phase is Phase.SERVING
    assert s.startup.phase_inferred == "a decode stats line"


def test_decode_after_ready_is_not_inferred() -> None:
    s = reduce(DashboardState(), [PhaseEvent(Phase.READY, 1), DecodeStats(3, None, 100.0, 2.5)])
    assert s.startup.phase is Phase.SERVING
    assert s.startup.phase_inferred == ""


def test_spec_metrics_line_infers_serving() -> None:
    s = reduce(DashboardState(), [SpecStats(1, None, mean_accept_len=3.0)])
    assert s.startup.phase is Phase.SERVING and s.startup.phase_inferred


def test_crash_infers_phase_but_never_lowers_it() -> None:
    s = reduce(DashboardState(), [crash("not_enough_memory", "Not enough memory.")])
    assert s.startup.phase is Phase.KV_CACHE
    assert s.startup.phase_inferred == "a KV-cache sizing error"
    seen = reduce(DashboardState(), [PhaseEvent(Phase.CUDA_GRAPH, 1),
                                     crash("not_enough_memory", "Not enough memory.")])
    assert seen.startup.phase is Phase.CUDA_GRAPH and seen.startup.phase_inferred == ""


def test_a_milestone_replaces_an_inferred_mark() -> None:
    s = reduce(DashboardState(), [LogLine(1, '  File "x.py", line 1, in capture',
                                          LineKind.TRACEBACK)])
    assert s.startup.phase is Phase.CUDA_GRAPH and s.startup.phase_inferred
    s = reduce(s, [PhaseEvent(Phase.CUDA_GRAPH, 2, None, "Capture cuda graph begin")])
    assert s.startup.phase_inferred == ""


def test_engine_from_traceback_then_detected() -> None:
    line = LogLine(1, '  File "/x/vllm/v1/engine/core.py", line 1, in f', LineKind.TRACEBACK)
    s = reduce(DashboardState(), [line])
    assert s.startup.engine == "vllm" and s.startup.engine_inferred is not None
    # an old SGLang calling into vllm/distributed: its own frame wins
    s = reduce(s, [LogLine(2, '  File "/x/sglang/srt/layers/x.py", line 1, in f',
                           LineKind.TRACEBACK)])
    assert s.startup.engine == "sglang" and s.startup.engine_inferred is not None
    s = reduce(s, [EngineDetected("sglang", 3)])
    assert s.startup.engine == "sglang" and s.startup.engine_inferred is None


# ----------------------------------------------------------------------------- fragments


def _report(name: str) -> tuple[dict[str, object], str]:
    path = FRAGMENTS / name
    r = build_report(io.BytesIO(path.read_bytes()), name)
    try:
        return to_plain(r), render_text(r)
    finally:
        close(r)


@pytest.mark.parametrize(("name", "phase", "engine", "engine_inferred"), [
    ("sglang-issue-4489-capture-cuda-graph-tail.log", "cuda_graph", "sglang", True),
    ("sglang-generated-nccl-init.log", "init", "sglang", False),
    ("vllm-issue-14574-no-cache-blocks.log", "kv_cache", "vllm", False),
    ("vllm-issue-7514-address-in-use.log", "http_server", "vllm", False),
    # the "(VllmWorker rank=0 pid=…)" prefix is peeled, so vLLM is read from its log prefix
    ("vllm-issue-20226-nccl-worker-init.log", "init", "vllm", False),
    ("specforge-issue-310-sglang-decode.log", "serving", "sglang", False),
    ("../corpus/vllm/vllm-15902-specdecoding-line-2025-04.log", "serving", "vllm", False),
])
def test_fragment(name: str, phase: str, engine: str, engine_inferred: bool) -> None:
    rep, text = _report(name)
    assert rep["phase"] == phase
    assert rep["engine"] == engine
    inferred = rep["inferred"]
    assert isinstance(inferred, dict)
    assert inferred["phase"] is not None and inferred["phase"]["value"] == phase
    assert (inferred["engine"] is not None) is engine_inferred
    assert "inferred from" in text.splitlines()[1]
    if engine_inferred:
        assert "inferred from a traceback" in text.splitlines()[0]


def test_fragment_with_its_milestones_is_not_inferred() -> None:
    rep, text = _report("sglang-issue-1751-capture-cuda-graph.log")
    assert rep["phase"] == "cuda_graph"
    assert rep["inferred"] == {"phase": None, "engine": None}
    assert "inferred" not in text


def test_collapse_fragment_raises_the_alert() -> None:
    rep, _ = _report("specforge-issue-310-sglang-decode.log")
    alerts = rep["alerts"]
    assert isinstance(alerts, list)
    assert [a["kind"] for a in alerts] == ["drafts_rejected"]


def test_report_text_lists_the_crash_alert_like_json() -> None:
    rep, text = _report("vllm-issue-7514-address-in-use.log")
    assert [a["kind"] for a in rep["alerts"]] == ["crash"]  # type: ignore[union-attr]
    assert "alerts: none" not in text
    assert "alert [critical] crash: port_in_use" in text


@pytest.mark.parametrize("path", sorted(FRAGMENTS.glob("*.log")), ids=lambda p: p.name)
def test_dashboard_path_infers_what_report_infers(path: Path) -> None:
    from eagle_tui.model.ingest.parser import LogParser

    parser = LogParser()
    data = path.read_bytes()
    data += b"" if data.endswith(b"\n") else b"\n"  # the parser takes whole lines
    s = reduce(DashboardState(), [*parser.feed_lines(data), *parser.finish()])
    rep, _ = _report(path.name)
    assert (s.startup.engine, s.startup.phase.value) == (rep["engine"], rep["phase"])
    inferred = rep["inferred"]
    assert isinstance(inferred, dict)
    assert (inferred["phase"] or {}).get("reason", "") == s.startup.phase_inferred
    assert (inferred["engine"] or {}).get("reason") == (
        s.startup.engine_inferred.reason if s.startup.engine_inferred else None)
