"""Scenarios, simulated models and the launch configuration: pure data, no I/O.

A scenario is what goes right or wrong in one launch (``healthy``, the ``misconfigured`` EAGLE /
EAGLE-3 mix-up, an ``oom`` during CUDA graph capture, ...). The same scenario names exist for both
engines; the timeline modules render each one in that engine's own words. Everything that varies
between runs (rank jitter, which rank fails, accept lengths) comes from one ``random.Random(seed)``
so a scenario is reproducible to the byte for a given seed and start time.

Throughput model (why the numbers are what they are): one verify step of a batch-1 request costs
``VERIFY_STEP_S`` (target verify of 4 tokens plus 3 draft steps: 5/3 of a plain decode step at
the 90 tok/s baseline) and commits ``accept_len`` tokens on average. So tok/s = accept_len × 54:
a healthy EAGLE-3 draft (accept 3.3) gives 175 tok/s, nearly twice the baseline; the
misconfigured launch (accept 1.05) gives 56.7 tok/s, slower than no speculation at all.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

SimEngine = Literal["sglang", "vllm"]
CrashKind = Literal["oom", "nccl", "port"]

# The wordings the simulator prints, per engine; the first is the installed release's (the
# default). SGLang "pre-0.5.23": its ``piecewise_cuda_graph_runner.py`` (read at commit 00381c0)
# that recorded 2026 logs print ("Capture piecewise CUDA graph begin", "Capturing num tokens").
ENGINE_VERSIONS: dict[str, tuple[str, ...]] = {"sglang": ("0.5.23", "pre-0.5.23"),
                                               "vllm": ("0.32",)}

BASELINE_TOK_S = 90.0
VERIFY_STEP_S = 1.05 / 56.7  # seconds per verify step at batch 1 (see module docstring)
BATCH_STEP_COST = 0.06  # each extra running request makes a step this much slower
NUM_SPEC_STEPS = 3  # speculative_num_steps / num_speculative_tokens
NUM_DRAFT_TOKENS = NUM_SPEC_STEPS + 1  # topk=1
GPU_TOTAL_MIB = 143771  # NVIDIA H200, as nvidia-smi reports it
GPU_TOTAL_GIB = 139.80  # as torch reports it ("total capacity of 139.80 GiB")
GPU_NAME = "NVIDIA H200"
IDLE_GIB = 0.6  # reserved by the driver before anything runs
DIST_MEM_GIB = 0.62  # NCCL buffers after torch.distributed init


@dataclass(frozen=True, slots=True)
class ScenarioSpec:
    """One launch story. ``accept_len`` is the range every stats interval stays inside."""

    name: str
    summary: str
    eagle3_algorithm: bool = True  # launched with EAGLE3 (False: the EAGLE mix-up)
    accept_len: tuple[float, float] = (3.0, 3.5)
    crash: CrashKind | None = None
    weight_factor: float = 1.0  # weight loading time relative to a healthy launch
    mem_fraction: float = 0.88
    # SGLang-only stories (a vLLM launch of them is refused): the draft steps an adaptive
    # server moves through (--speculative-adaptive), a DSpark block size, data-parallel
    # attention ranks and the one whose drafts collapse
    adaptive_steps: tuple[int, ...] = ()
    block: int | None = None
    dp_ranks: int = 1
    collapsed_rank: int | None = None

    @property
    def sglang_only(self) -> bool:
        return bool(self.adaptive_steps) or self.block is not None or self.dp_ranks > 1

    @property
    def serves(self) -> bool:
        return self.crash is None


SCENARIOS: dict[str, ScenarioSpec] = {
    s.name: s
    for s in (
        ScenarioSpec("healthy", "EAGLE-3 launched correctly: accept len 3.0-3.5, ~1.9x baseline"),
        ScenarioSpec(
            "misconfigured",
            "EAGLE-3 draft launched as EAGLE: 7168-dim hidden states, accept len ~1.05, "
            "~56.7 tok/s against a 90 tok/s baseline",
            eagle3_algorithm=False,
            accept_len=(1.0, 1.1),
        ),
        ScenarioSpec("oom", "CUDA out of memory while capturing CUDA graphs", crash="oom",
                     mem_fraction=0.95),
        ScenarioSpec("nccl-timeout", "NCCL watchdog timeout during distributed init",
                     crash="nccl"),
        ScenarioSpec("port-in-use", "the HTTP port is taken: bind error", crash="port"),
        ScenarioSpec("slow-start", "weights take minutes to load (progress and ETA)",
                     weight_factor=4.0),
        ScenarioSpec("adaptive", "SGLang --speculative-adaptive: the draft steps follow "
                     "acceptance (3, 5, 7, 5, 3, ...), accept len scales with them",
                     adaptive_steps=(3, 5, 7, 5)),
        ScenarioSpec("dspark", "SGLang DSpark block drafting (block 16): accept len ~10 is "
                     "healthy there", block=16, accept_len=(9.0, 11.0)),
        ScenarioSpec("dp-rank-collapse", "SGLang DP attention over 4 ranks: rank 2's drafts "
                     "collapse while the others stay healthy", dp_ranks=4, collapsed_rank=2),
    )
}


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A target model and the EAGLE-3 draft trained for it, as the sim presents them."""

    path: str
    architecture: str
    hidden_size: int
    num_layers: int
    weights_gib: float  # whole checkpoint; each TP rank holds weights_gib / tp
    shards: int
    kv_bytes_per_token: int  # whole model; MLA caches are replicated, MHA heads split by TP
    mla: bool
    aux_layer_ids: tuple[int, int, int]
    context_len: int
    vocab_size: int
    load_s: float  # weight loading time at speed 1 of a healthy launch

    @property
    def eagle3_dim(self) -> int:
        """Width of the concatenated aux hidden states an EAGLE-3 draft expects."""
        return 3 * self.hidden_size


MODELS: tuple[tuple[int, ModelSpec], ...] = (
    # (minimum TP degree, model): the biggest model that fits the simulated GPUs
    (8, ModelSpec("deepseek-ai/DeepSeek-V3-0324", "DeepseekV3ForCausalLM", 7168, 61, 642.0, 163,
                  61 * 1152, True, (1, 29, 57), 163840, 129280, 96.0)),
    (2, ModelSpec("meta-llama/Llama-3.3-70B-Instruct", "LlamaForCausalLM", 8192, 80, 131.4, 30,
                  80 * 2 * 8 * 128 * 2, False, (2, 39, 76), 131072, 128256, 41.0)),
    (1, ModelSpec("meta-llama/Llama-3.1-8B-Instruct", "LlamaForCausalLM", 4096, 32, 14.96, 4,
                  32 * 2 * 8 * 128 * 2, False, (1, 15, 28), 131072, 128256, 5.0)),
)


def model_for_tp(tp: int) -> ModelSpec:
    for min_tp, model in MODELS:
        if tp >= min_tp:
            return model
    raise ValueError(f"--gpus must be at least 1 (got {tp})")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything about one simulated launch that shows up in its log and on its endpoints."""

    engine: SimEngine
    scenario: ScenarioSpec
    model: ModelSpec
    tp: int
    port: int
    draft_path: str
    seed: int = 0
    t0: float = 0.0  # wall-clock epoch of the launch (log timestamps start here)
    host: str = "127.0.0.1"
    main_pid: int = 1000
    child_pids: tuple[int, ...] = ()  # sglang: schedulers + detokenizer; vllm: core + workers
    dist_timeout_s: int = 120
    stats_interval_s: float = 2.0  # vLLM VLLM_LOG_STATS_INTERVAL (the real kit uses 2)
    decode_log_interval: int = 40  # SGLang --decode-log-interval
    engine_version: str = ""  # whose wording (``ENGINE_VERSIONS``; "": the installed release's)

    @property
    def version(self) -> str:
        return self.engine_version or ENGINE_VERSIONS[self.engine][0]

    @property
    def algorithm(self) -> str:
        """``--speculative-algorithm`` (SGLang) / ``method`` (vLLM) exactly as launched."""
        name = "EAGLE3" if self.scenario.eagle3_algorithm else "EAGLE"
        if self.scenario.block is not None:
            name = "DSPARK"
        return name if self.engine == "sglang" else name.lower()

    @property
    def num_steps(self) -> int:
        """``speculative_num_steps`` at launch (DSpark: 1, one block forward)."""
        if self.scenario.block is not None:
            return 1
        return self.scenario.adaptive_steps[0] if self.scenario.adaptive_steps else NUM_SPEC_STEPS

    @property
    def num_draft_tokens(self) -> int:
        """``speculative_num_draft_tokens`` (topk 1: steps + 1; DSpark: the block + 1)."""
        block = self.scenario.block
        return block + 1 if block is not None else self.num_steps + 1

    @property
    def max_drafts(self) -> int:
        """The most drafts one verify step can accept over the whole run."""
        s = self.scenario
        return s.block or max((*s.adaptive_steps, NUM_SPEC_STEPS))

    @property
    def served_name(self) -> str:
        return self.model.path

    @property
    def hidden_dim(self) -> int:
        """What ``[EAGLE3-DEBUG] hidden_states`` shows: 3 layers concatenated only for EAGLE3."""
        m = self.model
        return m.eagle3_dim if self.scenario.eagle3_algorithm else m.hidden_size

    @property
    def weights_gib(self) -> float:
        """Target weights held by each GPU."""
        return self.model.weights_gib / self.tp

    @property
    def kv_gib(self) -> float:
        """KV pool per GPU: what is left of ``mem_fraction`` of the GPU after the weights."""
        after_weights = GPU_TOTAL_GIB - IDLE_GIB - DIST_MEM_GIB - self.weights_gib
        return max(1.0, after_weights - GPU_TOTAL_GIB * (1.0 - self.scenario.mem_fraction))

    @property
    def kv_tokens(self) -> int:
        per_token = self.model.kv_bytes_per_token
        if not self.model.mla:
            per_token //= min(self.tp, 8)
        return int(self.kv_gib * 2**30 / per_token)

    def pid(self, index: int) -> int:
        """The pid of child ``index`` (rank processes), or a stable stand-in in pure tests."""
        if index < len(self.child_pids):
            return self.child_pids[index]
        return self.main_pid + 100 + index


def make_config(engine: str, scenario: str, *, gpus: int = 8, port: int = 30000,
                draft_path: str = "/tmp/eagle3-draft", seed: int = 0, t0: float = 0.0,
                **extra: Any) -> ServerConfig:
    """Validate user-facing names and build the config (``ValueError`` with a clear message)."""
    if engine not in ("sglang", "vllm"):
        raise ValueError(f"unknown engine {engine!r}: choose sglang or vllm")
    spec = SCENARIOS.get(scenario)
    if spec is None:
        raise ValueError(f"unknown scenario {scenario!r}: choose one of {', '.join(SCENARIOS)}")
    if spec.sglang_only and engine != "sglang":
        raise ValueError(f"the {scenario} scenario is SGLang's (vLLM has no such mode): use "
                         "--engine sglang")
    if not 1 <= gpus <= 64:
        raise ValueError(f"--gpus must be between 1 and 64 (got {gpus})")
    if spec.crash == "nccl" and gpus < 2:
        raise ValueError("the nccl-timeout scenario needs --gpus 2 or more (one rank cannot hang "
                         "a collective)")
    if not 0 <= port <= 65535:
        raise ValueError(f"port out of range: {port}")
    version = extra.get("engine_version") or ""
    if version and version not in ENGINE_VERSIONS[engine]:
        raise ValueError(f"unknown {engine} version {version!r}: choose one of "
                         f"{', '.join(ENGINE_VERSIONS[engine])}")
    sim_engine: SimEngine = "sglang" if engine == "sglang" else "vllm"
    cfg = ServerConfig(sim_engine, spec, model_for_tp(gpus), gpus, port, draft_path, seed, t0)
    return dataclasses.replace(cfg, **extra) if extra else cfg


def draft_config_json(model: ModelSpec) -> dict[str, Any]:
    """The EAGLE-3 draft checkpoint's ``config.json`` (SpecForge layout), so the dashboard's
    draft-config check has a real file to read."""
    return {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": model.hidden_size,
        "intermediate_size": model.hidden_size * 18 // 7,
        "num_attention_heads": model.hidden_size // 128,
        "num_key_value_heads": 8,
        "num_hidden_layers": 1,
        "vocab_size": model.vocab_size,
        "draft_vocab_size": 32000,
        "max_position_embeddings": model.context_len,
        "torch_dtype": "bfloat16",
        "eagle_config": {
            "eagle_aux_hidden_state_layer_ids": list(model.aux_layer_ids),
            "use_aux_hidden_state": True,
        },
    }
