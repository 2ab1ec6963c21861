"""vLLM log lines → events (V1 engine, and the V0 formats still found in older logs).

Messages arrive without the ``(Proc pid=N) LEVEL MM-DD HH:MM:SS [file.py:N]`` prefix. Stats are
read by field name: the ``Engine 000:`` / ``N Engines Aggregated:`` line gained optional parts
over releases (``Preemptions``, ``Deferred``, ``Corrupted``, cache hit rates), and the
``SpecDecoding metrics:`` line exists in three formats, one of which prints no mean acceptance
length — it is derived there as ``1 + accepted / (drafted / k)`` when the
speculative settings gave ``k``. The V0 ``Speculative metrics:`` line derives it as
``emitted / (draft tokens / k)`` with the ``k`` it prints itself.

``Per-position acceptance rate`` joins its values with the same ``", "`` as the fields, so it is
cut out (up to ``, Avg Draft``) before the rest is split.
"""

from __future__ import annotations

import ast
import re

from eagle_tui.model.boundary.loaders import MAX_DEPTH, LoadError, load_json, nesting_depth
from eagle_tui.model.engines.vllm.hold import read_line
from eagle_tui.model.engines.vllm.startup import GATES as STARTUP_GATES
from eagle_tui.model.engines.vllm.startup import startup_events
from eagle_tui.model.events import (
    DecodeStats,
    Event,
    LineKind,
    ModelInfo,
    Phase,
    PhaseEvent,
    Progress,
    SpecConfig,
    SpecStats,
)
from eagle_tui.model.ingest.classify import small_int
from eagle_tui.model.ingest.msgfields import MAX_MODELS, SpecFields, fields
from eagle_tui.model.ingest.tqdmbar import last_bar
from eagle_tui.model.numbers import strict_float

# Every weight loader's tqdm bar says "load" (0.32 ``model_loader/weight_utils.py``: the
# safetensors one, " (eager)" under --safetensors-load-strategy eager, pt, np_cache,
# "Multi-thread loading shards", InstantTensor, the Run:ai streamer); the streaming ones count
# tensors, not shards. (``ingest.tqdmbar`` reads the bar.)
LOADER_DESC = re.compile(r"\b[Ll]oad(?:ing)?\b")
TENSOR_DESC = re.compile(r"Runai Model Streamer|InstantTensor")
_GRAPHS = re.compile(r"Capturing (?:CUDA graphs?|cudagraphs?)(?: shapes)?(?: \(([^)]*)\))?"
                     r"(?::\s*\d+%\|[^|]*\| (\d+)/(\d+))?")
_ARCH = re.compile(r"Resolved architecture: ([\w.]+)")
_DRAFT_ARCH = re.compile(r"Eagle|EAGLE|MTP|NextN|Draft|Medusa|Speculator|Mlp", re.ASCII)
_PER_POS = re.compile(r"Per-position acceptance rate: (.*?)(?=, Avg Draft acceptance rate|$)")
_REPR = {
    "algorithm": re.compile(r"\bmethod=['\"]?([\w-]+)"),
    "draft_model": re.compile(r"\b(?:model|draft_model)=(?:'([^']*)'|\"([^\"]*)\")"),
    "k": re.compile(r"\bnum_spec(?:ulative)?_tokens=(\d+)"),
}
_V0_KEYS = {
    "Number of speculative tokens": "k",
    "Number of accepted tokens": "accepted",
    "Number of draft tokens": "drafted",
    "Number of draft tokens tokens": "drafted",
    "Number of emitted tokens": "emitted",
}
_CLI_JSON = re.compile(r"--speculative[-_]config[= ]+'(\{.*?\})'")
_CLI_V0 = {
    "draft_model": re.compile(r"--speculative[-_]model[= ](\S+)"),
    "k": re.compile(r"--num[-_]speculative[-_]tokens[= ](\d+)"),
}
# The phase tables. A fragment that starts mid-way is in the phase of its furthest line (the
# ones before it are implied): the distributed setup is init (not the platform line, printed on
# import, before an argument error too); memory profiling and KV sizing
# (and the V0 profiling summary's continuation lines) the KV cache; torch.compile (which runs
# inside the profile run) and graph capture the CUDA-graph phase.
_INIT_TEXT = ("vLLM API server version", "non-default args:", "Initializing a V1 LLM engine",
              "Initializing an LLM engine", "Resolved architecture", "vLLM is using nccl==",
              "Found nccl from library", "distributed_init_method=",
              "message queue communication handle")
_LOAD_TEXT = ("Starting to load model", "Loading model from scratch", "Using model weights format")
_LOADED_TEXT = ("Loading weights took", "Model loading took", "Loading model weights took")
_KV_TEXT = ("Available KV cache memory", "KV cache size:", "# GPU blocks:",
            "Maximum concurrency for", "drafter KV cache initialized", "GiB for KV cache",
            "Memory profiling takes", "model weights take", "the current vLLM instance can use",
            "when warming up sampler")  # (the profile run's sampler warm-up, in its OOM's words)
_GRAPH_TEXT = ("Graph capturing finished", "CUDA graph pool memory",
               "Capturing the model for CUDA graphs", "torch.compile takes", "torch.compile took",
               "Compiling a graph for", "Dynamo bytecode transform time",
               "Directly load the compiled graph", "Cache the graph of compile range")
# A worker's failure names the step it was in ("Exception in worker VllmWorkerProcess while
# processing method determine_num_available_blocks"): the phase of that step.
_METHOD = re.compile(r"while processing method (\w+)")
METHOD_PHASES = {
    "init_device": Phase.INIT, "init_worker": Phase.INIT,
    "init_worker_distributed_environment": Phase.INIT,
    "load_model": Phase.LOADING_WEIGHTS,
    "determine_num_available_blocks": Phase.KV_CACHE,
    "determine_available_memory": Phase.KV_CACHE, "profile_run": Phase.KV_CACHE,
    "initialize_cache": Phase.KV_CACHE, "initialize_from_config": Phase.KV_CACHE,
    "initialize_kv_cache": Phase.KV_CACHE, "get_kv_cache_spec": Phase.KV_CACHE,
    "compile_or_warm_up_model": Phase.CUDA_GRAPH, "capture_model": Phase.CUDA_GRAPH,
}


def method_phase(msg: str) -> Phase | None:
    """The phase of the worker step a failure names (``None``: it names none we know)."""
    m = _METHOD.search(msg) if "processing method" in msg else None
    return METHOD_PHASES.get(m.group(1)) if m is not None else None
_HTTP_TEXT = ("Starting vLLM API server", "Starting vLLM server on", "Available routes are")
_REQUEST_TEXT = ("Received request ", "Added request ")  # (request logging on): serving


def _first_float(value: str | None) -> float | None:
    if not value:
        return None
    token = value.strip().split(" ", 1)[0].removesuffix("%").removesuffix(".")
    return strict_float(token)  # whole and finite: "1_0", "1e999", "0x10" are not numbers


def _k(digits: str) -> int | None:
    """The speculative ``k`` (None, which the merge ignores, for a number too long to be one)."""
    return small_int(digits)


def _first_int(value: str | None) -> int | None:
    x = _first_float(value)
    return int(x) if x is not None else None


def _percent(value: str | None) -> float | None:
    x = _first_float(value)
    return x / 100.0 if x is not None else None


def _balanced(text: str, start: int) -> str | None:
    """The ``{...}`` starting at ``text[start]`` (quotes respected), or ``None``."""
    depth, quote = 0, ""
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def _from_mapping(d: dict[object, object]) -> dict[str, object]:
    found: dict[str, object] = {}
    method, model, k = d.get("method"), d.get("model"), d.get("num_speculative_tokens")
    if isinstance(method, str):
        found["algorithm"] = method
    if isinstance(model, str):
        found["draft_model"] = model
    if isinstance(k, int):
        found["k"] = k
    return found


def spec_from_text(msg: str) -> dict[str, object]:
    """Speculative settings from any vLLM line that carries them (args, config repr, CLI)."""
    found: dict[str, object] = {}
    i = msg.find("'speculative_config': {")
    if i >= 0:
        block = _balanced(msg, msg.index("{", i))
        if block and nesting_depth(block) <= MAX_DEPTH:  # (the JSON loader's bound, too)
            try:
                value = ast.literal_eval(block)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                value = None
            if isinstance(value, dict):
                found.update(_from_mapping(value))
    m = _CLI_JSON.search(msg)
    if m is not None:
        try:
            value = load_json(m.group(1), "--speculative-config")
        except LoadError:
            value = None
        if isinstance(value, dict):
            found.update(_from_mapping(value))
    i = msg.find("SpeculativeConfig(")
    if i >= 0:
        body = msg[i : i + 2000]
        for key, pattern in _REPR.items():
            r = pattern.search(body)
            if r is not None:
                v = next(g for g in r.groups() if g is not None) if r.lastindex else None
                if v is not None and v != "None":
                    found[key] = _k(v) if key == "k" else v
    for key, pattern in _CLI_V0.items():
        r = pattern.search(msg)
        if r is not None:
            found[key] = _k(r.group(1)) if key == "k" else r.group(1).strip("'\"")
    for key, src in (("draft_model", r"'speculative_model': '([^']+)'"),
                     ("k", r"'num_speculative_tokens': (\d+)")):
        r = re.search(src, msg)
        if r is not None and key not in found:
            found[key] = _k(r.group(1)) if key == "k" else r.group(1)
    if "k" in found:
        found["num_steps"] = found["num_draft_tokens"] = found.pop("k")
    return found


def engine_stats(msg: str, lineno: int, time: str | None) -> DecodeStats:
    body = msg.split("Aggregated: ", 1)[-1] if "Aggregated: " in msg else msg
    if "Engine " in body and ": Avg" in body:
        body = body[body.index(": Avg") + 2 :]
    f = fields(body.rstrip("."))
    kv = f.get("GPU KV cache usage") or f.get("KV cache usage") or f.get("CPU KV cache usage")
    return DecodeStats(
        lineno=lineno,
        time=time,
        gen_tps=_first_float(f.get("Avg generation throughput")),
        prompt_tps=_first_float(f.get("Avg prompt throughput")),
        running=_first_int(f.get("Running")),
        queued=_first_int(f.get("Waiting") or f.get("Pending")),
        kv_usage=_percent(kv),
    )


def spec_stats(msg: str, lineno: int, time: str | None, k: int | None) -> SpecStats:
    per: tuple[float, ...] = ()
    m = _PER_POS.search(msg)
    if m is not None:
        vals = [_first_float(v) for v in m.group(1).split(",")]
        per = tuple(v for v in vals if v is not None)
        msg = msg[: m.start()] + msg[m.end() :]
    body = msg.split("metrics:", 1)[-1]
    f = fields(body)
    mean = _first_float(f.get("Mean acceptance length"))
    accepted = _first_int(f.get("Accepted"))
    drafted = _first_int(f.get("Drafted"))
    rate = _percent(f.get("Avg Draft acceptance rate") or f.get("Draft acceptance rate"))
    derived = False
    if mean is None and accepted is not None and drafted and k:
        mean, derived = 1.0 + accepted / (drafted / k), True
    return SpecStats(
        lineno=lineno, time=time, mean_accept_len=mean, accepted=accepted, drafted=drafted,
        per_position=per, acceptance_rate=rate,
        accepted_tps=_first_float(f.get("Accepted throughput")),
        drafted_tps=_first_float(f.get("Drafted throughput")), derived=derived,
    )


def v0_spec_stats(msg: str, lineno: int, time: str | None) -> SpecStats:
    f = fields(msg.split("metrics:", 1)[-1].rstrip("."))
    n: dict[str, int | None] = {}
    for key, name in _V0_KEYS.items():
        if key in f:
            n[name] = _first_int(f[key])
    k, drafted, emitted = n.get("k"), n.get("drafted"), n.get("emitted")
    mean = emitted / (drafted / k) if k and drafted and emitted is not None else None
    rate = _first_float(f.get("Draft acceptance rate"))
    return SpecStats(lineno=lineno, time=time, mean_accept_len=mean, accepted=n.get("accepted"),
                     drafted=drafted, acceptance_rate=rate, derived=mean is not None)


class VllmParser:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.spec = SpecFields()
        self._archs: list[str] = []
        self._drafter = False  # between "Loading drafter model" and "Model loading took"

    @property
    def k(self) -> int | None:
        v = self.spec.values.get("num_steps")
        return v if isinstance(v, int) else None

    def line_cut(self) -> None:
        """(Nothing of vLLM's spans lines.)"""

    def parse(self, msg: str, lineno: int, time: str | None,
              prefixed: bool = True) -> tuple[list[Event], LineKind | None]:
        """Events and a line kind for one message (``prefixed`` unused: no vLLM message
        continues on unprefixed lines)."""
        if "Avg prompt throughput" in msg or "Avg generation throughput" in msg:
            return [engine_stats(msg, lineno, time)], LineKind.STATS
        if "SpecDecoding metrics:" in msg:
            return [spec_stats(msg, lineno, time, self.k)], LineKind.STATS
        if "Speculative metrics:" in msg:
            return [v0_spec_stats(msg, lineno, time)], LineKind.STATS
        if (hold := read_line(msg, lineno, time)) is not None:  # sleep, pause, [FT]
            return [hold], LineKind.MILESTONE
        events: list[Event] = []
        if "speculative" in msg:
            spec = self.spec.merge(spec_from_text(msg))
            if spec is not None:
                events.append(spec)
        phase_events, kind = self._milestone(msg, lineno, time)
        events.extend(phase_events)
        if events and kind is None:
            kind = LineKind.MILESTONE
        return events, kind

    def _milestone(self, msg: str, lineno: int,
                   time: str | None) -> tuple[list[Event], LineKind | None]:
        detail = msg.strip()[:120]
        role = "draft" if self._drafter else "target"

        def ev(phase: Phase, r: str = role) -> tuple[list[Event], LineKind | None]:
            return [PhaseEvent(phase, lineno, time, detail, r)], LineKind.MILESTONE

        bar = last_bar(msg)  # (``None`` at once for a line without "%")
        if bar is not None and LOADER_DESC.search(bar.desc):
            unit = "tensors" if TENSOR_DESC.search(bar.desc) else ""
            return [PhaseEvent(Phase.LOADING_WEIGHTS, lineno, time, bar.desc[:120], role),
                    Progress("shards", bar.done, bar.total, lineno, role, unit, bar.left_s)], \
                LineKind.MILESTONE
        a = _ARCH.search(msg)
        if a is not None:
            arch = a.group(1)
            events: list[Event] = [PhaseEvent(Phase.INIT, lineno, time, detail)]
            if arch not in self._archs and len(self._archs) < MAX_MODELS:
                draft = bool(self._archs) or bool(_DRAFT_ARCH.search(arch))
                self._archs.append(arch)
                events.append(ModelInfo("draft" if draft else "target", arch, lineno))
            return events, LineKind.MILESTONE
        if "Loading drafter model" in msg:
            self._drafter = True
            loading: list[Event] = [PhaseEvent(Phase.LOADING_WEIGHTS, lineno, time, detail,
                                               "draft")]
            if not (self.spec.values.get("algorithm") or self.spec.values.get("draft_model")):
                loading.append(SpecConfig())  # a drafter is evidence enough that it is on
            return loading, LineKind.MILESTONE
        if (phase := method_phase(msg)) is not None:
            return ev(phase)
        for text in _INIT_TEXT:
            if text in msg:
                return ev(Phase.INIT)
        for text in _LOAD_TEXT:
            if text in msg:
                return ev(Phase.LOADING_WEIGHTS)
        for text in _LOADED_TEXT:
            if text in msg:
                if text == "Model loading took":
                    self._drafter = False
                return ev(Phase.WEIGHTS_LOADED)
        for text in _KV_TEXT:
            if text in msg:
                self._drafter = False  # loading is over (CPU builds print no "Model loading")
                return ev(Phase.KV_CACHE, "draft" if "drafter" in msg else "target")
        g = _GRAPHS.search(msg)
        if g is not None:
            events = [PhaseEvent(Phase.CUDA_GRAPH, lineno, time, detail)]
            done, total = (small_int(g.group(2)), small_int(g.group(3))) if g.group(2) \
                else (None, None)
            if done is not None and total is not None:
                events.append(Progress("graphs", done, total, lineno, "target", g.group(1) or ""))
            return events, LineKind.MILESTONE
        for text in _GRAPH_TEXT:
            if text in msg:
                return ev(Phase.CUDA_GRAPH)
        for text in _HTTP_TEXT:
            if text in msg:
                return ev(Phase.HTTP_SERVER)
        if "init engine (profile, create kv cache" in msg:
            return [], LineKind.MILESTONE  # (a CPU build captures no graphs: no phase)
        for text in _REQUEST_TEXT:
            if text in msg:
                return ev(Phase.SERVING)
        for text in STARTUP_GATES:
            if text in msg:
                found = startup_events(msg, lineno, time)
                return found, (LineKind.MILESTONE if found else None)
        return [], None


__all__ = ["METHOD_PHASES", "VllmParser", "engine_stats", "method_phase", "spec_from_text",
           "spec_stats", "v0_spec_stats"]
