"""The engines' own startup figures and compile steps, read from their exact strings.

Each format string is copied from the engine's code (version named) and filled the way the
engine fills it; generated hostile values (huge, negative, NaN, cut lines, endless pairs) are
read as nothing or as bounded figures, never as a crash.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from eagle_tui.model.engines.facets.startup import MAX_FIGURES, MAX_SECONDS
from eagle_tui.model.engines.sglang.logs import SglangParser
from eagle_tui.model.engines.sglang.server_info import parse_server_info
from eagle_tui.model.engines.sglang.startup import from_server_info, timings_line
from eagle_tui.model.engines.vllm.logs import VllmParser
from eagle_tui.model.engines.vllm.startup import weight_bytes
from eagle_tui.model.events import EngineTimings, LineKind, SubStep, WeightBytes
from eagle_tui.sources.metrics import RateWindow, parse_metrics, to_sample

# SGLang 0.5.23 srt/entrypoints/engine.py, Engine._set_startup_time
SGLANG_0_5_23_TIMINGS = ("Engine startup timings (s): load_weight=%.2f, "
                         "kv_cache_allocation=%.2f, scheduler_e2e=%.2f, "
                         "cuda_graph={%s}, tokenizer_e2e=%.2f")
# SGLang 0.5.23 srt/model_executor/graph_memory_usage.py GRAPH_MEMORY_USAGE_KEYS
GRAPH_FAMILIES = ("prefill", "decode", "target_verify", "draft_prefill", "draft_decode",
                  "draft_extend")
# vLLM 0.32 model_executor/model_loader/weight_utils.py
VLLM_0_32_SIZE = ("Filesystem type for checkpoints: %s. Checkpoint size: %.2f GiB. "
                  "Available RAM: %.2f GiB.")
VLLM_0_32_PREFETCH = "Prefetching checkpoint files: %d%% (%d/%d)"
VLLM_0_32_PREFETCH_DONE = "Prefetching checkpoint files into page cache finished in %.2fs"


def sglang_line(load: float, kv: float, sched: float, graphs: dict[str, float],
                tok: float) -> str:
    cuda_graph_timings = ", ".join(f"{phase}={duration:.2f}" for phase, duration in graphs.items())
    return SGLANG_0_5_23_TIMINGS % (load, kv, sched, cuda_graph_timings, tok)


def test_sglang_timings_line_as_0_5_23_prints_it() -> None:
    graphs = dict.fromkeys(GRAPH_FAMILIES, 0.0) | {"decode": 10.25, "draft_decode": 3.0,
                                                    "draft_extend": 2.1}
    got = timings_line(sglang_line(12.34, 1.5, 45.67, graphs, 50.01), 7)
    assert got is not None and got.source == "log" and got.lineno == 7
    assert dict(got.phases) == {"loading_weights": 12.34, "kv_cache": 1.5, "cuda_graph": 15.35}
    figures = dict(got.figures)
    assert figures["scheduler_e2e"] == 45.67 and figures["tokenizer_e2e"] == 50.01
    assert figures["cuda_graph.draft_decode"] == 3.0 and len(figures) == 10


def test_sglang_timings_generated_values_round_trip() -> None:
    rng = random.Random(29)
    for _ in range(300):
        vals = [round(rng.uniform(0, 5000), 2) for _ in range(4)]
        graphs = {k: round(rng.uniform(0, 300), 2) for k in GRAPH_FAMILIES}
        got = timings_line(sglang_line(vals[0], vals[1], vals[2], graphs, vals[3]), 1)
        assert got is not None
        phases = dict(got.phases)
        assert phases["loading_weights"] == vals[0] and phases["kv_cache"] == vals[1]
        assert phases["cuda_graph"] == pytest.approx(sum(graphs.values()), abs=1e-3)


HOSTILE = [
    "Engine startup timings (s): ",
    "Engine startup timings (s): load_weight=",
    "Engine startup timings (s): load_weight=nan, kv_cache_allocation=inf",
    "Engine startup timings (s): load_weight=-1.00, kv_cache_allocation=1e999",
    "Engine startup timings (s): load_weight=" + "9" * 5000,
    "Engine startup timings (s): load_weight=1.00, cuda_graph={decode=",
    "Engine startup timings (s): cuda_graph={" + "decode=1.00, " * 10000,
    "Engine startup timings (s): " + ", ".join(f"x{i}=1.00" for i in range(5000)),
    "Engine startup timings (s): load_weight=1.00}}}}{{{{" * 500,
    "Engine startup timings (s): " + "a" * 100 + "=1.00",
    "Engine startup timings (s): load_weight=0x10, kv_cache_allocation=1_0",
]


@pytest.mark.parametrize("line", HOSTILE)
def test_sglang_timings_hostile_lines_are_bounded(line: str) -> None:
    got = timings_line(line, 1)
    if got is not None:
        assert len(got.figures) <= MAX_FIGURES
        assert all(0 <= v <= MAX_SECONDS for _, v in got.figures)
        assert all(0 <= v <= MAX_FIGURES * MAX_SECONDS for _, v in got.phases)
    events, _ = SglangParser().parse(line, 1, None, True)  # the parser never raises either
    assert all(isinstance(e, EngineTimings) for e in events)


def test_sglang_truncated_line_keeps_what_it_has() -> None:
    line = sglang_line(12.0, 2.0, 30.0, dict.fromkeys(GRAPH_FAMILIES, 1.0), 40.0)
    for cut in range(len("Engine startup timings (s): "), len(line), 7):
        got = timings_line(line[:cut], 1)
        if got is not None:
            assert dict(got.figures).get("load_weight") in (None, 12.0, 1.0)
            assert len(got.figures) <= 10


def exposition(lines: list[str]) -> str:
    return "\n".join([
        "# HELP sglang:startup_time_seconds Engine startup duration by phase in seconds.",
        "# TYPE sglang:startup_time_seconds gauge",
        *(x for x in lines if x.startswith("sglang:startup_time")),
        "# HELP sglang:startup_cuda_graph_time_seconds CUDA graph capture duration by phase "
        "in seconds.",
        "# TYPE sglang:startup_cuda_graph_time_seconds gauge",
        *(x for x in lines if x.startswith("sglang:startup_cuda")),
        "# TYPE sglang:num_running_reqs gauge",
        'sglang:num_running_reqs{model_name="m"} 0.0',
    ]) + "\n"


def test_sglang_startup_gauges_by_phase() -> None:
    # SGLang 0.5.23 srt/observability/metrics_collector.py emit_startup_time: one gauge
    # per phase label, the cuda_graph dict as its own gauge (draft families included)
    lines = [f'sglang:startup_time_seconds{{model_name="m",phase="{p}"}} {v}'
             for p, v in (("load_weight", 12.5), ("kv_cache_allocation", 1.25),
                          ("scheduler_e2e", 40.0), ("tokenizer_e2e", 44.0))]
    lines += [f'sglang:startup_cuda_graph_time_seconds{{model_name="m",phase="{p}"}} {v}'
              for p, v in (("decode", 9.0), ("target_verify", 0.0), ("draft_decode", 2.5),
                           ("draft_extend", 1.0))]
    sample = to_sample(parse_metrics(exposition(lines), 1.0), RateWindow())
    assert sample.startup is not None and sample.startup.source == "/metrics"
    assert dict(sample.startup.phases) == {"loading_weights": 12.5, "kv_cache": 1.25,
                                           "cuda_graph": 12.5}
    assert dict(sample.startup.figures)["cuda_graph.draft_decode"] == 2.5
    plain = to_sample(parse_metrics(exposition([]), 1.0), RateWindow())
    assert plain.startup is None and plain.running == 0


def test_sglang_startup_gauges_hostile_labels_are_bounded() -> None:
    lines = [f'sglang:startup_time_seconds{{phase="p{i}"}} {i}.5' for i in range(2000)]
    lines += ['sglang:startup_time_seconds{phase="' + "x" * 5000 + '"} 1.0',
              'sglang:startup_time_seconds{phase="load_weight"} 1e300',
              'sglang:startup_cuda_graph_time_seconds{phase="decode"} -5']
    sample = to_sample(parse_metrics(exposition(lines), 1.0), RateWindow())
    assert sample.startup is not None and len(sample.startup.figures) <= MAX_FIGURES
    assert "cuda_graph" not in dict(sample.startup.phases)


def test_sglang_server_info_startup_time() -> None:
    # SGLang 0.5.23 srt/entrypoints/http_server.py /server_info: "startup_time" beside the args
    data = {"speculative_algorithm": "EAGLE3", "version": "0.5.23",
            "startup_time": {"load_weight": 3.0, "kv_cache_allocation": 0.5,
                             "scheduler_e2e": 9.0, "tokenizer_e2e": 11.0,
                             "cuda_graph": dict.fromkeys(GRAPH_FAMILIES, 0.0) | {"decode": 4.0}}}
    info = parse_server_info(data, 5.0)
    assert info.startup is not None and info.startup.source == "server_info"
    assert dict(info.startup.phases) == {"loading_weights": 3.0, "kv_cache": 0.5,
                                         "cuda_graph": 4.0}
    for bad in (None, [], "x", {"load_weight": "1"}, {"load_weight": True},
                {"load_weight": 10**400}, {"cuda_graph": [1, 2]},
                {f"k{i}": 1.0 for i in range(10000)}, {"cuda_graph": {1: 2.0, "decode": 1e309}}):
        got = from_server_info({"startup_time": bad})
        assert got is None or len(got.figures) <= MAX_FIGURES
    assert parse_server_info({"version": "0.4"}, 1.0).startup is None


def test_vllm_checkpoint_size_and_prefetch_percent() -> None:
    size = weight_bytes(VLLM_0_32_SIZE % ("NFS", 14.96, 120.0), 3)
    assert size == WeightBytes(3, size_gib=14.96)
    for pct, done, total in ((10, 1, 10), (50, 5, 10), (100, 10, 10)):
        got = weight_bytes(VLLM_0_32_PREFETCH % (pct, done, total), 4)
        assert got == WeightBytes(4, percent=float(pct))
    # 4 files: vLLM prints 10, 20, 30, 40 % (one step of 10 per file): the count is read
    assert weight_bytes(VLLM_0_32_PREFETCH % (20, 2, 4), 4) == WeightBytes(4, percent=50.0)
    assert weight_bytes(VLLM_0_32_PREFETCH_DONE % 3.2, 5) == WeightBytes(5, percent=100.0)
    lagging = "Prefetching checkpoint files: 999% (1/1)"
    assert weight_bytes(lagging, 1) == WeightBytes(1, None, 100.0)
    for bad in ("Prefetching checkpoint files: ",
                "Checkpoint size: " + "9" * 5000 + " GiB", "Checkpoint size: nan GiB",
                "Prefetching checkpoint files: -5% (1/2)",
                "Prefetching checkpoint files: 10% (5/0)",
                "Prefetching checkpoint files: 10% (9/2)",
                "Prefetching checkpoint files: 10% (1/" + "9" * 40 + ")"):
        assert weight_bytes(bad, 1) is None
    events, kind = VllmParser().parse(VLLM_0_32_PREFETCH % (30, 3, 10), 9, None, True)
    assert events == [WeightBytes(9, percent=30.0)] and kind is LineKind.MILESTONE


SGLANG_SUBSTEPS = [  # SGLang 0.5.23 deep_gemm_wrapper/compile_utils.py, flashinfer_autotune.py
    ("Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically 10-20 "
     "mins) if you have not run `sglang.compile_deep_gemm`.", "DeepGEMM JIT", None, False),
    ("Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> N=7168, K=2048, num_groups=1 with all "
     "Ms.", "DeepGEMM JIT", None, False),
    ("DeepGEMM warmup:  45%|████▌     | 100/222 [00:05<00:06, 19.2it/s]", "DeepGEMM JIT",
     (100, 222), False),
    ("PP-parallel DeepGEMM warmup start (pp_rank=0, tp_rank=0, batch_sizes=[1, 2], "
     "disagg=null).", "DeepGEMM warm-up", None, False),
    ("PP-parallel DeepGEMM warmup done in 12.00s (pp_rank=0).", "DeepGEMM warm-up", None, True),
    ("Running FlashInfer autotune with cache: /root/.cache/fi.json", "FlashInfer autotune",
     None, False),
    ("FlashInfer autotune completed.", "FlashInfer autotune", None, True),
]
VLLM_SUBSTEPS = [  # vLLM 0.32 model_executor/warmup/kernel_warmup.py, jit_warmup.py
    ("JIT kernel warmup starting.", "JIT kernel warm-up", None, False),
    ("JIT kernel warmup (12 compile keys):  50%|█████     | 6/12 [00:01<00:01]",
     "JIT kernel warm-up", (6, 12), False),
    ("JIT kernel warmup finished in 2.00s.", "JIT kernel warm-up", None, True),
    ("DeepGEMM warmup: 100%|██████████| 30/30 [00:10<00:00]", "DeepGEMM JIT", (30, 30), False),
    ("Running FlashInfer autotune with 8192 tokens and token buckets [1, 2, 4].",
     "FlashInfer autotune", None, False),
    ("Warming up FlashInfer attention.", "FlashInfer warm-up", None, False),
]


@pytest.mark.parametrize(("parser", "cases"), [(SglangParser, SGLANG_SUBSTEPS),
                                               (VllmParser, VLLM_SUBSTEPS)])
def test_compile_substeps(parser: type, cases: list[tuple[str, str, object, bool]]) -> None:
    p = parser()
    for text, what, count, finished in cases:
        events, kind = p.parse(text, 5, "12:00:00", True)
        assert kind is LineKind.MILESTONE, text
        (ev,) = events
        assert isinstance(ev, SubStep) and ev.what == what and ev.finished is finished
        assert (ev.done, ev.total) == (count or (None, None))
    # vLLM 0.32's eager warning names the warm-up it disables: not a step being run
    eager = ("Enforce eager set, disabling torch.compile, CUDAGraphs, and JIT kernel warmup. "
             "This is equivalent to setting -cc.mode=none")
    assert VllmParser().parse(eager, 1, None, True) == ([], None)


def test_substep_bars_hostile() -> None:
    for text in ("DeepGEMM warmup: " + "1" * 50000, "DeepGEMM warmup: 1%|" + "|" * 9000,
                 "DeepGEMM warmup: 10%|x| " + "9" * 40 + "/" + "9" * 40):
        events, _ = SglangParser().parse(text, 1, None, False)
        assert len(events) == 1 and isinstance(events[0], SubStep)
        assert events[0].done is None or events[0].done < 10**16


REAL = Path(__file__).resolve().parents[3] / "fixtures" / "sglang-cpu"


def test_real_sglang_0_5_23_metrics_and_server_info_agree_with_its_log() -> None:
    # recorded from the real SGLang 0.5.23 CPU server (tests/fixtures/sglang-cpu/README.md)
    text = (REAL / "eagle3-metrics.txt").read_text()
    sample = to_sample(parse_metrics(text, 1.0), RateWindow())
    info = parse_server_info(json.loads((REAL / "eagle3-get_server_info.json").read_text()), 1.0)
    log_line = next(x for x in (REAL / "eagle3.log").read_text().splitlines()
                    if "Engine startup timings" in x)
    logged = timings_line(log_line, 1)
    assert sample.startup is not None and info.startup is not None and logged is not None
    for got in (sample.startup, info.startup):
        figures = dict(got.figures)
        assert figures["kv_cache_allocation"] == pytest.approx(1.215, abs=1e-3)
        assert figures["tokenizer_e2e"] == pytest.approx(dict(logged.figures)["tokenizer_e2e"],
                                                         abs=0.005)
        assert dict(got.phases)["cuda_graph"] == 0.0 and len(figures) == 10
