"""Every weight loader's tqdm bar and SGLang's piecewise CUDA-graph bars, in the engines' own
format strings (copied from the installed code, version named), through the real parser."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.events import Event, LogLine, Phase, PhaseEvent, Progress
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.tqdmbar import clock_seconds, last_bar
from eagle_tui.model.state import DashboardState
from eagle_tui.sim.textfmt import block_bar, shard_bar, tqdm_clock
from tests.support.parsing import parse

# vLLM 0.32 model_executor/model_loader/weight_utils.py:837 and SGLang 0.5.23
# srt/utils/common.py:1414 (the same string): the loaders' bar_format.
LOADER_FORMAT = ("{desc}: {percentage:3.0f}% Completed | {n_fmt}/{total_fmt} "
                 "[{elapsed}<{remaining}, {rate_fmt}]")
# SGLang 0.5.23 weight_utils.py:1300 (Fastsafetensor): tqdm's l_bar and bar, then the count.
FASTSAFETENSORS_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]"
# (desc, counts tensors) of every loader bar: vLLM 0.32 weight_utils.py lines 869, 1094-1096
# ("(eager)" under --safetensors-load-strategy eager), 1234, 1273, 1409, 1434, 1465.
VLLM_032 = (
    ("Loading np_cache checkpoint shards", False),
    ("Loading safetensors checkpoint shards", False),
    ("Loading safetensors checkpoint shards (eager)", False),
    ("Multi-thread loading shards", False),
    ("Loading safetensors using Runai Model Streamer", True),
    ("Loading safetensors using InstantTensor loader", True),
    ("Loading pt checkpoint shards", False),
    ("Multi-thread loading pt checkpoint shards", False),
)
# SGLang 0.5.23 srt/model_loader/weight_utils.py lines 912, 1166, 1261, 1371, 1412, 1440, 1688
SGLANG_0523 = (
    ("Loading np_cache checkpoint shards", False),
    ("Loading safetensors checkpoint shards", False),
    ("Loading safetensors using InstantTensor", True),
    ("Multi-thread loading shards", False),
    ("Loading pt checkpoint shards", False),
    ("Multi-thread loading pt checkpoint shards", False),
    ("Loading safetensors using Runai Model Streamer", True),
)
SGLANG_STAMP = "[2026-05-24 00:52:58] "


def loader_line(desc: str, n: int, total: int) -> str:
    pct = 100.0 * n / total
    return LOADER_FORMAT.format(desc=desc, percentage=pct, n_fmt=n, total_fmt=total,
                                elapsed="00:03", remaining="00:04", rate_fmt=" 1.52s/it")


def progress(lines: Sequence[str]) -> list[Progress]:
    return [e for e in parse(lines) if isinstance(e, Progress)]


def derived(lines: Sequence[str]) -> list[Event]:
    return [e for e in parse(lines) if not isinstance(e, LogLine)]


@pytest.mark.parametrize(("desc", "tensors"), VLLM_032, ids=[d for d, _ in VLLM_032])
def test_every_vllm_032_loader_bar_is_weights_progress(desc: str, tensors: bool) -> None:
    head = "(EngineCore_DP0 pid=4711) INFO 05-24 00:52:58 [default_loader.py:291] Loading model"
    line = loader_line(desc, 3, 7)
    (p,) = progress([head, line])
    assert (p.what, p.done, p.total, p.left_s) == ("shards", 3, 7, 4.0)
    assert p.label == ("tensors" if tensors else "")
    phases = [e.phase for e in derived([head, line]) if isinstance(e, PhaseEvent)]
    assert phases[-1] is Phase.LOADING_WEIGHTS
    (tagged,) = progress([head, "(EngineCore_DP0 pid=4711) " + line])  # (its process tag)
    assert tagged == p


@pytest.mark.parametrize(("desc", "tensors"), SGLANG_0523, ids=[d for d, _ in SGLANG_0523])
def test_every_sglang_0523_loader_bar_is_weights_progress(desc: str, tensors: bool) -> None:
    head = SGLANG_STAMP + "Load weight begin. avail mem=78.50 GB"
    (p,) = progress([head, loader_line(desc, 12, 12)])
    assert (p.what, p.done, p.total, p.label) == ("shards", 12, 12,
                                                  "tensors" if tensors else "")


def test_the_fastsafetensors_and_transformers_bars_are_read_too() -> None:
    fast = block_bar("Loading safetensors using Fastsafetensor loader", 2, 4, 3.0)
    assert FASTSAFETENSORS_FORMAT.startswith("{l_bar}{bar}|")  # (block_bar is that shape)
    hf = "Loading checkpoint shards: 100%|██████████| 2/2 [00:01<00:00,  1.50it/s]"
    got = progress([SGLANG_STAMP + "Load weight begin. avail mem=78.50 GB", fast, hf])
    assert [(p.what, p.done, p.total) for p in got] == [("shards", 2, 4), ("shards", 2, 2)]


def test_other_bars_are_not_weights() -> None:
    lines = ["DeepGEMM warmup: 100%|██████████| 40/40 [00:03<00:00, 12.1it/s]",
             "Prefetching checkpoint files: 50% (3/6)", "cache hit rate: 12%"]
    assert not [p for p in progress(lines) if p.what == "shards"]


# SGLang 0.5.23: runner_backend/tc_piecewise_cuda_graph_backend.py:207 and
# runner/prefill_cuda_graph_runner.py:1734 (tqdm default bar, set_description).
COMPILE_0523 = "Compiling num tokens ({num_tokens=})"
CAPTURE_0523 = "Capturing prefill shape ({num_tokens=} {avail_mem=:.2f} GB)"
# The releases before (piecewise_cuda_graph_runner.py) and cuda_graph_runner/prefill_runner.py
# at commit 0dcf687: the compile wording is the same, the capture one is
CAPTURE_OLD = "Capturing num tokens ({num_tokens=} {avail_mem=:.2f} GB)"


def desc(fmt: str, num_tokens: int, avail_mem: float = 70.0) -> str:
    return fmt.replace("{num_tokens=}", f"num_tokens={num_tokens}").replace(
        "{avail_mem=:.2f}", f"avail_mem={avail_mem:.2f}")


@pytest.mark.parametrize("capture", [CAPTURE_0523, CAPTURE_OLD], ids=["0.5.23", "before"])
def test_piecewise_graphs_are_a_sub_step_with_progress(capture: str) -> None:
    shapes = [8192, 4096, 1024, 4]
    lines = [SGLANG_STAMP + "Capture target prefill CUDA graph begin. backend=tc_piecewise, "
             "num_tokens=[4, 1024, 4096, 8192], avail mem=60.00 GB"]
    for i, n in enumerate(shapes):
        lines.append(block_bar(desc(COMPILE_0523, n), i, len(shapes), 2.0 * i))
    lines.append(block_bar(desc(COMPILE_0523, 4), 4, 4, 8.0))
    for i, n in enumerate(shapes[:3]):
        lines.append(block_bar(desc(capture, n), i, len(shapes), 10.0 * i))
    got = [p for p in progress(lines) if p.what == "piecewise"]
    assert [(p.label, p.done) for p in got] == [("compile", i) for i in range(5)] + [
        ("capture", i) for i in range(3)]
    assert got[-1].total == 4 and got[-1].left_s == 20.0 and got[-1].role == "target"
    s = reduce(DashboardState(), parse(lines))
    assert s.startup.phase is Phase.CUDA_GRAPH and s.startup.piecewise == got[-1]


def test_decode_graphs_after_the_prefill_graphs_stay_the_targets() -> None:
    """0.5.23 captures the target's prefill graphs before its decode graphs: the end of the
    first is not the target being done (the decode bar after it is no draft's)."""
    lines = [SGLANG_STAMP + "Capture target prefill CUDA graph begin. backend=tc_piecewise, "
             "num_tokens=[4], avail mem=60.00 GB",
             block_bar(desc(CAPTURE_0523, 4), 1, 1, 1.0),
             SGLANG_STAMP + "Capture target prefill CUDA graph end. elapsed=1.00 s, mem "
             "usage=0.10 GB, avail mem=59.90 GB.",
             SGLANG_STAMP + "Capture target verify CUDA graph begin. backend=full, "
             "num_tokens_per_req=4, avail mem=59.90 GB",
             block_bar("Capturing batches (bs=1 avail_mem=59.80 GB)", 3, 10, 2.0)]
    graphs = [p for p in progress(lines) if p.what == "graphs"]
    assert [(p.role, p.done) for p in graphs] == [("target", 3)]


def test_a_real_glued_piecewise_line_reads_its_last_bar() -> None:
    """A recorded log whose redraws lost their CRs (2026, SGLang before 0.5.23)."""
    glued = ("Compiling num tokens (num_tokens=8):  88%|████████▊ | 51/58 [00:06<00:00, "
             "35.13it/s] Compiling num tokens (num_tokens=4):  88%|████████▊ | 51/58 "
             "[00:06<00:00, 35.13it/s]Compiling num tokens (num_tokens=4): 100%|██████████| "
             "58/58 [00:06<00:00,  9.14it/s]")
    (p,) = progress([SGLANG_STAMP + "Capture piecewise CUDA graph begin. avail mem=23.56 GB",
                     glued])
    assert (p.what, p.label, p.done, p.total) == ("piecewise", "compile", 58, 58)
    bar = last_bar(glued)
    assert bar is not None and bar.desc == "Compiling num tokens (num_tokens=4)"


def test_the_piecewise_stage_of_the_draft_after_its_weights() -> None:
    lines = [SGLANG_STAMP + "Load weight end. elapsed=1.00 s, type=LlamaForCausalLMEagle3, "
             "avail mem=50.00 GB, mem usage=1.88 GB.",
             block_bar(desc(CAPTURE_OLD, 4), 1, 2, 1.0)]
    (p,) = [p for p in progress(lines) if p.what == "piecewise"]
    assert p.role == "draft"


# ------------------------------------------------------------------ generated bars (bounded)

@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 10**6), extra=st.integers(0, 10**6), elapsed=st.floats(0, 10**5),
       fancy=st.booleans(), cut=st.integers(0, 400))
def test_a_bar_reads_exactly_or_not_at_all_when_cut(n: int, extra: int, elapsed: float,
                                                   fancy: bool, cut: int) -> None:
    total = n + extra
    if total == 0:
        return
    render = block_bar if fancy else shard_bar
    line = render("Loading safetensors checkpoint shards", n, total, elapsed)
    bar = last_bar(line)
    assert bar is not None and (bar.done, bar.total) == (n, total)
    if n and elapsed > 0:
        assert bar.left_s == clock_seconds(tqdm_clock(elapsed / n * (total - n)))
    part = last_bar(line[:cut])
    assert part is None or (part.done, part.total) == (n, total)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789%|/ :[]<>.,█Completd?", max_size=300))
def test_garbage_never_crashes_or_reads_an_impossible_bar(text: str) -> None:
    bar = last_bar(text)
    assert bar is None or (bar.total > 0 and 0 <= bar.done <= bar.total)


def test_huge_numbers_are_no_bar() -> None:
    digits = "9" * 5000
    assert last_bar(f"Loading x: 50% Completed | {digits}/{digits} [00:01<00:01, 1s/it]") is None
    assert last_bar(f"Loading x: {digits}% Completed | 1/2 [00:01<00:01, 1s/it]") is None
    assert last_bar("Loading x: 50% Completed | 3/2 [00:01<00:01, 1s/it]") is None  # n > total
    assert last_bar("Loading x: 50% Completed | 0/0 [00:01<00:01, 1s/it]") is None
    assert last_bar("Loading x:  50% Completed | 1/2 [00:01<" + "9" * 50 + ", 1s/it]") == \
        last_bar("Loading x:  50% Completed | 1/2 [00:01<?, ?it/s]")
