"""Evidence-based phase and engine, for logs that start mid-run.

Logs pasted in engine issues are fragments: a few decode lines, a traceback without the startup
banner. The milestones the parsers look for (``Load weight begin``, ``Capture cuda graph
begin``…) are not there, so the observed phase is ``none`` and the engine ``unknown``, although
the lines say more. These rules read what a fragment still shows: a decode line means serving,
a CUDA-graph capture failure the CUDA-graph phase, a KV-cache sizing error the KV-cache phase,
an NCCL init error init, an address-in-use error the HTTP server, a traceback's frames the
engine (docs/architecture.md, "Module notes", lists each rule's markers).

An inference never overrides what the log says outright: it only raises the phase beyond the
furthest milestone seen, and sets the engine only while it is unknown (an ``EngineDetected``
afterwards replaces it). Each inference carries its reason, which ``report``, the Startup pane
and the headless lines show as "inferred". Pure functions of text and events: the reducer
(:mod:`.state`) applies them, and ``report`` feeds it the lines it needs.
"""

from __future__ import annotations

import re

from eagle_tui.model.engines import profile_of, profiles
from eagle_tui.model.engines.facets.logs import GRAPH_CAPTURE
from eagle_tui.model.events import CrashEvent, Engine, LineKind, Phase
from eagle_tui.model.ingest.framing import SCAN_CHARS
from eagle_tui.model.record import Record, record

# Only these lines can carry traceback evidence (the reducer's cheap filter on the hot path).
EVIDENCE_KINDS = frozenset({LineKind.ERROR, LineKind.TRACEBACK})



def worth_scanning(kind: LineKind, text: str) -> bool:
    """Whether a line may carry traceback evidence: an error or traceback line, or, in a paste
    that starts mid-traceback (no header, so no traceback kind), an indented or frame line."""
    return kind in EVIDENCE_KINDS or text[:1] in (" ", "\t") or 'File "' in text[:SCAN_CHARS]


SERVING_FROM_DECODE = "a decode stats line"
SERVING_FROM_SPEC = "a spec-decoding metrics line"
SERVING_FROM_PREFILL = "a prefill stats line"


@record
class Inferred(Record):
    """A value the log implies but does not state: what, from which line, and why."""

    value: str
    lineno: int
    reason: str


# (phase, pattern, reason): the first that matches a traceback or error line wins
_LINE_RULES: tuple[tuple[Phase, re.Pattern[str], str], ...] = tuple(
    (phase, re.compile(src), reason)
    for phase, src, reason in (
        (Phase.CUDA_GRAPH,
         r"[Cc]apture cuda graph failed|CUDA graph capture failed|stream is capturing"
         r"|cudaErrorStreamCapture|in (?:capture|capture_one_batch_size|_capture_graph"
         r"|capture_model|_capture_cudagraphs|_dummy_run_cudagraph)\b",
         "a CUDA-graph capture failure"),
        (Phase.KV_CACHE,
         r"in (?:profile_max_num_token|init_memory_pool|determine_num_available_blocks"
         r"|_initialize_kv_caches|initialize_kv_cache|determine_available_memory"
         r"|get_kv_cache_configs?|check_enough_kv_cache_memory|_get_kv_cache_config)\b",
         "a KV-cache sizing step in the traceback"),
        (Phase.LOADING_WEIGHTS,
         r"in (?:load_weights|load_model|_load_weights|download_weights_from_hf)\b",
         "weight loading in the traceback"),
        (Phase.INIT,
         r"ncclCommInitRank|in (?:init_distributed_environment|initialize_model_parallel"
         r"|init_process_group|init_torch_distributed|ensure_model_parallel_initialized"
         r"|init_worker_distributed_environment|_create_c10d_store)\b",
         "NCCL / torch.distributed initialisation in the traceback"),
    )
)
_INIT_TEXT = re.compile(
    r"ncclCommInitRank|init_distributed_environment|initialize_model_parallel"
    r"|init_process_group|init_torch_distributed|rendezvous|TCPStore"
    r"|server socket has failed to listen"  # (torch's TCPStore, when its port is taken)
)
_KV_TEXT = re.compile(
    r"KV cache|kv cache|cache blocks|--mem-fraction-static|mem_fraction_static"
    r"|max_total_num_tokens|max-total-tokens|gpu_memory_utilization|max_model_len"
)
_INIT_MEMORY = re.compile(r"Free memory on device|unbalanced")


def engine_in_line(text: str) -> tuple[Engine, str] | None:
    """The engine a traceback or error line's source path names, with the reason (read in its
    first ``SCAN_CHARS``: bounded work on an over-long line)."""
    text = text[:SCAN_CHARS]
    for profile in profiles():
        path = profile.logs.traceback_path
        if path is not None and path.search(text):
            marker = profile.logs.traceback_marker or profile.label
            return profile.name, f"a traceback through {marker}"
    return None


def corrects(inferred: Engine, found: Engine) -> bool:
    """Whether a traceback through ``found``'s code replaces an engine inferred as ``inferred``
    from an earlier one: ``found`` calls into ``inferred``'s code (its ``logs.calls_into``)."""
    profile = profile_of(found)
    return profile is not None and inferred in profile.logs.calls_into


def phase_in_line(text: str) -> tuple[Phase, str] | None:
    """The startup phase a traceback or error line shows the server was in, with the reason."""
    text = text[:SCAN_CHARS]
    for phase, pattern, reason in _LINE_RULES:
        if pattern.search(text):
            return phase, reason
    for profile in profiles():
        for phase, pattern, reason in profile.logs.phase_frames:
            if pattern.search(text):
                return phase, reason
    return None


def phase_of_crash(crash: CrashEvent, engine: Engine = "unknown") -> tuple[Phase, str] | None:
    """The phase a classified crash implies (``None`` when its kind says nothing about it)."""
    msg = crash.message
    kind = crash.kind
    if kind == "port_in_use":
        return _port_phase(msg, engine)
    if kind == "not_enough_memory":
        if _INIT_MEMORY.search(msg):
            return Phase.INIT, "a free-memory check at init"
        if _KV_TEXT.search(msg) or "Not enough memory" in msg or "for the KV cache" in msg:
            return Phase.KV_CACHE, "a KV-cache sizing error"
        return None
    if kind == "cuda_oom" and GRAPH_CAPTURE.search(msg):  # (not PyTorch's "CUDA Graphs" pools)
        return Phase.CUDA_GRAPH, "a CUDA-graph capture failure"
    if kind == "nccl" and _INIT_TEXT.search(msg):
        return Phase.INIT, "an NCCL init error"
    if kind == "model_not_found":
        return Phase.INIT, "a launch error (model not found)"
    # (a rejected argument stops before any init: argparse and the CLI's own checks run first,
    # and a config value refused later follows the init lines that already say init)
    return phase_in_line(msg)  # the exception line may name the step itself


def _port_phase(msg: str, engine: Engine) -> tuple[Phase, str]:
    """Where an address-in-use error happens: uvicorn's bind at the HTTP server, but a current
    vLLM binds its socket before it builds the engine, and SGLang checks its ports at start."""
    if _INIT_TEXT.search(msg):
        return Phase.INIT, "an address-in-use error at the NCCL rendezvous"
    if "is not available in" in msg:
        return Phase.INIT, "a port check at start"
    profile = profile_of(engine)
    if "error while attempting to bind" in msg or profile is None or \
            not profile.logs.binds_port_first:
        return Phase.HTTP_SERVER, "an address-in-use error (the HTTP server binds its port)"
    return Phase.INIT, (f"an address-in-use error ({profile.label} binds its port before the "
                        "engine starts)")


def serving_inferred(phase: Phase) -> bool:
    """Whether entering *serving* from a stats line is an inference: no sign of the server's
    start (the HTTP server, ready) was in the log before it."""
    return phase.rank < Phase.HTTP_SERVER.rank


__all__ = [
    "EVIDENCE_KINDS",
    "SERVING_FROM_DECODE",
    "SERVING_FROM_PREFILL",
    "SERVING_FROM_SPEC",
    "Inferred",
    "corrects",
    "engine_in_line",
    "phase_in_line",
    "phase_of_crash",
    "serving_inferred",
    "worth_scanning",
]
