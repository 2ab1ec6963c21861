"""How SGLang's log is recognised, read and advised about (its :class:`LogFacet`)."""

from __future__ import annotations

import re

from eagle_tui.model.engines.facets.logs import (
    GRAPH_CAPTURE,
    HintTemplate,
    LogFacet,
    LogPrefix,
    memory_stage,
)
from eagle_tui.model.engines.sglang.logs import SERVER_ARGS, SglangParser
from eagle_tui.model.engines.sglang.phases import PHASE_FRAMES
from eagle_tui.model.events import Phase

# "[2025-11-06 01:22:10 TP0] msg": no level, rank tags optional, the date too in some builds.
_PREFIX = re.compile(
    r"\[(?:(\d{4}-\d\d-\d\d) )?(\d\d:\d\d:\d\d)((?: [A-Z][A-Z_]*\d+)*)\] ?", re.ASCII
)
_PROCESS = re.compile(r"sglang", re.ASCII | re.IGNORECASE)  # (searched)
_TRACEBACK = re.compile(r"[/\\]sglang[/\\]srt[/\\]|\bsglang\.srt\.")
_DEAD = re.compile(r"scheduler is dead|crashed with exit code"
                   r"|Initialization failed\. Please see the error messages above")
_FATAL_CONTEXT = re.compile(r"hit an exception|Exception in ModelTpServer"
                            r"|Initialization failed\. warmup error")
_TEXT = (
    "server_args=ServerArgs(",
    "server_args={'",  # SGLang 0.5.x logs the dict form
    "The server is fired up and ready to roll",
    "Decode batch",
    "Prefill batch",
    "sglang.launch_server",
    "Scheduler hit an exception",
    "scheduler died during initialization",
    "scheduler is dead. Please check",
)

_ALLOC = r"[Tt]ried to allocate (?P<alloc>\d[\d.]* ?[KMGT]i?B)"
_GRAPH_BS = "--cuda-graph-max-bs-decode"  # (0.5.23: the decode and prefill graphs have one each)


def _oom(what: str, fix: str) -> HintTemplate:
    return HintTemplate(re.compile(_ALLOC), f"{what} ({{alloc}} more was asked for): {fix}",
                        f"{what}: {fix}")


_OOM = {  # by memory_stage: what ran out, in SGLang's flags
    "weights": _oom("The weights do not fit",
                    "raise --tp-size, use a smaller --dtype or --quantization, or free the GPU "
                    "(nvidia-smi shows other processes)."),
    "startup": _oom("Out of memory while sizing the KV cache, capturing CUDA graphs or warming up",
                    "lower --mem-fraction-static (more room for activations and graphs), "
                    f"{_GRAPH_BS} or --max-running-requests; --disable-cuda-graph only as a last "
                    "resort."),
    "serving": _oom("Out of memory while serving",
                    "lower the batch and context size (--max-running-requests, "
                    "--chunked-prefill-size, --context-length) or --mem-fraction-static to leave "
                    "activations more room."),
    "unknown": _oom("Out of memory in a step the log does not show",
                    "while loading weights raise --tp-size or use --quantization; later lower "
                    f"--mem-fraction-static, {_GRAPH_BS} or --max-running-requests."),
}
# SGLang 0.5.23's KV sizing errors (model_executor/pool_configurator.py), numbers kept
_NOT_ENOUGH = HintTemplate(
    re.compile(r"Not enough memory\. Please try to increase --mem-fraction-static\.(?: Current "
               r"value: mem_fraction_static=(?P<fraction>\d[\d.]*))?"),
    "The KV cache got no room after the weights at --mem-fraction-static {fraction}: raise it, "
    f"or lower --context-length / --max-running-requests / {_GRAPH_BS}; check nvidia-smi for "
    "other processes.",
    "The KV cache got no room after the weights: raise --mem-fraction-static, or lower "
    f"--context-length / --max-running-requests / {_GRAPH_BS}; check nvidia-smi for other "
    "processes.")
# The same check in SGLang's KV configurator (0.5.23 ``mem_cache/kv_cache_configurator.py``,
# ``model_runner_kv_cache_mixin.py`` before it): "Loaded weights leave no GPU memory for the KV
# cache under --mem-fraction-static={x}. Raise --mem-fraction-static above {y:.3f} (minimum
# viable = 1 - available/pre = {z:.4f}). If using speculative decoding, draft weights are now
# counted."
_NO_KV_ROOM = HintTemplate(
    re.compile(r"leave no GPU memory for the KV cache under --mem-fraction-static="
               r"(?P<fraction>\d{1,6}(?:\.\d{1,12})?)\. Raise --mem-fraction-static above "
               r"(?P<above>\d{1,6}(?:\.\d{1,12})?)"),
    "The loaded weights leave the KV cache no room at --mem-fraction-static {fraction}: raise it "
    "above {above} (SGLang's own figure; draft weights count too), or use more tensor "
    "parallelism or --quantization; check nvidia-smi for other processes.",
    "The loaded weights leave the KV cache no room: raise --mem-fraction-static (SGLang prints "
    "the least that fits; draft weights count too), or use more tensor parallelism or "
    "--quantization; check nvidia-smi for other processes.")
_SWA = HintTemplate(
    re.compile(r"SWA pool cap \((?P<swa>\d+) tokens, (?P<swa_gib>[\d.]+ GiB|[\d.]+ GB)\) leaves "
               r"no room for the full KV pool within the available (?P<avail>[\d.]+ GiB|[\d.]+ "
               r"GB)"),
    "The sliding-window pool ({swa} tokens, {swa_gib}) leaves no room for the full KV pool "
    "in the {avail} available: lower --max-running-requests or raise --mem-fraction-static.",
    "The sliding-window pool leaves no room for the full KV pool: lower "
    "--max-running-requests or raise --mem-fraction-static.")
_SWA_FLOOR = HintTemplate(
    re.compile(r"SWA pool \((?P<swa>\d+) tokens\) cannot hold even one request: the prefill "
               r"admission floor is sliding_window_size \((?P<window>\d+)\) \+ page_size "
               r"\((?P<page>\d+)\)"),
    "The sliding-window pool ({swa} tokens) cannot hold one request (window {window} + page "
    "{page}): raise --swa-full-tokens-ratio or the KV budget (--mem-fraction-static).",
    "The sliding-window pool cannot hold one request: raise --swa-full-tokens-ratio or the KV "
    "budget (--mem-fraction-static).")
_REQ_SLOTS = HintTemplate(
    re.compile(r"alloc_req_slots runs out of memory.{0,200}?available_size\(\)=(?P<free>\d+), "
               r"num_reqs=(?P<reqs>\d+)"),
    "The request-slot pool ran out ({free} free for {reqs} requests): lower "
    "--max-running-requests (or raise --mem-fraction-static).",
    "The request-slot pool ran out: lower --max-running-requests (or raise "
    "--mem-fraction-static).")
TEMPLATES = (*_OOM.values(), _NOT_ENOUGH, _NO_KV_ROOM, _SWA, _SWA_FLOOR, _REQ_SLOTS)


def crash_hint(kind: str, phase: Phase, msg: str, mine: bool) -> str | None:
    """SGLang's fix for a memory crash (its flags, by the phase the crash happened in, numbers
    from the message); its KV sizing errors are claimed by their wording whoever's log it is."""
    if "alloc_req_slots runs out of memory" in msg:
        return _REQ_SLOTS.render(msg)
    if "SWA pool cap" in msg:
        return _SWA.render(msg)
    if "cannot hold even one request" in msg:
        return _SWA_FLOOR.render(msg)
    if "leave no GPU memory for the KV cache" in msg:
        return _NO_KV_ROOM.render(msg)
    if kind == "not_enough_memory" and ("mem-fraction-static" in msg or "mem_fraction_static"
                                        in msg or (mine and "Not enough memory" in msg)):
        return _NOT_ENOUGH.render(msg)
    if kind == "cuda_oom" and mine:
        if GRAPH_CAPTURE.search(msg) and phase.rank < Phase.CUDA_GRAPH.rank:
            phase = Phase.CUDA_GRAPH
        return _OOM[memory_stage(phase)].render(msg)
    return None


LOGS = LogFacet(
    text_markers=_TEXT,
    logger_hints=("sglang",),
    traceback_marker="sglang/srt/",
    prefix=LogPrefix(_PREFIX, "[", time=2, date=1, uvicorn_after=True),
    logger_starts=("sgl",),
    process=_PROCESS,
    traceback_path=_TRACEBACK,
    phase_frames=PHASE_FRAMES,
    calls_into=("vllm",),  # old builds import vllm/distributed
    bulk_stats=True,  # the Decode batch / Prefill batch lines are its scheduler's
    access_opener="[",  # it logs uvicorn's access lines behind its own stamp
    parser=SglangParser,
    run_first=(SERVER_ARGS,),  # the launcher's ``server_args=`` line
    crash_hint=crash_hint,
    hint_templates=TEMPLATES,
    dead=_DEAD,
    record_start=r"\[20\d\d-\d\d-\d\d \d\d:\d\d:\d\d(?: [A-Z][A-Z_]*\d+)*\] ",
    record_glue=r"\[20(?<=[^\n]\[20)\d\d-\d\d-\d\d \d\d:\d\d:\d\d(?: [A-Z][A-Z_]*\d+)*\] ",
    record_markers=(b"[202",),  # (not "[20": torch.Size([2048, ...]) in debug prints)
    fatal_context=_FATAL_CONTEXT,
    default_watchdog_s=300.0,
    watchdog_flag="--watchdog-timeout",
)

__all__ = ["LOGS", "TEMPLATES", "crash_hint"]
