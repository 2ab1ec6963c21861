"""The fix a crash's hint says: one line per crash kind, tuned by engine, phase and message.

An engine's own wording comes from its profile (``logs.crash_hint``); the texts here are the
fallback, in SGLang's flags: for an engine that gives none, and a log whose engine is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from eagle_tui.model.engines import profile_of, profiles
from eagle_tui.model.events import Phase

_PORT = re.compile(r"(?:port|address|\(['\"][^'\"]*['\"], |:)\s*(\d{2,5})\b")


def _oom_hint(engine: str, phase: Phase, msg: str) -> str:
    if phase is Phase.CUDA_GRAPH or "cuda graph" in msg.lower():
        return ("Lower --mem-fraction-static (e.g. 0.8 → 0.7) or --cuda-graph-max-bs (e.g. 16); "
                "--disable-cuda-graph only as a last resort.")
    if phase.rank <= Phase.WEIGHTS_LOADED.rank:
        return ("The weights do not fit: raise --tp-size, use a quantized checkpoint "
                "(--quantization fp8), or free the GPU (nvidia-smi shows other processes).")
    return ("Lower --mem-fraction-static, --max-running-requests or --chunked-prefill-size so "
            "activations fit next to the KV cache.")


def _nem_first(msg: str) -> str | None:
    """A free-memory check failing is the same fix on every engine (asked before the engine)."""
    if "Free memory on device" in msg or "unbalanced" in msg:
        return ("Other processes hold GPU memory: stop them (nvidia-smi) or lower "
                "--gpu-memory-utilization / --mem-fraction-static below the free fraction.")
    return None


def _nem_hint(engine: str, _phase: Phase, msg: str) -> str:
    return ("Raise --mem-fraction-static (e.g. 0.85) so the KV cache fits after the weights, or "
            "lower --context-length / --max-total-tokens; check nvidia-smi for other processes.")


def _port_hint(_engine: str, _phase: Phase, msg: str) -> str:
    m = _PORT.search(msg)
    port = m.group(1) if m else "<port>"
    return (f"Port {port} is taken: pick another --port, or stop the process holding it "
            f"(ss -ltnp | grep {port}).")


_Hint = Callable[[str, Phase, str], str]


_HINTS: dict[str, _Hint] = {
    "cuda_oom": _oom_hint,
    "not_enough_memory": _nem_hint,
    "port_in_use": _port_hint,
    "nccl": lambda e, p, m: (
        "Check that every GPU is visible and healthy (nvidia-smi, nvidia-smi topo -m); rerun "
        "with NCCL_DEBUG=INFO to see the failing link; on one node try NCCL_P2P_DISABLE=1 or "
        "NCCL_IB_DISABLE=1, and make sure no other job uses these GPUs."),
    "model_not_found": lambda e, p, m: (
        "Check the model path or Hugging Face id (--model-path / --speculative-draft-model-path / "
        "the served model); for gated or private models run `hf auth login`; offline, make sure "
        "the files are in the local cache (HF_HUB_OFFLINE=1)."),
    "watchdog_timeout": lambda e, p, m: (
        "A forward step hung past --watchdog-timeout: read the stack dump above for the stuck "
        "call (often a collective or a deadlocked kernel); raise --watchdog-timeout only if "
        "steps are legitimately that slow."),
    "config_error": lambda e, p, m: (
        "A launch argument or config value was rejected: fix the flag named in the message "
        "(see --help for the allowed values) and relaunch."),
    "engine_dead": lambda e, p, m: (
        "An engine process died: the root cause is usually logged just above; also check "
        "`dmesg -T | grep -i oom` (host OOM killer) and GPU health (nvidia-smi)."),
    "killed": lambda e, p, m: (
        "The process tree was killed. With no error above, suspect the host OOM killer "
        "(`dmesg -T | grep -i oom`): lower host memory use or give the container more RAM."),
    "other_traceback": lambda e, p, m: (
        "An uncaught exception stopped the server: the exception type and message on this line "
        "name the cause; the frames above show where it was raised."),
}


def hint_for(kind: str, engine: str = "unknown", phase: Phase = Phase.NONE,
             message: str = "") -> str:
    """A concrete, one-line fix for a crash kind (tuned by engine, phase and message): the
    engine's own, else one an engine claims by the message's wording, else the fallback."""
    if kind == "not_enough_memory" and (first := _nem_first(message)) is not None:
        return first
    own = profile_of(engine)
    for profile in (own, *profiles()) if own is not None else profiles():
        hint = profile.logs.crash_hint
        if hint is not None:
            text = hint(kind, phase, message, profile is own)
            if text is not None:
                return text
    return _HINTS.get(kind, _HINTS["other_traceback"])(engine, phase, message)


__all__ = ["hint_for"]
