"""SGLang lines of every era (FORMATS.md §1) through the real ``LogParser`` and reducer."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from eagle_tui.model.engines.sglang.logs import cli_spec, fields, server_args_spec
from eagle_tui.model.events import (
    DecodeStats,
    EngineDetected,
    Event,
    HiddenStateDims,
    LineKind,
    LogLine,
    ModelInfo,
    Phase,
    PhaseEvent,
    PrefillStats,
    Progress,
    SpecConfig,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from tests.support.parsing import parse


def derived(lines: Sequence[str | bytes]) -> list[Event]:
    return [e for e in parse(lines) if not isinstance(e, LogLine)]


def only(lines: Sequence[str | bytes], cls: type) -> list:  # type: ignore[type-arg]
    return [e for e in parse(lines) if isinstance(e, cls)]


def state(lines: Sequence[str | bytes]) -> DashboardState:
    return reduce(DashboardState(), parse(lines))


# ------------------------------------------------------------------------------ Decode lines
DECODE = [
    # (line, accept_len, gen_tps, running, queued, cuda_graph, num_tokens)
    ("[2024-08-01 10:00:00 TP0] Decode batch. #running-req: 3, #token: 900, token usage: 0.01, "
     "gen throughput (token/s): 120.50, #queue-req: 0", None, 120.5, 3, 0, None, 900),
    ("[2025-01-07 10:00:00 TP0] Decode batch. #running-req: 1, #token: 166, token usage: 0.00, "
     "accept len: 3.10, gen throughput (token/s): 292.45, #queue-req: 0",
     3.1, 292.45, 1, 0, None, 166),
    ("[2025-06-10 09:01:02 TP0] Decode batch. #running-req: 1, #token: 166, token usage: 0.00, "
     "accept len: 3.10, cuda graph: True, gen throughput (token/s): 292.45, #queue-req: 0",
     3.1, 292.45, 1, 0, True, 166),
    ("[2025-06-10 09:01:02 TP0] Decode batch. #running-req: 1, #token: 166, token usage: 0.00, "
     "accept len: 3.10, pre-allocated usage: 0.00, #retracted-req: 0, cuda graph: False, gen "
     "throughput (token/s): 292.45, #queue-req: 2", 3.1, 292.45, 1, 2, False, 166),
    ("[2025-10-22 10:27:57 TP0] Decode batch. #running-req: 1, #token: 186, token usage: 0.00, "
     "accept len: 1.95, accept rate: 0.49, cuda graph: True, gen throughput (token/s): 178.86, "
     "#queue-req: 0, ", 1.95, 178.86, 1, 0, True, 186),
    ("[2025-11-11 10:00:00] Decode batch [4121], #running-req: 2, #token: 289, token usage: "
     "0.00, accept len: 3.08, accept rate: 0.77, cuda graph: True, gen throughput (token/s): "
     "292.45, #queue-req: 0, ", 3.08, 292.45, 2, 0, True, 289),
    ("[2026-04-05 20:02:51] Decode batch, #running-req: 32, #token: 11179, token usage: 0.08, "
     "cuda graph: True, gen throughput (token/s): 1635.11, #queue-req: 0",
     None, 1635.11, 32, 0, True, 11179),
    ("[2026-09-22 01:00:00 TP0 EP0] Decode batch, #running-req: 9, #full token: 11584, full token"
     " usage: 0.01, mamba num: 36, mamba usage: 0.60, accept len: 3.04, accept rate: 0.68, cuda "
     "graph: True, gen throughput (token/s): 22.40, #queue-req: 1", 3.04, 22.4, 9, 1, True, 11584),
    ("[2026-09-22 01:00:00 DP1 TP0] Decode batch, #running-req: 4, #full token: 10, full token "
     "usage: 0.01, #swa token: 5, swa token usage: 0.00, pre-allocated usage: 0.00, #prealloc-req:"
     " 0, #transfer-req: 0, #retracted-req: 0, npu graph: True, gen throughput (token/s): 99.00, "
     "#queue-req: 0", None, 99.0, 4, 0, True, 10),
    ("[04:40:55 TP0] Decode batch, #running-req: 1, #token: 108, token usage: 0.00, accept len: "
     "2.17, accept rate: 0.54, cpu graph: False, gen throughput (token/s): 0.39, #queue-req: 0, ",
     2.17, 0.39, 1, 0, False, 108),
    ("INFO:sglang.srt.managers.scheduler:Decode batch. #running-req: 1, #token: 5, token usage: "
     "0.00, accept len: 2.50, gen throughput (token/s): 10.00, #queue-req: 0",
     2.5, 10.0, 1, 0, None, 5),
    ("2026-01-05T10:00:00.123456Z  INFO sglang::scheduler: Decode batch, #running-req: 2, #token:"
     " 7, token usage: 0.00, accept len: 1.50, cuda graph: True, gen throughput (token/s): 5.00, "
     "#queue-req: 0", 1.5, 5.0, 2, 0, True, 7),
    ("(SGLangEngine pid=41820) [2026-01-05 10:00:00] Decode batch, #running-req: 2, #token: 7, "
     "token usage: 0.00, accept len: 1.50, cuda graph: True, gen throughput (token/s): 5.00, "
     "#queue-req: 0", 1.5, 5.0, 2, 0, True, 7),
    ("\x1b[36m(CommandActor pid=105447)\x1b[0m [2026-01-05 10:00:00] Decode batch, #running-req:"
     " 2, #token: 7, token usage: 0.00, accept len: 1.50, cuda graph: True, gen throughput "
     "(token/s): 5.00, #queue-req: 0", 1.5, 5.0, 2, 0, True, 7),
    # field order is not relied on
    ("[2027-01-01 00:00:00] Decode batch, gen throughput (token/s): 7.50, new field: x, accept "
     "len: 2.25, #queue-req: 3, #running-req: 5", 2.25, 7.5, 5, 3, None, None),
]


@pytest.mark.parametrize(("line", "accept", "gen", "running", "queued", "graph", "tokens"),
                         DECODE)
def test_decode_lines_of_every_era(line: str, accept: float | None, gen: float, running: int,
                                   queued: int, graph: bool | None, tokens: int | None) -> None:
    events = parse([line])
    (stats,) = [e for e in events if isinstance(e, DecodeStats)]
    assert (stats.accept_len, stats.gen_tps, stats.running, stats.queued, stats.cuda_graph,
            stats.num_tokens) == (accept, gen, running, queued, graph, tokens)
    assert EngineDetected("sglang", 1) in events
    (log,) = [e for e in events if isinstance(e, LogLine)]
    assert log.kind is LineKind.STATS


def test_decode_line_fields_and_time() -> None:
    (stats,) = only([DECODE[4][0]], DecodeStats)
    assert stats.accept_rate == 0.49 and stats.kv_usage == 0.0
    assert stats.time == "2025-10-22 10:27:57" and stats.lineno == 1


def test_a_garbled_number_is_dropped_not_guessed() -> None:
    line = ("[2025-10-22 10:27:57] Decode batch, #running-req: 1, accept len: 1.9.5, "
            "gen throughput (token/s): 00.5, #queue-req: 0")
    (stats,) = only([line], DecodeStats)
    assert stats.accept_len is None and stats.gen_tps is None and stats.running == 1


def test_input_throughput_is_never_gen_throughput() -> None:
    line = ("[2026-09-30 08:31:02] Prefill batch, #new-seq: 1, #new-token: 42, #cached-token: 1, "
            "token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: "
            "True, input throughput (token/s): 0.70")
    events = derived([line])
    assert not [e for e in events if isinstance(e, DecodeStats)]
    (pre,) = [e for e in events if isinstance(e, PrefillStats)]
    assert (pre.new_seq, pre.new_tokens, pre.cached_tokens, pre.input_tps) == (1, 42, 1, 0.7)


@pytest.mark.parametrize("line", [
    "[2025-01-07 10:00:00 TP0] Prefill batch. #new-seq: 1, #new-token: 48, #cached-token: 0, "
    "cache hit rate: 0.00%, token usage: 0.00, #running-req: 0, #queue-req: 0",
    "[2025-10-22 10:00:00] Prefill batch. #new-seq: 1, #new-token: 48, #cached-token: 0, token "
    "usage: 0.00, #running-req: 0, #queue-req: 0, ",
    "[2025-11-20 10:00:00] Prefill batch [7], #new-seq: 1, #new-token: 48, #cached-token: 0, "
    "#full token: 3, full token usage: 0.00, #running-req: 0, #queue-req: 0, ",
])
def test_prefill_lines_of_every_era(line: str) -> None:
    (pre,) = only([line], PrefillStats)
    assert (pre.new_seq, pre.new_tokens, pre.cached_tokens, pre.running) == (1, 48, 0, 0)


def test_fields_split_by_key_not_position() -> None:
    assert fields("a: 1, b c: 2, a: 3, junk, d: x: y, ") == {"a": "1", "b c": "2", "d": "x: y"}


# ------------------------------------------------------------------------------ milestones
STARTUP = [
    ("[2025-11-20 10:14:31] server_args=ServerArgs(model_path='m', speculative_algorithm=None)",
     Phase.INIT),
    ("[2025-11-20 10:14:38] Init torch distributed begin.", Phase.INIT),
    ("[2025-11-20 10:14:39 TP0] Init torch distributed ends. elapsed=0.5 s, mem usage=0.00 GB",
     Phase.INIT),
    ("[2025-11-20 10:14:40 TP3] Load weight begin. avail mem=78.58 GB", Phase.LOADING_WEIGHTS),
    ("Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:02<00:02,  1.24s/it]",
     Phase.LOADING_WEIGHTS),
    ("Loading pt checkpoint shards: 100% Completed | 4/4 [00:02<00:00,  1.24it/s]",
     Phase.LOADING_WEIGHTS),
    ("Multi-thread loading shards: 100% Completed | 32/32 [01:39<00:00,  3.12s/it]",
     Phase.LOADING_WEIGHTS),
    ("[2025-03-27 10:00:00 TP0] Load weight end. type=Gemma3ForConditionalGeneration, dtype="
     "torch.bfloat16, avail mem=131.08 GB, mem usage=8.13 GB.", Phase.WEIGHTS_LOADED),
    ("[2026-01-01 10:00:00] Load weight end. elapsed=100.59 s, type=BailingMoeV3ForCausalLM, "
     "avail mem=97.27 GB, mem usage=15.47 GB.", Phase.WEIGHTS_LOADED),
    ("[2025-11-20 10:14:45] Using KV cache dtype: torch.bfloat16", Phase.KV_CACHE),
    ("[2025-11-20 10:14:46] KV Cache is allocated. #tokens: 363000, K size: 22.16 GB, V size: "
     "22.16 GB", Phase.KV_CACHE),
    ("[2026-01-01 10:00:00] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1933682, KV "
     "size: 12.45 GB", Phase.KV_CACHE),
    ("[2026-01-01 10:00:00] Mamba Cache is allocated. max_mamba_cache_size: 3, conv_state size: "
     "0.38GB, ssm_state size: 10.81GB", Phase.KV_CACHE),
    ("[2025-11-20 10:14:46] Memory pool end. avail mem=18.87 GB", Phase.KV_CACHE),
    ("[2025-11-20 10:14:47] Capture cuda graph begin. This can take up to several minutes. avail"
     " mem=18.55 GB", Phase.CUDA_GRAPH),
    ("[2025-11-20 10:14:47] Capture cuda graph bs [1, 2, 3, 4]", Phase.CUDA_GRAPH),
    ("Capturing batches (avail_mem=9.72 GB): 100%|██████████| 23/23 [00:02<00:00,  9.88it/s]",
     Phase.CUDA_GRAPH),
    ("[2026-01-01 10:00:00] Capture piecewise CUDA graph end. Time elapsed: 3.1 s",
     Phase.CUDA_GRAPH),
    ("[2026-09-30 08:29:55] Capture target prefill CUDA graph begin. backend=breakable, "
     "num_tokens=[4, 8], avail mem=7.10 GB", Phase.CUDA_GRAPH),
    ("[2025-11-20 10:15:00] INFO:     Started server process [41873]", Phase.HTTP_SERVER),
    ("[2025-11-20 10:15:00] INFO:     Waiting for application startup.", Phase.HTTP_SERVER),
    ("[2025-11-20 10:15:00] INFO:     Application startup complete.", Phase.HTTP_SERVER),
    ("[2025-11-20 10:15:00] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to "
     "quit)", Phase.HTTP_SERVER),
    ("[2025-11-20 10:15:02] The server is fired up and ready to roll!", Phase.READY),
]


@pytest.mark.parametrize(("line", "phase"), STARTUP)
def test_startup_milestones(line: str, phase: Phase) -> None:
    events = parse(["[2025-11-20 10:14:31] server_args=ServerArgs(model_path='m')", line])
    phases = [e.phase for e in events if isinstance(e, PhaseEvent) and e.lineno == 2]
    assert phases == [phase]
    kinds = [e.kind for e in events if isinstance(e, LogLine) and e.lineno == 2]
    assert kinds == [LineKind.MILESTONE]


def test_progress_of_shards_and_graph_batches() -> None:
    (shards,) = only([STARTUP[4][0]], Progress)
    assert (shards.what, shards.done, shards.total) == ("shards", 2, 4)
    line = "Capturing batches (bs=48 avail_mem=18.41 GB):  50%|█████     | 7/14 [00:02<00:02]"
    (graphs,) = only([line], Progress)
    assert (graphs.what, graphs.done, graphs.total, graphs.label) == ("graphs", 7, 14, "bs=48")


def test_roles_target_then_draft_and_model_architectures() -> None:
    lines = [
        "[2025-11-20 10:14:40] Load weight begin. avail mem=78.58 GB",
        "[2025-11-20 10:14:45] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, "
        "avail mem=63.44 GB, mem usage=15.14 GB.",
        "[2025-11-20 10:14:46] Memory pool end. avail mem=18.87 GB",
        "[2025-11-20 10:14:47] Capture cuda graph begin. avail mem=18.55 GB",
        "[2025-11-20 10:14:51] Capture cuda graph end. Time elapsed: 4.57 s. mem usage=0.61 GB.",
        "[2025-11-20 10:14:52] Load weight begin. avail mem=17.94 GB",
        "[2025-11-20 10:14:53] Load weight end. type=LlamaForCausalLMEagle3, dtype=torch."
        "bfloat16, avail mem=16.07 GB, mem usage=1.87 GB.",
        "[2025-11-20 10:14:53] Capture draft extend cuda graph begin. avail mem=14.38 GB",
    ]
    roles = [e.role for e in only(lines, PhaseEvent)]
    assert roles == ["target"] * 5 + ["draft"] * 3
    assert only(lines, ModelInfo) == [ModelInfo("target", "LlamaForCausalLM", 2),
                                      ModelInfo("draft", "LlamaForCausalLMEagle3", 7)]


def test_2026_capture_lines_name_their_role() -> None:
    lines = ["[2026-09-30 08:30:02] Capture draft decode CUDA graph begin. backend=full, "
             "num_tokens_per_req=1, bs=[1, 2], avail mem=14.66 GB",
             "[2026-09-30 08:29:55] Capture target verify CUDA graph end. elapsed=4.56 s, mem "
             "usage=0.61 GB, avail mem=17.94 GB."]
    assert [e.role for e in only(lines, PhaseEvent)] == ["draft", "target"]


def test_tp_ranks_report_one_model_each() -> None:
    lines = [f"[2025-11-20 10:14:45 TP{r}] Load weight end. type=DeepseekV3ForCausalLM, dtype=x, "
             "avail mem=1 GB, mem usage=1 GB." for r in range(8)]
    assert len(only(lines, ModelInfo)) == 1


# ------------------------------------------------------------------------------ speculative
SERVER_ARGS = (
    "[2025-11-20 10:14:31] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct',"
    " tp_size=1, speculative_algorithm='EAGLE3', speculative_draft_model_path='yuhuili/EAGLE3-"
    "LLaMA3.1-Instruct-8B', speculative_draft_model_revision='main', speculative_num_steps=3, "
    "speculative_eagle_topk=1, speculative_num_draft_tokens=4, speculative_token_map=None)"
)


def test_server_args_give_the_speculative_settings() -> None:
    (spec,) = only([SERVER_ARGS], SpecConfig)
    assert spec == SpecConfig("EAGLE3", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", 3, 1, 4)


def test_no_speculative_algorithm_means_no_spec_config() -> None:
    line = ("[2025-11-20 10:14:31] server_args=ServerArgs(model_path='m', speculative_algorithm="
            "None, speculative_draft_model_path=None, speculative_num_steps=None)")
    assert only([line], SpecConfig) == []
    assert server_args_spec(line) == {"algorithm": None, "draft_model": None}


def test_terminal_wrapped_server_args_continue_on_the_next_lines() -> None:
    lines = ["[2025-04-03 10:00:00] server_args=ServerArgs(model_path='m', speculative_algorithm"
             "='NEXTN',", " speculative_draft_model_path=None, speculative_num_steps=3, specul",
             "ative_eagle_topk=1, speculative_num_draft_tokens=4)",
             "[2025-04-03 10:00:01] Init torch distributed begin."]
    spec = only(lines, SpecConfig)[-1]
    assert (spec.algorithm, spec.num_steps) == ("NEXTN", 3)


def test_command_line_flags_with_argparse_abbreviations() -> None:
    cmd = ("python -m sglang.launch_server --model-path m --speculative-algo EAGLE3 "
           "--speculative-draft=/models/draft --speculative-num-steps 5 --speculative-eagle-topk "
           "4 --speculative-num-draft-tokens 8 --speculative-draft-model-revision main")
    assert cli_spec(cmd) == {"algorithm": "EAGLE3", "draft_model": "/models/draft",
                             "num_steps": 5, "eagle_topk": 4, "num_draft_tokens": 8}
    (spec,) = only([cmd], SpecConfig)
    assert spec.draft_model == "/models/draft"


# ------------------------------------------------------------------------------ debug dims
@pytest.mark.parametrize(("line", "dim"), [
    ("[EAGLE3-DEBUG] hidden_states shape=torch.Size([21, 21504])", 21504),
    ("[2025-11-20 10:16:03 TP0] [EAGLE3-DEBUG] hidden_states shape=torch.Size([4, 7168])", 7168),
    ("rank 0 step 12 [EAGLE3-DEBUG] target hidden_states.shape: torch.Size([1, 3, 12288])",
     12288),
    ("(SGLangEngine pid=1) [EAGLE3-DEBUG] aux hidden states shape = (21, 21504)", 21504),
    ("\x1b[33m[EAGLE3-DEBUG]\x1b[0m hidden_states shape=torch.Size([21, 15360])", 15360),
])
def test_eagle3_debug_lines_anywhere_in_a_line(line: str, dim: int) -> None:
    events = parse([line])
    assert [e.dim for e in events if isinstance(e, HiddenStateDims)] == [dim]
    assert [e.kind for e in events if isinstance(e, LogLine)] == [LineKind.DEBUG]


def test_hidden_dims_without_the_debug_tag_are_not_read_from_other_lines() -> None:
    line = "RuntimeError: expected hidden_states shape=(21, 7168) to match"
    assert only([line], HiddenStateDims) == []


def test_repeated_dims_are_not_repeated_events() -> None:
    lines = ["[EAGLE3-DEBUG] hidden_states shape=torch.Size([21, 21504])"] * 5
    assert len(only(lines, HiddenStateDims)) == 1


# ------------------------------------------------------------------------------ whole launches
def test_serving_without_a_ready_line_is_serving() -> None:
    # --skip-server-warmup prints no "fired up" line; a log may also start mid-run
    st = state([DECODE[6][0]])
    assert st.startup.phase is Phase.SERVING and st.startup.ready and st.startup.engine == "sglang"


def test_warmup_prefill_does_not_mean_serving() -> None:
    st = state(["[2025-11-20 10:15:00] INFO:     Uvicorn running on http://0.0.0.0:30000",
                "[2025-11-20 10:15:01] Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: "
                "0, token usage: 0.00, #running-req: 0, #queue-req: 0, "])
    assert st.startup.phase is Phase.HTTP_SERVER and not st.startup.ready


def test_uvicorn_running_is_not_ready_for_sglang() -> None:
    st = state(["[2025-11-20 10:14:31] server_args=ServerArgs(model_path='m')",
                "[2025-11-20 10:15:00] INFO:     Application startup complete.",
                "[2025-11-20 10:15:00] INFO:     Uvicorn running on http://0.0.0.0:30000"])
    assert st.startup.phase is Phase.HTTP_SERVER and not st.startup.ready


def test_quoted_milestones_in_a_traceback_are_not_milestones() -> None:
    st = state(["[2025-11-20 10:14:31] server_args=ServerArgs(model_path='m')",
                "Traceback (most recent call last):",
                '  File "/x/http_server.py", line 10, in warmup',
                '    logger.info("The server is fired up and ready to roll!")',
                "KeyError: 'x'"])
    assert st.startup.phase is Phase.INIT
    assert st.startup.crash is not None
    assert st.startup.crash.kind == "other_traceback"
    assert st.startup.crash.lineno == 5
