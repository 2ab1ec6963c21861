"""The engines' phase tables on logs that start mid-way: each line implies its phase (and the
ones before it), in the installed engines' own wordings (vLLM 0.32, SGLang 0.5.23) and on the
corpus excerpts whose labels a reader wrote without seeing the parser's output."""

from __future__ import annotations

import io
import json

import pytest

from eagle_tui.model.events import Phase, PhaseEvent
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.report import build_report, close
from tests.support.parsing import parse
from tests.support.paths import TESTS

CORPUS = TESTS / "fixtures" / "corpus"
V = "(EngineCore_DP0 pid=7) INFO 12-01 10:00:00 [gpu_worker.py:1] "


def _phase(lines: list[str]) -> Phase:
    return reduce(DashboardState(), parse(lines)).startup.phase


@pytest.mark.parametrize(("line", "phase"), [
    # distributed setup: init
    (V + "world_size=2 rank=0 local_rank=0 distributed_init_method=tcp://h:1 backend=nccl",
     Phase.INIT),
    (V + "vLLM is using nccl==2.27.3", Phase.INIT),
    ("(VllmWorker rank=0 pid=1) INFO 07-23 19:34:49 [__init__.py:1152] Found nccl from library "
     "libnccl.so.2", Phase.INIT),
    # memory profiling and KV sizing (V1 and the V0 profiling summary): the KV cache
    (V + "Memory profiling takes 5.23 seconds. Total non KV cache memory: 16.1GiB; torch peak "
     "memory increase: 1.2GiB; total consumed (from mem_get_info): 17GiB; weights memory: 15GiB.",
     Phase.KV_CACHE),
    ("model weights take 14.99GiB; non_torch_memory takes 0.09GiB; PyTorch activation peak "
     "memory takes 1.19GiB; the rest of the memory reserved for KV Cache is 55.17GiB.",
     Phase.KV_CACHE),
    ("INFO 09-27 05:20:38 gpu_executor.py:122] # GPU blocks: 3120, # CPU blocks: 512",
     Phase.KV_CACHE),
    (V + "GPU KV cache size: 251,920 tokens", Phase.KV_CACHE),
    (V + "Maximum concurrency for 40,960 tokens per request: 6.15x", Phase.KV_CACHE),
    # torch.compile (inside the profile run) and capture: the CUDA-graph phase
    (V + "torch.compile took 18.40 s in total", Phase.CUDA_GRAPH),
    (V + "torch.compile takes 13.93 s in total", Phase.CUDA_GRAPH),
    (V + "Compiling a graph for compile range (1, 8192) takes 14.65 s", Phase.CUDA_GRAPH),
    (V + "Compiling a graph for dynamic shape takes 31.36 s", Phase.CUDA_GRAPH),
    (V + "Dynamo bytecode transform time: 7.85 s", Phase.CUDA_GRAPH),
])
def test_a_vllm_line_alone_says_its_phase(line: str, phase: Phase) -> None:
    assert _phase([line]) is phase


@pytest.mark.parametrize(("method", "phase"), [
    ("init_device", Phase.INIT),
    ("load_model", Phase.LOADING_WEIGHTS),
    ("determine_num_available_blocks", Phase.KV_CACHE),
    ("determine_available_memory", Phase.KV_CACHE),
    ("initialize_from_config", Phase.KV_CACHE),
    ("compile_or_warm_up_model", Phase.CUDA_GRAPH),
])
def test_a_worker_failure_names_its_step(method: str, phase: Phase) -> None:
    line = ("(VllmWorkerProcess pid=214) ERROR 09-27 05:20:38 multiproc_worker_utils.py:233] "
            f"Exception in worker VllmWorkerProcess while processing method {method}.")
    assert _phase([line]) is phase
    events = [e for e in parse([line]) if isinstance(e, PhaseEvent)]
    assert [e.phase for e in events] == [phase]


@pytest.mark.parametrize(("line", "phase"), [
    ("[2025-06-23 15:06:04] Setting Triton cache manager to: sglang.srt.utils:CustomCacheManager",
     Phase.INIT),
    ("[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value "
     "-561981. Use the profiled value instead.", Phase.KV_CACHE),
    ("[2025-11-20 10:14:52 TP0] max_total_num_tokens=363000, chunked_prefill_size=8192, "
     "max_prefill_tokens=16384, max_running_requests=4096, context_len=131072", Phase.KV_CACHE),
])
def test_an_sglang_line_alone_says_its_phase(line: str, phase: Phase) -> None:
    assert _phase([line]) is phase


def test_an_argument_error_before_any_init_is_phase_none() -> None:
    lines = ["usage: launch_server.py [-h] --model-path MODEL_PATH",
             "launch_server.py: error: unrecognized arguments: --reasoning_parser kimi_k2"]
    st = reduce(DashboardState(), parse(lines))
    assert st.startup.crash is not None and st.startup.crash.kind == "config_error"
    assert st.startup.phase is Phase.NONE


_LABELS = json.loads((CORPUS / "labels.json").read_text())


@pytest.mark.parametrize("name", [
    "vllm-8903-worker-oom-profiling-glued",  # "while processing method determine_num_..."
    "vllm-14447-worker-lines-glued-midline",
    "vllm-17431-compile-then-enginecore-failed",  # torch.compile takes ...
    "vllm-19794-compile-kv-graphs-clean",
    "vllm-19445-sampler-warmup-oom-rewrapped",  # the profile run's sampler warm-up
    "vllm-17756-worker-ranks-shm-nccl",  # NCCL found: init
    "vllm-26898-enginecore-curly-quotes",
    "vllm-14452-fatal-signal-spawnprocess",
    "sglang-7478-multinode-set-x-args",
    "sglang-7691-dp-negative-profiled-tokens",
    # argument errors stop before init; a platform line printed on import is not init
    "sglang-12818-unrecognized-reasoning-parser",
    "sglang-4116-argparse-usage-wrapped",
    "sglang-5032-argparse-usage",
    "sglang-5867-import-chain-cut",
    "vllm-8273-unrecognized-config",
    "vllm-17944-model-flag-valueerror",
])
def test_corpus_excerpts_reach_their_labelled_phase(name: str) -> None:
    label = _LABELS[name]
    data = (CORPUS / label["engine"] / f"{name}.log").read_bytes()
    report = build_report(io.BytesIO(data), name)
    close(report)
    assert report["phase"] == label["phase"], (name, label["note"])


def test_requests_and_prefill_batches_are_serving() -> None:
    """vLLM's request log lines (request logging on) and, in a fragment with no sign of the
    server's start, SGLang's prefill batches are requests being served."""
    received = ("INFO 06-13 07:35:57 [logger.py:43] Received request chatcmpl-1d0f: prompt: "
                "'Hello', params: SamplingParams(n=1)")
    assert _phase([received]) is Phase.SERVING
    assert _phase([V + "Added request cmpl-8304a461-0."]) is Phase.SERVING
    prefill = ("[2025-05-14 09:31:43] Prefill batch. #new-seq: 2, #new-token: 2, #cached-token: "
               "8027, token usage: 0.26, #running-req: 28, #queue-req: 0")
    st = reduce(DashboardState(), parse([prefill]))
    assert st.startup.phase is Phase.SERVING and st.startup.phase_inferred == \
        "a prefill stats line"
    # with the start in view, a prefill can be the warm-up request's: no inference
    started = ["[2025-05-14 09:31:40] INFO:     Uvicorn running on http://0.0.0.0:30000 "
               "(Press CTRL+C to quit)", prefill]
    assert _phase(started) is Phase.HTTP_SERVER
