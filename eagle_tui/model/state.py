"""The one immutable dashboard state: what the dashboard shows, as records.

Everything a consumer shows (the TUI, ``wait``'s progress lines, ``report``'s JSON) is a pure
function of this state, and the state is a pure function of the event stream
(:func:`~eagle_tui.model.fold.reduce`, its only writer). That is what lets a recorded session
replay into exactly the live state, and lets tests drive the whole product with scripted events.

Log *text* is deliberately not kept here beyond a short tail (``recent_lines``): the bounded line
buffer (:class:`~eagle_tui.model.logbuffer.LogBuffer`) lives beside this state, fed with the same
``LogLine`` events, so a 50k lines/s log never copies a 10,000-line tuple per batch. Which line is
an error is the buffer's rule (``ERROR_KINDS``); ``first_error_line`` is its stream line number.
Which of the log's, /metrics' and /server_info's numbers is shown is :mod:`.figures`; this module
imports no view, so every view may import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import evidence
from .activity import ActivityTrack
from .alert import Alert
from .events import (
    ConnectionState,
    CrashEvent,
    DecodeStats,
    DraftConfig,
    Engine,
    GpuSample,
    HealthSample,
    LogLine,
    MetricsSample,
    ModelInfo,
    Phase,
    PreviousRun,
    ProcessExited,
    ProcessSample,
    Progress,
    ServerInfo,
    SourceFailed,
    SpecConfig,
    SpecStats,
    SummaryProgress,
    UserMarker,
    UsualTimes,
)
from .series import Series

RECENT_LINES = 20


@dataclass(frozen=True, slots=True)
class PhaseMark:
    """When a phase was first reached: log line number, server time text and observed time."""

    phase: Phase
    lineno: int
    time: str | None
    t: float | None
    detail: str = ""
    role: str = "target"
    log_s: float | None = None  # the server's clock (``logclock``): durations on attach
    inferred: str = ""  # why the phase is implied, when no milestone line said it (.evidence)


@dataclass(frozen=True, slots=True)
class DashboardState:
    """Everything the dashboard shows, folded from the events by :func:`.fold.reduce`.

    (A docstring also spares ``dataclass`` from building one out of the 50-field signature
    with ``inspect`` at every start.)
    """

    engine: Engine = "unknown"
    phase: Phase = Phase.NONE  # furthest phase reached (never goes back, except on restart)
    phases: tuple[PhaseMark, ...] = ()
    shards: Progress | None = None
    graphs: Progress | None = None
    crash: CrashEvent | None = None
    spec: SpecConfig | None = None
    draft_config: DraftConfig | None = None
    models: tuple[ModelInfo, ...] = ()
    lines: int = 0  # log lines seen (max lineno)
    recent_lines: tuple[LogLine, ...] = ()
    first_error_line: int | None = None
    markers: tuple[UserMarker, ...] = ()
    usual: UsualTimes | None = None  # earlier runs' phase times (startup ETA, slow phases)
    # metrics, from the log
    accept_len: Series = field(default_factory=Series)  # per stats line (SGLang / vLLM)
    gen_tps: Series = field(default_factory=Series)
    accept_rate: Series = field(default_factory=Series)
    per_position: tuple[float, ...] = ()
    # the work of each accept_len point, aligned with it (.acceptance): its weight and
    # weight × exact value, so a window's mean is Σwv/Σw, the counters' own ratio
    accept_w: Series = field(default_factory=Series)
    accept_wv: Series = field(default_factory=Series)
    pp_window: tuple[tuple[float, tuple[float, ...]], ...] = ()  # (drafts, per-position rates)
    rank_owner: tuple[tuple[str, str], ...] = ()  # (DP group, the one TP rank whose lines count)
    dp_tps: tuple[tuple[str, float, float], ...] = ()  # (DP group, newest tok/s, when): summed
    client_hist: tuple[int, ...] = ()  # SpecHistogram counts, summed over the requests seen
    running: int | None = None
    queued: int | None = None
    kv_usage: float | None = None
    hidden_dims: tuple[int, ...] = ()  # distinct dims seen, in order of first sight
    last_decode: DecodeStats | None = None
    last_spec: SpecStats | None = None
    # metrics, from /metrics and /server_info
    m_gen_tps: Series = field(default_factory=Series)
    m_accept_len: Series = field(default_factory=Series)
    m_acceptance_rate: float | None = None
    m_per_position: tuple[float, ...] = ()
    last_metrics: MetricsSample | None = None
    server_info: ServerInfo | None = None
    baseline_tok_s: float | None = None
    # live sources
    health: HealthSample | None = None
    ever_ready_health: bool = False
    process: ProcessSample | None = None
    process_exit: ProcessExited | None = None
    process_ended: bool = False  # a watched process exited since this run's log began
    gpus: GpuSample | None = None
    gpu_mem_peak: tuple[tuple[str, int, int], ...] = ()  # (host, index, peak bytes)
    failures: tuple[SourceFailed, ...] = ()  # currently failing sources, one per source
    connections: tuple[ConnectionState, ...] = ()
    restarts: int = 0
    # evidence (.evidence): an engine implied by the lines, not detected from a banner
    engine_inferred: evidence.Inferred | None = None
    # what a silent startup is doing, from when each signal last moved (.activity)
    activity: ActivityTrack = field(default_factory=ActivityTrack)
    restart_t: float | None = None  # when the current run began (a restart), observed time
    # liveness (.liveness): when stats last arrived, last showed work, and since when the
    # newest stats say the server is idle (None: they say it works)
    data_t: float | None = None
    active_t: float | None = None
    idle_t: float | None = None
    health_ok_t: float | None = None  # last /health "ready"
    previous: PreviousRun | None = None  # the run this one replaced (shown for comparison)
    # a log opened at its end (LogOpened): the byte where the in-memory tail begins and the
    # file's size then; ``lineno_base`` is the number of lines before it (an event's absolute
    # line number is ``lineno + lineno_base``; None until counted: shown as "line ~"); the
    # background summary of the bytes before it (None: none runs)
    log_start: int = 0
    log_size: int = 0
    lineno_base: int | None = 0
    summary: SummaryProgress | None = None
    # clock
    t_start: float | None = None
    now: float | None = None
    alerts: tuple[Alert, ...] = ()

    # ------------------------------------------------------------------ derived views
    @property
    def ready(self) -> bool:
        return self.phase.rank >= Phase.READY.rank and self.crash is None

    @property
    def elapsed(self) -> float | None:
        if self.t_start is None or self.now is None:
            return None
        return max(0.0, self.now - self.t_start)

    def phase_mark(self, phase: Phase) -> PhaseMark | None:
        for m in self.phases:
            if m.phase is phase:
                return m
        return None

    @property
    def phase_inferred(self) -> str:
        """Why the current phase is implied rather than seen ("" when a milestone said it)."""
        mark = self.phase_mark(self.phase)
        return mark.inferred if mark is not None else ""
