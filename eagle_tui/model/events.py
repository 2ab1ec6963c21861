"""Typed events: the one vocabulary every layer speaks.

Every log line, HTTP answer, process sample and GPU sample becomes one of these small frozen
dataclasses. Parsers and sources *produce* them, :func:`eagle_tui.model.state.reduce` *consumes*
them, the session records them to JSON lines and replays them. Keeping them plain data (no
methods with side effects, no references to I/O objects) is what makes record/replay, scripted
tests and the headless ``wait`` command share one code path with the dashboard.

Times: ``t`` is a wall-clock ``time.time()`` float stamped by whoever observed the event (the
source, not the server); ``time`` on log-derived events is the server's own timestamp text as it
appeared in the line (or ``None``), kept verbatim because log timestamps have no year (vLLM) or no
zone (SGLang) and must not be guessed at.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from .record import Record, record

Engine = Literal["sglang", "vllm", "unknown"]
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
    """Progress inside a phase: ``what`` is ``"shards"`` (weights) or ``"graphs"`` (capture)."""

    what: Literal["shards", "graphs"]
    done: int
    total: int
    lineno: int
    role: str = "target"
    label: str = ""


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


# --------------------------------------------------------------------------- live-source events


HealthState = Literal["no_listener", "starting", "ready", "error", "timeout", "unknown"]


@record
class HealthSample(Record):
    """One ``/health`` poll: its state, HTTP status and latency, or the error."""

    state: HealthState
    t: float
    status_code: int | None = None
    latency_s: float | None = None
    error: str = ""


@record
class MetricsSample(Record):
    """Windowed values from ``/metrics`` (counters already turned into rates by the scraper)."""

    t: float
    engine: Engine = "unknown"
    gen_tps: float | None = None
    accept_len: float | None = None
    acceptance_rate: float | None = None
    per_position: tuple[float, ...] = ()
    running: int | None = None
    queued: int | None = None
    kv_usage: float | None = None
    counter_reset: bool = False
    skipped: str = ""  # a note: values of this scrape that could not be represented (not read)
    # where the figures were read: the server's own ``/metrics``, or Prometheus' stored series
    # of it (``"prometheus"``: the fleet's drill-down, ``watch --prometheus``); the Metrics pane
    # names it after each figure
    source: str = "/metrics"


@record
class ServerInfo(Record):
    """What the server reports about itself (``/get_server_info``, ``/version``)."""

    t: float
    spec: SpecConfig | None = None
    avg_accept_len: float | None = None
    model_name: str | None = None
    memory_gb: tuple[tuple[str, float], ...] = ()
    version: str | None = None


@record
class DraftConfig(Record):
    """What the draft checkpoint's ``config.json`` says about itself (EAGLE-3 markers)."""

    path: str
    architectures: tuple[str, ...] = ()
    is_eagle3: bool = False
    hidden_size: int | None = None
    target_hidden_size: int | None = None
    aux_layer_ids: tuple[int, ...] = ()


ProcessStatus = Literal["running", "sleeping", "zombie", "exited", "not_found", "unknown"]


@record
class ProcessSample(Record):
    """The server process (tree) at one instant: status, RSS, CPU, child count."""

    t: float
    pid: int
    status: ProcessStatus
    name: str = ""
    rss_bytes: int | None = None
    cpu_percent: float | None = None
    started: float | None = None
    num_procs: int = 1
    # for telling loading, compiling and hung apart (model/activity.py): bytes the tree has read
    # so far (the larger of read() bytes and disk reads, which count mmap faults), and its pids
    # (to find its GPU memory in the GPU samples' process lists)
    read_bytes: int | None = None
    pids: tuple[int, ...] = ()


@record
class ProcessExited(Record):
    """The watched server process ended: its exit code, or the signal that killed it."""

    t: float
    pid: int
    exit_code: int | None = None
    signal: int | None = None


@record
class GpuProcess(Record):
    """A process holding GPU memory, as NVML or nvidia-smi lists it."""

    pid: int
    name: str = ""
    used_bytes: int | None = None


@record
class GpuInfo(Record):
    """One GPU at one instant. ``None`` in a field means "not supported / N/A", never an error."""

    index: int
    name: str = ""
    uuid: str = ""
    mem_used: int | None = None  # bytes
    mem_total: int | None = None  # bytes
    util_gpu: float | None = None  # percent
    util_mem: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    temp_c: float | None = None
    sm_mhz: float | None = None
    processes: tuple[GpuProcess, ...] = ()
    host: str = ""
    error: str = ""


GpuState = Literal["ok", "no_driver", "error", "unknown"]


@record
class GpuSample(Record):
    """Every GPU of one host at one instant, or the state that explains why none."""

    t: float
    state: GpuState
    gpus: tuple[GpuInfo, ...] = ()
    error: str = ""
    host: str = ""
    backend: str = ""  # "nvml" | "nvidia-smi"


@record
class DownloadSample(Record):
    """Model files being downloaded: the Hugging Face cache's ``blobs/*.incomplete`` files."""

    t: float
    files: int
    bytes: int
    repos: tuple[str, ...] = ()
    root: str = ""
    host: str = ""


@record
class SourceFailed(Record):
    """A source stopped working; it retries in ``retry_in_s`` (``None``: gives up)."""

    source: str
    error: str
    t: float
    attempt: int = 1
    retry_in_s: float | None = None


@record
class SourceRecovered(Record):
    """A source that had failed works again."""

    source: str
    t: float


@record
class ConnectionState(Record):
    """Transport state (SSH): ``connected``, ``reconnecting`` (with attempt/error), ``failed``."""

    host: str
    state: str
    t: float
    attempt: int = 0
    error: str = ""


@record
class Tick(Record):
    """Clock event so elapsed times and staleness advance with no other input."""

    t: float


@record
class Baseline(Record):
    """A known non-speculative tok/s to compare against (``--baseline``, demo's 90 tok/s)."""

    tok_s: float
    source: str = "user"


@record
class UserMarker(Record):
    """A marker line the user put into the log view (``m``)."""

    lineno: int
    t: float
    label: str = ""


@record
class UsualTimes(Record):
    """How long each phase usually takes: the median of earlier runs of the same model and
    flags on the same host (``phases``: ``(phase value, seconds)``), from the run history."""

    phases: tuple[tuple[str, float], ...]
    runs: int


@record
class PreviousRun(Record):
    """The run this one replaced (a relaunch from the dashboard: ``R``/``E``), kept on screen
    for comparison: its label, figures and time to ready as the run history summarised them."""

    label: str
    accept_len: float | None = None
    tok_s: float | None = None
    ready_s: float | None = None
    crash: str = ""


Event = (
    LogLine
    | EngineDetected
    | PhaseEvent
    | Progress
    | SpecConfig
    | DecodeStats
    | PrefillStats
    | SpecStats
    | SpecHistogram
    | HiddenStateDims
    | ModelInfo
    | CrashEvent
    | LogRestarted
    | LogOpened
    | LogPrefixCounted
    | SummaryProgress
    | HealthSample
    | MetricsSample
    | ServerInfo
    | DraftConfig
    | ProcessSample
    | ProcessExited
    | GpuSample
    | DownloadSample
    | SourceFailed
    | SourceRecovered
    | ConnectionState
    | Tick
    | Baseline
    | UserMarker
    | UsualTimes
    | PreviousRun
)

EVENT_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        LogLine,
        EngineDetected,
        PhaseEvent,
        Progress,
        SpecConfig,
        DecodeStats,
        PrefillStats,
        SpecStats,
        SpecHistogram,
        HiddenStateDims,
        ModelInfo,
        CrashEvent,
        LogRestarted,
        LogOpened,
        LogPrefixCounted,
        SummaryProgress,
        HealthSample,
        MetricsSample,
        ServerInfo,
        DraftConfig,
        ProcessSample,
        ProcessExited,
        GpuProcess,
        GpuInfo,
        GpuSample,
        DownloadSample,
        SourceFailed,
        SourceRecovered,
        ConnectionState,
        Tick,
        Baseline,
        UserMarker,
        UsualTimes,
        PreviousRun,
    )
}

__all__ = ["EVENT_TYPES", "Event", "LineKind", "Phase"]
