"""The fix a crash's hint says: one line per crash kind, tuned by engine, phase and message.

An engine's own wording comes from its profile (``logs.crash_hint``, in its flags, by the phase
the crash happened in): the log's engine first, then any engine that claims the message by its
wording. The texts here are the fallback, for a message no engine claims and a log whose engine
is unknown; they name each engine's spelling of a setting. Every hint is a
:class:`~eagle_tui.model.engines.facets.logs.HintTemplate`: a number in a hint is one the log
printed, or the hint gives none.
"""

from __future__ import annotations

import re

from eagle_tui.model.engines import profile_of, profiles
from eagle_tui.model.engines.facets.logs import GRAPH_CAPTURE, HintTemplate, memory_stage
from eagle_tui.model.events import Phase

# "port 30000", "port: 29500", "('0.0.0.0', 30000)", "0.0.0.0:8000", "[::]:8000" (a clock's
# "08:32:29" is not a host and port)
_PORT = re.compile(
    r"(?:\b[Pp]ort\b\D{0,12}?|\(['\"][^'\"]{0,256}['\"], |(?:\]|(?<![\w.:-])(?:\d{1,3}"
    r"(?:\.\d{1,3}){3}|[a-z][\w.-]{0,253})):)(?P<port>\d{2,5})\b(?!:)")
_ALLOC = re.compile(r"[Tt]ried to allocate (?P<alloc>\d[\d.]* ?[KMGT]i?B)")
_KV_SHARE = "--mem-fraction-static / --gpu-memory-utilization"
_OOM = {
    "weights": HintTemplate(
        _ALLOC,
        "The weights do not fit ({alloc} more was asked for): more tensor parallelism "
        "(--tp-size / --tensor-parallel-size), a smaller --dtype or --quantization, or free the "
        "GPU (nvidia-smi shows other processes).",
        "The weights do not fit: more tensor parallelism (--tp-size / --tensor-parallel-size), "
        "a smaller --dtype or --quantization, or free the GPU (nvidia-smi shows other "
        "processes)."),
    "startup": HintTemplate(
        _ALLOC,
        "Out of memory while profiling, sizing the KV cache, capturing CUDA graphs or warming up "
        f"({{alloc}} more was asked for): lower the KV share ({_KV_SHARE}), the concurrent "
        "sequences (--max-running-requests / --max-num-seqs) or the CUDA-graph batch sizes "
        "(--cuda-graph-max-bs-decode / --max-cudagraph-capture-size).",
        "Out of memory while profiling, sizing the KV cache, capturing CUDA graphs or warming "
        f"up: lower the KV share ({_KV_SHARE}), the concurrent sequences "
        "(--max-running-requests / --max-num-seqs) or the CUDA-graph batch sizes "
        "(--cuda-graph-max-bs-decode / --max-cudagraph-capture-size)."),
    "serving": HintTemplate(
        _ALLOC,
        "Out of memory while serving ({alloc} more was asked for): lower the batch and context "
        "size (--max-running-requests / --max-num-seqs, --context-length / --max-model-len) or "
        f"the KV share ({_KV_SHARE}).",
        "Out of memory while serving: lower the batch and context size (--max-running-requests "
        f"/ --max-num-seqs, --context-length / --max-model-len) or the KV share ({_KV_SHARE})."),
    "unknown": HintTemplate(
        _ALLOC,
        "Out of memory ({alloc} more was asked for), in a step the log does not show: while "
        "loading weights use more tensor parallelism or --quantization; later lower the KV "
        f"share ({_KV_SHARE}) or the concurrent sequences.",
        "Out of memory in a step the log does not show: while loading weights use more tensor "
        f"parallelism or --quantization; later lower the KV share ({_KV_SHARE}) or the "
        "concurrent sequences."),
}
_FREE = HintTemplate(
    None, "Other processes hold GPU memory: stop them (nvidia-smi) or lower "
    f"{_KV_SHARE} below the free fraction.")
_NEM = HintTemplate(
    None, f"The KV cache does not fit after the weights: raise the KV share ({_KV_SHARE}) or "
    "lower the context length (--context-length / --max-model-len); check nvidia-smi for other "
    "processes.")
_PORT_HINT = HintTemplate(
    _PORT,
    "Port {port} is taken: pick another --port, or stop the process holding it "
    "(ss -ltnp | grep {port}).",
    "A port is taken (the message does not say which): pick another --port, or stop the process "
    "holding it (ss -ltnp).")


def _fixed(text: str) -> HintTemplate:
    return HintTemplate(None, text)


_FIXED: dict[str, HintTemplate] = {
    "nccl": _fixed(
        "Check that every GPU is visible and healthy (nvidia-smi, nvidia-smi topo -m); rerun "
        "with NCCL_DEBUG=INFO to see the failing link; on one node try NCCL_P2P_DISABLE=1 or "
        "NCCL_IB_DISABLE=1, and make sure no other job uses these GPUs."),
    "model_not_found": _fixed(
        "Check the model path or Hugging Face id (--model-path / --speculative-draft-model-path / "
        "the served model); for gated or private models run `hf auth login`; offline, make sure "
        "the files are in the local cache (HF_HUB_OFFLINE=1)."),
    "watchdog_timeout": _fixed(
        "A forward step hung past --watchdog-timeout: read the stack dump above for the stuck "
        "call (often a collective or a deadlocked kernel); raise --watchdog-timeout only if "
        "steps are legitimately that slow."),
    "config_error": _fixed(
        "A launch argument or config value was rejected: fix the flag named in the message "
        "(see --help for the allowed values) and relaunch."),
    "engine_dead": _fixed(
        "An engine process died: the root cause is usually logged just above; also check "
        "`dmesg -T | grep -i oom` (host OOM killer) and GPU health (nvidia-smi)."),
    "killed": _fixed(
        "The process tree was killed. With no error above, suspect the host OOM killer "
        "(`dmesg -T | grep -i oom`): lower host memory use or give the container more RAM."),
    "crash_loop": _fixed(
        "The container's engine restarts the server after each exit (its restart policy): the "
        "cause is in the log before each restart (`docker logs NAME`); fix it and relaunch, or "
        "end the loop with `docker stop NAME` (a container stopped by hand is not restarted)."),
    "other_traceback": _fixed(
        "An uncaught exception stopped the server: the exception type and message on this line "
        "name the cause; the frames above show where it was raised."),
}
# every template this module fills (the placeholder test walks these and each engine's)
TEMPLATES = (*_OOM.values(), _FREE, _NEM, _PORT_HINT, *_FIXED.values())


def _generic(kind: str, phase: Phase, msg: str) -> str:
    if kind == "cuda_oom":
        if GRAPH_CAPTURE.search(msg) and phase.rank < Phase.CUDA_GRAPH.rank:
            phase = Phase.CUDA_GRAPH
        return _OOM[memory_stage(phase)].render(msg)
    if kind == "not_enough_memory":
        free = "Free memory on device" in msg or "unbalanced" in msg
        return (_FREE if free else _NEM).render(msg)
    if kind == "port_in_use":
        return _PORT_HINT.render(msg)
    return _FIXED.get(kind, _FIXED["other_traceback"]).render(msg)


def hint_for(kind: str, engine: str = "unknown", phase: Phase = Phase.NONE,
             message: str = "") -> str:
    """A concrete, one-line fix for a crash kind (tuned by engine, phase and message): the
    engine's own, else one an engine claims by the message's wording, else the fallback."""
    own = profile_of(engine)
    for profile in (own, *profiles()) if own is not None else profiles():
        hint = profile.logs.crash_hint
        if hint is not None:
            text = hint(kind, phase, message, profile is own)
            if text is not None:
                return text
    return _generic(kind, phase, message)


__all__ = ["TEMPLATES", "hint_for"]
