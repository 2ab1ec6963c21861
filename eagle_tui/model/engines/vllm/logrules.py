"""How vLLM's log is recognised, read and advised about (its :class:`LogFacet`)."""

from __future__ import annotations

import re

from eagle_tui.model.engines.facets.logs import (
    AlertWording,
    HintTemplate,
    LogFacet,
    LogPrefix,
    memory_stage,
    render_first,
)
from eagle_tui.model.engines.vllm.logs import VllmParser, method_phase
from eagle_tui.model.engines.vllm.phases import PHASE_FRAMES
from eagle_tui.model.events import Phase

# "INFO 10-30 14:18:55 [file.py:123] msg" (2024: "INFO 05-01 10:00:00 file.py:123] msg")
_PREFIX = re.compile(
    r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d\d-\d\d \d\d:\d\d:\d\d)(?:\.\d+)? "
    r"(?:\[[^\]]*?(?::\d+)?\]|[\w.-]+\.py:\d+\]) ?",
    re.ASCII,
)
_PROCESS = re.compile(r"^(?:APIServer|EngineCore|VllmWorker|Worker|RayWorkerWrapper)")
_TRACEBACK = re.compile(r"[/\\]vllm[/\\][\w/\\]*\.py\b|\bvllm\.(?:v1|engine|entrypoints|worker)\.")
_DEAD = re.compile(
    r"EngineDeadError|EngineCore encountered an issue|Engine core initialization failed"
    r"|Engine process failed to start|AsyncLLM output_handler failed"
    r"|WorkerProc initialization failed|Worker failed with error|MQLLMEngine is already dead"
)
# V1 logs these with the traceback that says why right below them: that traceback is fatal, and
# the line itself is the crash where the traceback is cut
_FATAL_CONTEXT = re.compile(r"(?:EngineCore|WorkerProc) failed to start|output_handler failed")
_TEXT = (
    "vLLM API server version",
    "Initializing a V1 LLM engine",
    "Initializing an LLM engine",
    "SpecDecoding metrics",
    "Avg prompt throughput",
    "Speculative metrics:",
    "vllm serve",
    "EngineCore failed to start",
    "EngineDeadError",
)

# Given "method": "eagle" with an EAGLE-3 draft, vLLM wraps the draft's architecture as an EAGLE-1
# model ("Eagle" + LlamaForCausalLMEagle3) and refuses it at startup (vLLM 0.32, measured).
_EAGLE1_OF_EAGLE3 = re.compile(r"architectures \['Eagle\w*Eagle3\w*'\] are not supported")
_EAGLE1_OF_EAGLE3_HINT = (  # the fix first: a banner cut short must still show it
    'Use "method": "eagle3" in --speculative-config and relaunch: the draft is an EAGLE-3 '
    'checkpoint, and with "method": "eagle" vLLM looks for an EAGLE-1 model of it (Eagle + its '
    "architecture), which does not exist.")


_ALLOC = r"[Tt]ried to allocate (?P<alloc>\d[\d.]* ?[KMGT]i?B)"
_OOM = {  # by memory_stage: what ran out, in vLLM's flags
    "weights": HintTemplate(
        re.compile(_ALLOC),
        "The weights do not fit ({alloc} more was asked for): raise --tensor-parallel-size (or "
        "--pipeline-parallel-size), use a smaller --dtype or --quantization, or free the GPU "
        "(nvidia-smi shows other processes).",
        "The weights do not fit: raise --tensor-parallel-size (or --pipeline-parallel-size), "
        "use a smaller --dtype or --quantization, or free the GPU (nvidia-smi shows other "
        "processes)."),
    "startup": HintTemplate(
        re.compile(_ALLOC),
        "Out of memory while profiling, sizing the KV cache, compiling or capturing CUDA graphs "
        "({alloc} more was asked for): lower --gpu-memory-utilization, --max-num-seqs or "
        "--max-num-batched-tokens, or --max-cudagraph-capture-size; --enforce-eager only as a "
        "last resort.",
        "Out of memory while profiling, sizing the KV cache, compiling or capturing CUDA graphs: "
        "lower --gpu-memory-utilization, --max-num-seqs or --max-num-batched-tokens, or "
        "--max-cudagraph-capture-size; --enforce-eager only as a last resort."),
    "serving": HintTemplate(
        re.compile(_ALLOC),
        "Out of memory while serving ({alloc} more was asked for): lower the batch and context "
        "size (--max-num-seqs, --max-num-batched-tokens, --max-model-len) or "
        "--gpu-memory-utilization to leave activations more room.",
        "Out of memory while serving: lower the batch and context size (--max-num-seqs, "
        "--max-num-batched-tokens, --max-model-len) or --gpu-memory-utilization to leave "
        "activations more room."),
    "unknown": HintTemplate(
        re.compile(_ALLOC),
        "Out of memory ({alloc} more was asked for), in a step the log does not show: while "
        "loading weights raise --tensor-parallel-size or use --quantization; later lower "
        "--gpu-memory-utilization, --max-num-seqs or --max-num-batched-tokens.",
        "Out of memory in a step the log does not show: while loading weights raise "
        "--tensor-parallel-size or use --quantization; later lower --gpu-memory-utilization, "
        "--max-num-seqs or --max-num-batched-tokens."),
}
# The KV budget errors of vLLM's KV sizing (v1/core/kv_cache_utils.py; V0 worker), numbers kept
_KV_FIT = HintTemplate(
    re.compile(r"max seq len \((?P<max_len>\d+)\), \((?P<needed>[\d.]+) GiB KV cache is "
               r"needed, which is larger than the available KV cache memory \((?P<avail>[\d.]+)"
               r" GiB\)\. Based on the available memory, the estimated maximum model length is "
               r"(?P<est>\d+)"),
    "One request of --max-model-len {max_len} needs {needed} GiB of KV cache and {avail} GiB "
    "is available: lower --max-model-len to {est} or less, or raise --gpu-memory-utilization.",
    "One request of the full --max-model-len does not fit in the KV cache: lower "
    "--max-model-len, or raise --gpu-memory-utilization.")
_KV_FIT_NO_ESTIMATE = HintTemplate(
    re.compile(r"max seq len \((?P<max_len>\d+)\), \((?P<needed>[\d.]+) GiB KV cache is "
               r"needed, which is larger than the available KV cache memory \((?P<avail>[\d.]+)"
               r" GiB\)"),
    "One request of --max-model-len {max_len} needs {needed} GiB of KV cache and {avail} GiB "
    "is available: lower --max-model-len, or raise --gpu-memory-utilization.",
    _KV_FIT.bare)
_KV_FIT_V0 = HintTemplate(
    re.compile(r"max seq len \((?P<max_len>\d+)\) is larger than the maximum number of tokens "
               r"that can be stored in KV cache \((?P<tokens>\d+)\)"),
    "The KV cache holds {tokens} tokens, fewer than --max-model-len {max_len}: lower "
    "--max-model-len to {tokens} or less, or raise --gpu-memory-utilization.",
    "The KV cache holds fewer tokens than --max-model-len: lower --max-model-len, or raise "
    "--gpu-memory-utilization.")
_KV_OTHER = HintTemplate(
    None,
    "The KV cache does not fit: raise --gpu-memory-utilization or lower --max-model-len; check "
    "nvidia-smi for other processes.")
_NO_BLOCKS = HintTemplate(
    None,
    "No memory was left for the KV cache after the weights and activations: raise "
    "--gpu-memory-utilization, or lower --max-num-batched-tokens / --max-num-seqs (the profile "
    "run's peak); check nvidia-smi for other processes.")
_FREE = HintTemplate(
    re.compile(r"Free memory on device \S+ \((?P<free>[\d.]+)/(?P<total>[\d.]+) GiB\) on "
               r"startup is less than (?:desired GPU memory utilization|the engine's budget[^(]*)"
               r"\s*\((?P<util>[\d.]+), (?P<want>[\d.]+) GiB\)"),
    "Only {free} of {total} GiB was free at startup and --gpu-memory-utilization {util} asks for "
    "{want} GiB: stop the other processes on the GPU (nvidia-smi) or lower "
    "--gpu-memory-utilization below the free share.",
    "Less GPU memory was free at startup than --gpu-memory-utilization asks for: stop the other "
    "processes on the GPU (nvidia-smi) or lower --gpu-memory-utilization below the free share.")
_EAGLE1 = HintTemplate(None, _EAGLE1_OF_EAGLE3_HINT)
TEMPLATES = (*_OOM.values(), _KV_FIT, _KV_FIT_NO_ESTIMATE, _KV_FIT_V0, _KV_OTHER, _NO_BLOCKS,
             _FREE, _EAGLE1)


def _phase(phase: Phase, msg: str) -> Phase:
    """The crash's phase: the log's, or the worker step the message names, whichever is
    further; a message about loading the model is the weights'."""
    named = method_phase(msg)
    if named is not None and named.rank > phase.rank:
        phase = named
    if "warming up sampler" in msg and phase.rank < Phase.KV_CACHE.rank:
        return Phase.KV_CACHE  # the profile run's sampler warm-up (its own OOM wording)
    if phase is Phase.NONE and "load model" in msg:
        return Phase.LOADING_WEIGHTS
    return phase


def crash_hint(kind: str, phase: Phase, msg: str, mine: bool) -> str | None:
    """vLLM's fix for a memory crash (its flags, by the phase the crash happened in, numbers
    from the message); a KV budget error naming ``gpu_memory_utilization`` and the refusal of
    an EAGLE-3 draft as EAGLE-1 are vLLM's, whoever's log it is thought to be."""
    if kind == "config_error" and _EAGLE1_OF_EAGLE3.search(msg):
        return _EAGLE1.render(msg)
    if kind == "cuda_oom" and (mine or "processing method" in msg
                               or "warming up sampler" in msg):
        return _OOM[memory_stage(_phase(phase, msg))].render(msg)
    if kind == "not_enough_memory" and (mine or "gpu_memory_utilization" in msg
                                        or "Free memory on device" in msg):
        if "Free memory on device" in msg:
            return _FREE.render(msg)
        if "No available memory for the cache blocks" in msg:
            return _NO_BLOCKS.render(msg)
        if "KV cache is needed" in msg:
            return render_first((_KV_FIT, _KV_FIT_NO_ESTIMATE), msg)
        if "stored in KV cache" in msg:
            return _KV_FIT_V0.render(msg)
        return _KV_OTHER.render(msg)
    return None


LOGS = LogFacet(
    text_markers=_TEXT,
    logger_hints=("vllm",),
    traceback_marker="vllm/",
    prefix=LogPrefix(_PREFIX, "DIWEC", time=2, level=1),
    process=_PROCESS,
    traceback_path=_TRACEBACK,
    phase_frames=PHASE_FRAMES,
    access_opener="(",  # its API server's "(APIServer pid=N) " before uvicorn's access lines
    parser=VllmParser,
    run_first=("vLLM API server version", "non-default args:"),  # the API server's, once
    ready_at_app_startup=True,  # the engine core is built before the API server's app starts
    crash_hint=crash_hint,
    hint_templates=TEMPLATES,
    dead=_DEAD,
    record_start=r"(?:\((?:APIServer|EngineCore|VllmWorker|Worker|RayWorkerWrapper)[^()\n]{0,60}"
    r" pid=\d+[^()\n]{0,40}\) )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d",
    # behind anything but a line's start or the process tag (or docker stamp) of its own line
    record_glue=r"\((?<=[^\n]\()(?:APIServer|EngineCore|VllmWorker|Worker|RayWorkerWrapper)"
    r"[^()\n]{0,60} pid=\d+[^()\n]{0,40}\) (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d "
    r"|(?:" + "|".join(rf"{w}(?<=[^\n]{w})(?<!\) {w})(?<![\dZ] {w})"
                       for w in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
    + r") \d\d-\d\d \d\d:\d\d:\d\d",
    record_markers=(b"INFO ", b"ERROR "),  # (the levels a glued record nearly always has)
    fatal_context=_FATAL_CONTEXT,
    binds_port_first=True,  # a current vLLM binds its API socket before it builds the engine
    eagle3_as_eagle_refused=True,  # measured on vLLM 0.32: refused at startup, not degraded
    wording=AlertWording(
        algorithm_flag='the "method" in --speculative-config',
        eagle3_fix=("Relaunch with --speculative-config '{\"method\": \"eagle3\", \"model\": ...}' "
                    "(\"eagle3\", not \"eagle\")."),
        eagle_not_eagle3='--speculative-config \'{"method": "eagle"}\' instead of "eagle3"',
        runs_method='"method": "{algo}" in --speculative-config',
    ),
)

__all__ = ["LOGS", "TEMPLATES", "crash_hint"]
