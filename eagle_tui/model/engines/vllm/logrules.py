"""How vLLM's log is recognised, read and advised about (its :class:`LogFacet`)."""

from __future__ import annotations

import re

from eagle_tui.model.engines.facets.logs import AlertWording, LogFacet, LogPrefix
from eagle_tui.model.engines.vllm.logs import VllmParser
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


def crash_hint(kind: str, phase: Phase, msg: str, mine: bool) -> str | None:
    """vLLM's fix for a memory crash (its flags); a KV budget error naming
    ``gpu_memory_utilization`` and the refusal of an EAGLE-3 draft as EAGLE-1 are vLLM's,
    whoever's log it is thought to be."""
    if kind == "config_error" and _EAGLE1_OF_EAGLE3.search(msg):
        return _EAGLE1_OF_EAGLE3_HINT
    if kind == "cuda_oom" and mine:
        if "load model" in msg or phase.rank <= Phase.WEIGHTS_LOADED.rank:
            return ("The weights do not fit: raise --tensor-parallel-size, use --quantization, "
                    "or free the GPU (nvidia-smi shows other processes).")
        return ("Lower --gpu-memory-utilization (leave room for activations and CUDA graphs), "
                "--max-num-seqs or --max-num-batched-tokens.")
    if kind == "not_enough_memory" and (mine or "gpu_memory_utilization" in msg):
        return "Raise --gpu-memory-utilization or lower --max-model-len so the KV cache fits."
    return None


LOGS = LogFacet(
    text_markers=_TEXT,
    logger_hints=("vllm",),
    traceback_marker="vllm/",
    prefix=LogPrefix(_PREFIX, "DIWEC", time=2, level=1),
    process=_PROCESS,
    traceback_path=_TRACEBACK,
    access_opener="(",  # its API server's "(APIServer pid=N) " before uvicorn's access lines
    parser=VllmParser,
    ready_at_app_startup=True,  # the engine core is built before the API server's app starts
    crash_hint=crash_hint,
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

__all__ = ["LOGS", "crash_hint"]
