"""SGLang's own startup timings (its log line, ``/metrics`` gauges, ``/server_info``) and the
steps of its compile phase that print no phase line.

Read from SGLang 0.5.23 (``srt/entrypoints/engine.py`` ``Engine._set_startup_time``,
``srt/observability/metrics_collector.py`` ``emit_startup_time``,
``srt/entrypoints/http_server.py`` ``/server_info``'s ``startup_time``): one dict, measured by
the scheduler (the slowest rank's figure), ``load_weight`` being target + draft, and
``cuda_graph`` a dict of capture seconds per graph family (``prefill``, ``decode``,
``target_verify``, ``draft_prefill``, ``draft_decode``, ``draft_extend``), summed here into the
CUDA-graph phase.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from eagle_tui.model.engines.facets.metrics import Scrape
from eagle_tui.model.engines.facets.startup import SubStepRule, TimingNames, substep, timings
from eagle_tui.model.events import EngineTimings, Event

# SGLang 0.5.23 engine.py: "Engine startup timings (s): load_weight=%.2f, "
# "kv_cache_allocation=%.2f, scheduler_e2e=%.2f, cuda_graph={%s}, tokenizer_e2e=%.2f", the
# braces holding "phase=%.2f" joined by ", "
TIMINGS_TEXT = "Engine startup timings (s):"
GRAPH_OPEN = "cuda_graph={"
GRAPH_GROUP = "cuda_graph."
STARTUP_GAUGE = "sglang:startup_time_seconds"  # {phase}: the four top-level figures
GRAPH_GAUGE = "sglang:startup_cuda_graph_time_seconds"  # {phase}: one per graph family
LABELLED = ((STARTUP_GAUGE, "phase"), (GRAPH_GAUGE, "phase"))
NAMES = TimingNames(phases=(("load_weight", "loading_weights"),
                            ("kv_cache_allocation", "kv_cache")),
                    groups=((GRAPH_GROUP, "cuda_graph"),))
_PAIR = re.compile(r"([A-Za-z_]\w{0,63})=([^,{}\s]{1,64})", re.ASCII)
LINE_CHARS = 4096  # the line is a few hundred characters; the rest of a longer one is not read

# Steps inside compiling (SGLang 0.5.23): DeepGEMM's JIT pre-compile
# (srt/layers/deep_gemm_wrapper/compile_utils.py, its tqdm "DeepGEMM warmup" bar and the PP
# warm-up) and FlashInfer's autotune (srt/model_executor/runner/flashinfer_autotune.py), both
# run by the graph runner before its capture. FlashInfer's own JIT logger is set to ERROR by
# SGLang (srt/utils/common.py): its compiles print nothing to follow.
SUBSTEPS = (
    SubStepRule("Entering DeepGEMM JIT Pre-Compile session", "DeepGEMM JIT"),
    SubStepRule("Try DeepGEMM JIT Compiling for", "DeepGEMM JIT"),
    SubStepRule("DeepGEMM warmup:", "DeepGEMM JIT", bar=True),
    SubStepRule("PP-parallel DeepGEMM warmup done", "DeepGEMM warm-up", finished=True),
    SubStepRule("PP-parallel DeepGEMM warmup start", "DeepGEMM warm-up"),
    SubStepRule("FlashInfer autotune completed", "FlashInfer autotune", finished=True),
    SubStepRule("Running FlashInfer autotune", "FlashInfer autotune"),
)


def _pairs(text: str) -> Iterator[tuple[str, str]]:
    """The line's ``name=value`` pairs, those inside ``cuda_graph={...}`` named
    ``cuda_graph.<family>``."""
    start = text.find(GRAPH_OPEN)
    end = text.find("}", start) if start >= 0 else -1
    if start < 0 or end < 0:
        yield from ((m.group(1), m.group(2)) for m in _PAIR.finditer(text))
        return
    yield from ((m.group(1), m.group(2)) for m in _PAIR.finditer(text, 0, start))
    for m in _PAIR.finditer(text, start + len(GRAPH_OPEN), end):
        yield GRAPH_GROUP + m.group(1), m.group(2)
    yield from ((m.group(1), m.group(2)) for m in _PAIR.finditer(text, end + 1))


def timings_line(msg: str, lineno: int) -> EngineTimings | None:
    """The ``Engine startup timings (s): ...`` line's figures (``None``: not that line)."""
    at = msg.find(TIMINGS_TEXT)
    if at < 0:
        return None
    text = msg[at + len(TIMINGS_TEXT): at + len(TIMINGS_TEXT) + LINE_CHARS]
    return timings("log", _pairs(text), NAMES, lineno)


def startup_events(msg: str, lineno: int, time: str | None) -> list[Event]:
    """What a startup-timings or compile-step line says (``[]``: neither)."""
    found = timings_line(msg, lineno) if TIMINGS_TEXT in msg else substep(msg, SUBSTEPS,
                                                                           lineno, time)
    return [found] if found is not None else []


def from_server_info(data: Mapping[str, object]) -> EngineTimings | None:
    """``/server_info``'s ``startup_time`` dict (``None``: absent or unusable)."""
    raw = data.get("startup_time")
    if not isinstance(raw, dict):
        return None
    graphs = raw.get("cuda_graph")
    pairs: list[tuple[object, object]] = [(k, v) for k, v in raw.items() if k != "cuda_graph"]
    if isinstance(graphs, dict):
        pairs += [(f"{GRAPH_GROUP}{k}" if isinstance(k, str) else k, v)
                  for k, v in list(graphs.items())[:64]]
    return timings("server_info", pairs[:128], NAMES)


def from_scrape(scrape: Scrape) -> EngineTimings | None:
    """The startup gauges of one ``/metrics`` scrape, by their ``phase`` label."""
    top = scrape.labelled.get(STARTUP_GAUGE, {})
    graphs = scrape.labelled.get(GRAPH_GAUGE, {})
    if not top and not graphs:
        return None
    pairs = [*top.items(), *((GRAPH_GROUP + k, v) for k, v in graphs.items())]
    return timings("/metrics", pairs, NAMES)


__all__ = ["LABELLED", "NAMES", "SUBSTEPS", "TIMINGS_TEXT", "from_scrape", "from_server_info",
           "startup_events", "timings_line"]
