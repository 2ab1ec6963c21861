"""The log-derived events: phases, line kinds and what the parsers read from the lines."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from eagle_tui.model.record import Record, record

# An engine profile's name (``eagle_tui.model.engines``) or "unknown": a plain string, so an engine
# registered later flows through records, history and JSON like the built-in ones.
Engine = str
Severity = Literal["info", "warning", "critical"]


class Phase(str, Enum):
    """Startup phases in the order a healthy launch passes through them.

    The order of declaration is the order of progress: ``Phase.rank`` compares phases so that the
    report's ``phase`` is the *furthest* phase reached, whatever order the lines arrive in (TP
    ranks interleave, the draft worker repeats weight loading after target graphs).
    """

    NONE = "none"
    INIT = "init"
    LOADING_WEIGHTS = "loading_weights"
    WEIGHTS_LOADED = "weights_loaded"
    KV_CACHE = "kv_cache"
    CUDA_GRAPH = "cuda_graph"
    HTTP_SERVER = "http_server"
    READY = "ready"
    SERVING = "serving"

    @property
    def rank(self) -> int:
        return _PHASE_ORDER[self]


_PHASE_ORDER = {p: i for i, p in enumerate(Phase)}


class LineKind(str, Enum):
    """What a log line is, for highlighting and for jump-to-error. Cheap to compute."""

    PLAIN = "plain"
    DEBUG = "debug"  # [EAGLE3-DEBUG] lines: highlighted distinctly from everything else
    ERROR = "error"
    TRACEBACK = "traceback"
    WARNING = "warning"
    MILESTONE = "milestone"  # a startup phase line
    STATS = "stats"  # Decode/Prefill batch, Engine 000, SpecDecoding metrics
    ACCESS = "access"  # uvicorn access lines


# --------------------------------------------------------------------------- log-derived events


@record
class LogLine(Record):
    """One sanitized log line (no ESC, no C0/C1 controls). ``lineno`` is 1-based in the stream."""

    lineno: int
    text: str
    kind: LineKind = LineKind.PLAIN
    host: str = ""


@record
class EngineDetected(Record):
    """The log's engine was recognized (SGLang or vLLM) at ``lineno``."""

    engine: Engine
    lineno: int = 0


@record
class PhaseEvent(Record):
    """A startup milestone. ``role`` is ``"target"`` or ``"draft"`` (EAGLE draft worker)."""

    phase: Phase
    lineno: int
    time: str | None = None
    detail: str = ""
    role: str = "target"


@record
class Progress(Record):
    """Progress inside a phase: ``what`` is ``"shards"`` (weights: ``label`` ``"tensors"`` when
    a streaming loader counts tensors), ``"graphs"`` (capture) or ``"piecewise"`` (SGLang's
    piecewise prefill graphs: ``label`` is the stage, ``"compile"`` or ``"capture"``).
    ``left_s``: the time left as the engine's own bar estimates it."""

    what: Literal["shards", "graphs", "piecewise"]
    done: int
    total: int
    lineno: int
    role: str = "target"
    label: str = ""
    left_s: float | None = None


@record
class SpecConfig(Record):
    """Speculative-decoding settings as the server was launched (log, /server_info or flags)."""

    algorithm: str | None = None
    draft_model: str | None = None
    num_steps: int | None = None
    eagle_topk: int | None = None
    num_draft_tokens: int | None = None
    source: str = "log"


@record
class SpecTier(Record):
    """An adaptive server moved its draft steps (SGLang's ``Adaptive spec params updated``)."""

    lineno: int
    steps: int
    time: str | None = None


@record
class DecodeStats(Record):
    """A decode-side stats sample: SGLang ``Decode batch`` or vLLM ``Engine 000:`` line.

    ``gen_tps`` is committed tokens per second including accepted drafts (both engines agree on
    that meaning). ``kv_usage`` is a 0..1 fraction for both engines.
    """

    lineno: int
    time: str | None = None
    gen_tps: float | None = None
    accept_len: float | None = None
    accept_rate: float | None = None
    running: int | None = None
    queued: int | None = None
    kv_usage: float | None = None
    num_tokens: int | None = None
    cuda_graph: bool | None = None
    prompt_tps: float | None = None
    source: str = "log"


@record
class PrefillStats(Record):
    """An SGLang ``Prefill batch`` line: new sequences and tokens, cache hits, queue."""

    lineno: int
    time: str | None = None
    new_seq: int | None = None
    new_tokens: int | None = None
    cached_tokens: int | None = None
    running: int | None = None
    queued: int | None = None
    input_tps: float | None = None


@record
class SpecStats(Record):
    """Acceptance figures of one stats interval (vLLM ``SpecDecoding metrics`` / V0 line).

    ``mean_accept_len`` includes the bonus token (range 1 .. k+1). ``acceptance_rate`` is a 0..1
    fraction of drafted tokens accepted. ``derived`` marks values computed rather than printed.
    """

    lineno: int
    time: str | None = None
    mean_accept_len: float | None = None
    accepted: int | None = None
    drafted: int | None = None
    per_position: tuple[float, ...] = ()
    acceptance_rate: float | None = None
    accepted_tps: float | None = None
    drafted_tps: float | None = None
    derived: bool = False
    source: str = "log"


@record
class SpecHistogram(Record):
    """Verify steps by their number of correct drafts (index j: steps with j correct), summed
    over the requests a client saw: SGLang's ``meta_info.spec_correct_drafts_histogram``."""

    t: float
    counts: tuple[int, ...]
    requests: int = 1
    source: str = "client"


@record
class HiddenStateDims(Record):
    """``[EAGLE3-DEBUG] hidden_states shape=torch.Size([n, D])`` → ``dim=D``."""

    dim: int
    lineno: int
    tokens: int | None = None


@record
class ModelInfo(Record):
    """Facts about the loaded models from the log: architecture per role, hidden size."""

    role: str
    architecture: str | None = None
    lineno: int = 0


@record
class CrashEvent(Record):
    """A classified fatal error. ``lineno`` is the 1-based root-cause line."""

    kind: str
    lineno: int
    message: str
    hint: str
    time: str | None = None


@record
class LogRestarted(Record):
    """The followed file was truncated or replaced; line numbers restart at 1."""

    reason: str
    host: str = ""
    t: float = 0.0


@record
class LogOpened(Record):
    """A log was opened at its end: the in-memory tail begins at byte ``start`` of ``size``.

    ``start`` is a line start; the lines before it exist only in the file (the file-backed
    scrollback reads them from there, the background summary folds them). Line numbers of the
    tail's events count from ``start`` until :class:`LogPrefixCounted` says how many lines lie
    before it. ``start == 0`` means the whole file is in the tail (a small or fresh log).
    """

    path: str
    host: str
    start: int
    size: int


@record
class LogPrefixCounted(Record):
    """``lines`` newlines lie before the tail's ``start``: the absolute line number of a tail line
    is ``lineno + lines``. Counted in the background so it never holds up the first text."""

    path: str
    host: str
    lines: int


@record
class SummaryProgress(Record):
    """How far the background summary of the bytes before the tail's start has got.

    ``done``/``total`` are bytes, ``lines`` the lines summarized so far, ``eta_s`` the seconds
    left (``None`` before a rate is known); ``finished`` is set on the last one, ``error`` when
    the summary failed (the dashboard then shows the tail alone, and says so).
    """

    path: str
    host: str
    done: int
    total: int
    lines: int = 0
    eta_s: float | None = None
    finished: bool = False
    error: str = ""
