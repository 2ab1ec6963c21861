"""vLLM lines (V1 and V0, FORMATS.md §2) through the real ``LogParser`` and reducer."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from eagle_tui.model.engines.vllm.logs import spec_from_text
from eagle_tui.model.events import (
    DecodeStats,
    EngineDetected,
    LineKind,
    LogLine,
    ModelInfo,
    Phase,
    PhaseEvent,
    Progress,
    SpecConfig,
    SpecStats,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from tests.support.parsing import parse

P = "(APIServer pid=1624) INFO 10-30 14:18:55 [api_server.py:1839] "
E = "(EngineCore_DP0 pid=771568) INFO 10-30 14:19:15 [gpu_model_runner.py:2602] "




def only(lines: Sequence[str | bytes], cls: type) -> list:  # type: ignore[type-arg]
    return [e for e in parse(lines) if isinstance(e, cls)]


def state(lines: Sequence[str | bytes]) -> DashboardState:
    return reduce(DashboardState(), parse(lines))


@pytest.mark.parametrize("prefix", [
    "(APIServer pid=1624) INFO 09-24 20:55:18 [loggers.py:123] ",  # V1 (≥ mid 2025)
    "INFO 09-24 20:55:18 [loggers.py:123] ",  # no process prefix (single process)
    "INFO 09-24 20:55:18 [v1/metrics/loggers.py:123] ",  # VLLM_LOGGING_LEVEL=DEBUG paths
    "INFO 05-01 10:00:00 loggers.py:123] ",  # 2024
    "\x1b[36m(APIServer pid=1)\x1b[0m \x1b[32mINFO\x1b[0m 09-24 20:55:18 \x1b[90m[loggers.py:123]"
    "\x1b[0m ",  # colored
])
def test_engine_stats_line_behind_every_prefix(prefix: str) -> None:
    line = (prefix + "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput:"
            " 40.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.3%, Prefix "
            "cache hit rate: 0.0%")
    events = parse([line])
    (stats,) = [e for e in events if isinstance(e, DecodeStats)]
    assert (stats.gen_tps, stats.prompt_tps, stats.running, stats.queued) == (40.0, 0.0, 1, 0)
    assert stats.kv_usage == pytest.approx(0.003)
    assert EngineDetected("vllm", 1) in events
    assert [e.kind for e in events if isinstance(e, LogLine)] == [LineKind.STATS]


@pytest.mark.parametrize(("body", "gen", "running", "queued", "kv"), [
    ("Engine 000: Avg prompt throughput: 156.8 tokens/s, Avg generation throughput: 642.7 "
     "tokens/s, Running: 4 reqs, Waiting: 2 reqs, Preemptions: 0, GPU KV cache usage: 1.1%, "
     "Prefix cache hit rate: 12.5%, MM cache hit rate: 0.0%", 642.7, 4, 2, 0.011),
    ("2 Engines Aggregated: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 9.5 "
     "tokens/s, Running: 3 reqs, Waiting: 0 reqs, Deferred: 0 reqs, KV cache usage: 50.0%, "
     "Corrupted: 0 reqs", 9.5, 3, 0, 0.5),
    ("Engine 000: Avg prompt throughput: 22.8 tokens/s, Avg generation throughput: 92.6 tokens/s,"
     " Running: 0 reqs, Waiting: 0 reqs, CPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%",
     92.6, 0, 0, 0.0),
    # V0: Swapped / Pending, GPU and CPU cache, final period
    ("Avg prompt throughput: 5.0 tokens/s, Avg generation throughput: 77.1 tokens/s, Running: 2 "
     "reqs, Swapped: 0 reqs, Pending: 7 reqs, GPU KV cache usage: 40.0%, CPU KV cache usage: "
     "0.0%.", 77.1, 2, 7, 0.4),
])
def test_engine_stats_line_variants(body: str, gen: float, running: int, queued: int,
                                    kv: float) -> None:
    (stats,) = only([P + body], DecodeStats)
    assert (stats.gen_tps, stats.running, stats.queued) == (gen, running, queued)
    assert stats.kv_usage == pytest.approx(kv)


SPEC_NEW = ("SpecDecoding metrics: Mean acceptance length: 2.84, Accepted throughput: 121.40 "
            "tokens/s, Drafted throughput: 198.00 tokens/s, Accepted: 1214 tokens, Drafted: 1980 "
            "tokens, Per-position acceptance rate: 0.779, 0.612, 0.449, Avg Draft acceptance "
            "rate: 61.3%")
SPEC_085 = ("SpecDecoding metrics: Draft acceptance rate: 57.0%, Mean acceptance length: 2.71, "
            "Accepted: 4056 tokens, Drafted: 7116 tokens, Per-position acceptance rate: 0.752, "
            "0.553, 0.405")
SPEC_080 = "SpecDecoding metrics: Draft acceptance rate: 61.3%, Accepted: 1214 tokens, Drafted: " \
           "1980 tokens"


def test_spec_decoding_metrics_newest_format() -> None:
    (s,) = only([P + SPEC_NEW], SpecStats)
    assert (s.mean_accept_len, s.accepted, s.drafted, s.per_position, s.acceptance_rate,
            s.accepted_tps, s.drafted_tps, s.derived) == (2.84, 1214, 1980, (0.779, 0.612, 0.449),
                                                          pytest.approx(0.613), 121.4, 198.0,
                                                          False)


def test_spec_decoding_metrics_085_format() -> None:
    (s,) = only([P + SPEC_085], SpecStats)
    assert (s.mean_accept_len, s.accepted, s.drafted, s.per_position) == (
        2.71, 4056, 7116, (0.752, 0.553, 0.405))
    assert s.acceptance_rate == pytest.approx(0.57)


def test_spec_decoding_metrics_080_format_derives_mean_when_k_is_known() -> None:
    config = P + ("non-default args: {'model': 'm', 'speculative_config': {'method': 'eagle3', "
                  "'model': 'd', 'num_speculative_tokens': 3}}")
    (s,) = only([config, P + SPEC_080], SpecStats)
    assert s.derived and s.mean_accept_len == pytest.approx(1 + 1214 / (1980 / 3))
    (alone,) = only([P + SPEC_080], SpecStats)
    assert alone.mean_accept_len is None  # k unknown: nothing to derive from


@pytest.mark.parametrize("typo", ["Number of draft tokens", "Number of draft tokens tokens"])
def test_v0_speculative_metrics_derive_the_mean_acceptance_length(typo: str) -> None:
    line = ("INFO 05-01 10:00:00 metrics.py:467] Speculative metrics: Draft acceptance rate: 0.651,"
            f" System efficiency: 0.570, Number of speculative tokens: 5, Number of accepted "
            f"tokens: 2390, {typo}: 3670, Number of emitted tokens: 2760.")
    (s,) = only([line], SpecStats)
    assert s.derived and s.mean_accept_len == pytest.approx(2760 / (3670 / 5))
    assert (s.accepted, s.drafted, s.acceptance_rate) == (2390, 3670, 0.651)


def test_speculative_settings_from_every_source() -> None:
    assert spec_from_text(
        "non-default args: {'model_tag': 'm', 'speculative_config': {'method': 'eagle3', "
        "'model': '/srv/d', 'num_speculative_tokens': 3}}") == {
        "algorithm": "eagle3", "draft_model": "/srv/d", "num_steps": 3, "num_draft_tokens": 3}
    assert spec_from_text(
        "Initializing a V1 LLM engine (v0.11.0) with config: model='m', speculative_config="
        "SpeculativeConfig(method='ngram', model=None, num_spec_tokens=5), tokenizer='m'") == {
        "algorithm": "ngram", "num_steps": 5, "num_draft_tokens": 5}
    assert spec_from_text(
        "vllm serve m --speculative-config '{\"method\": \"eagle\", \"model\": \"yuhuili/EAGLE-"
        "LLaMA3-Instruct-8B\", \"num_speculative_tokens\": 4}'")["algorithm"] == "eagle"
    assert spec_from_text("python -m vllm.entrypoints.openai.api_server --model m "
                          "--speculative-model /d --num-speculative-tokens 5") == {
        "draft_model": "/d", "num_steps": 5, "num_draft_tokens": 5}
    assert spec_from_text("non-default args: {'speculative_config': {broken") == {}


def test_engine_config_line_completes_the_args_line() -> None:
    lines = [P + "non-default args: {'model': 'm', 'speculative_config': {'model': '/d', "
             "'num_speculative_tokens': 3}}",
             E + "Initializing a V1 LLM engine (v0.11.0) with config: model='m', "
             "speculative_config=SpeculativeConfig(method='eagle3', model='/d', "
             "num_spec_tokens=3), tokenizer='m'"]
    spec = only(lines, SpecConfig)[-1]
    assert spec == SpecConfig("eagle3", "/d", 3, None, 3)


STARTUP = [
    (P + "vLLM API server version 0.11.0", Phase.INIT),
    (E + "Starting to load model meta-llama/Llama-3.1-8B-Instruct...", Phase.LOADING_WEIGHTS),
    ("Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:01<00:01,  1.49it/s]",
     Phase.LOADING_WEIGHTS),
    (E + "Loading weights took 2.74 seconds", Phase.WEIGHTS_LOADED),
    (E + "Model loading took 15.8114 GiB and 4.602626 seconds", Phase.WEIGHTS_LOADED),
    (E + "Available KV cache memory: 50.00 GiB", Phase.KV_CACHE),
    (E + "GPU KV cache size: 397,184 tokens", Phase.KV_CACHE),
    (E + "CPU KV cache size: 838,784 tokens, Maximum concurrency for 1,024 tokens per request: "
     "819.12x", Phase.KV_CACHE),
    ("INFO 05-01 10:00:00 executor_base.py:40] # GPU blocks: 24824, # CPU blocks: 2048",
     Phase.KV_CACHE),
    ("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:04<00:00,"
     " 15.72it/s]", Phase.CUDA_GRAPH),
    (E + "Graph capturing finished in 7 secs, took 0.78 GiB", Phase.CUDA_GRAPH),
    (P + "Starting vLLM API server 0 on http://0.0.0.0:8000", Phase.HTTP_SERVER),
    (P + "Starting vLLM server on http://0.0.0.0:8000", Phase.HTTP_SERVER),
    ("(APIServer pid=771412) INFO:     Started server process [771412]", Phase.HTTP_SERVER),
    ("INFO:     Waiting for application startup.", Phase.HTTP_SERVER),
    ("(APIServer pid=771412) INFO:     Application startup complete.", Phase.READY),
]


@pytest.mark.parametrize(("line", "phase"), STARTUP)
def test_startup_milestones(line: str, phase: Phase) -> None:
    events = parse([P + "vLLM API server version 0.11.0", line])
    assert [e.phase for e in events if isinstance(e, PhaseEvent) and e.lineno == 2] == [phase]


def test_graph_capture_progress_keeps_its_label() -> None:
    (prog,) = only([STARTUP[9][0]], Progress)
    assert (prog.what, prog.done, prog.total, prog.label) == (
        "graphs", 67, 67, "mixed prefill-decode, PIECEWISE")


def test_drafter_lines_are_the_draft_role_and_architectures_are_models() -> None:
    lines = [P + "Resolved architecture: LlamaForCausalLM",
             P + "Resolved architecture: LlamaForCausalLMEagle3",
             E + "Starting to load model m...",
             E + "Loading drafter model...",
             E + "Loading weights took 0.14 seconds",
             E + "Available KV cache memory: 50.00 GiB"]
    assert [e.role for e in only(lines, PhaseEvent)] == ["target"] * 3 + ["draft"] * 2 + [
        "target"]
    assert only(lines, ModelInfo) == [ModelInfo("target", "LlamaForCausalLM", 1),
                                      ModelInfo("draft", "LlamaForCausalLMEagle3", 2)]


def test_a_drafter_loading_is_evidence_that_speculation_is_on() -> None:
    """vLLM 0.32's ``Loading drafter model...`` (gpu_model_runner.py): speculation is on even
    where the settings' line is not in view; settings read before or after it are kept."""
    engine = (P + "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
              "80.0 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%")
    st = state([E + "Loading drafter model...", *[engine] * 5])
    assert st.config.spec == SpecConfig()
    assert "no_drafts_verified" in [a.kind for a in st.alerts]
    args = P + "non-default args: {'speculative_config': {'method': 'eagle3', 'model': 'd'}}"
    for lines in ([args, E + "Loading drafter model..."], [E + "Loading drafter model...", args]):
        spec = state(lines).config.spec
        assert spec is not None and (spec.algorithm, spec.draft_model) == ("eagle3", "d")
    assert state([engine] * 5).config.spec is None  # no drafter, no settings: not said


def test_application_startup_complete_is_ready_then_stats_are_serving() -> None:
    st = state([P + "vLLM API server version 0.11.0",
                "INFO:     Application startup complete.",
                P + "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
                "0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%"])
    assert st.startup.phase is Phase.SERVING and st.startup.ready
    assert [m.phase for m in st.startup.phases] == [Phase.INIT, Phase.READY, Phase.SERVING]


def test_startup_complete_followed_by_a_bind_error_was_never_ready() -> None:
    st = state([P + "vLLM API server version 0.5.0",
                "INFO:     Application startup complete.",
                "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', "
                "8000): address already in use"])
    assert not st.startup.ready and st.startup.phase is Phase.HTTP_SERVER
    assert st.startup.crash is not None and st.startup.crash.kind == "port_in_use"
    assert Phase.READY not in [m.phase for m in st.startup.phases]


def test_access_lines_are_access() -> None:
    lines = ['(APIServer pid=771412) INFO:     127.0.0.1:50318 - "POST /v1/chat/completions '
             'HTTP/1.1" 200 OK', 'INFO:     127.0.0.1:45548 - "GET /health HTTP/1.1" 200 OK']
    events = parse(lines)
    assert [e.kind for e in events if isinstance(e, LogLine)] == [LineKind.ACCESS] * 2
    assert [e for e in events if not isinstance(e, LogLine | EngineDetected)] == []
