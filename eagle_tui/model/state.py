"""The one immutable dashboard state and ``reduce(state, events)``.

Everything a consumer shows (the TUI, ``wait``'s progress lines, ``report``'s JSON) is a pure
function of this state, and the state is a pure function of the event stream. That is what lets a
recorded session replay into exactly the live state, and lets tests drive the whole product with
scripted events.

Log *text* is deliberately not kept here beyond a short tail (``recent_lines``): the bounded line
buffer (:class:`~eagle_tui.model.logbuffer.LogBuffer`) lives beside this state, fed with the same
``LogLine`` events, so a 50k lines/s log never copies a 10,000-line tuple per batch. Which line is
an error is the buffer's rule (``ERROR_KINDS``); ``first_error_line`` is its stream line number.
Which of the log's, /metrics' and /server_info's numbers is shown is :mod:`.figures`.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from . import activity, evidence, figures
from .alerts import Alert, evaluate_alerts
from .crash import KIND_SPECIFICITY
from .events import (
    Baseline,
    ConnectionState,
    CrashEvent,
    DecodeStats,
    DownloadSample,
    DraftConfig,
    Engine,
    EngineDetected,
    Event,
    GpuSample,
    HealthSample,
    HiddenStateDims,
    LineKind,
    LogLine,
    LogOpened,
    LogPrefixCounted,
    LogRestarted,
    MetricsSample,
    ModelInfo,
    Phase,
    PhaseEvent,
    PreviousRun,
    ProcessExited,
    ProcessSample,
    Progress,
    ServerInfo,
    SourceFailed,
    SourceRecovered,
    SpecConfig,
    SpecHistogram,
    SpecStats,
    SummaryProgress,
    UserMarker,
    UsualTimes,
)
from .logbuffer import ERROR_KINDS
from .logclock import log_seconds
from .series import Series
from .stats_fold import apply_metrics, decode, spec

RECENT_LINES = 20
MAX_HIDDEN_DIMS = 32  # a server shows one to three; more is a hostile or garbled log
_GONE = ("exited", "not_found", "zombie")


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
    """Everything the dashboard shows, folded from the events by :func:`reduce`.

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
    # distinct dims seen, in order of first sight: the first MAX_HIDDEN_DIMS - 1 and the latest
    hidden_dims: tuple[int, ...] = ()
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
    activity: activity.ActivityTrack = field(default_factory=activity.ActivityTrack)
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

    # the shown numbers: which source wins is decided once, in .figures
    @property
    def tok_s(self) -> float | None:
        """Best current tok/s (:func:`.figures.tok_s`)."""
        return figures.tok_s(self).value

    @property
    def current_accept_len(self) -> float | None:
        """Best current accept length (:func:`.figures.accept_len`)."""
        return figures.accept_len(self).value

    @property
    def speedup(self) -> float | None:
        """Median tok/s over the baseline (:func:`.figures.speedup`)."""
        return figures.speedup(self).value


_FIELDS: tuple[str, ...] = ()  # filled below, once the class exists
_NO_LINE = object()
_setattr = object.__setattr__


class _Batch:
    """The working copy of one ``reduce()`` call.

    ``dataclasses.replace`` on a 50-field frozen dataclass costs ~35 µs; doing it several times
    per event made the reducer the bottleneck of a busy log (~100 µs per stats line). Instead,
    ``reduce`` copies the state once per batch, mutates that private copy in place (nobody else
    holds a reference to it yet, so immutability is preserved for every observer) and buffers
    series points so each :class:`Series` is rebuilt once per batch, not once per point.
    """

    __slots__ = ("line_now", "max_lineno", "pending", "recent", "s", "scan")

    def __init__(self, state: DashboardState) -> None:
        self.s = _copy(state)
        self.pending: dict[str, list[tuple[float, float]]] = {}
        # log lines: the short tail and the highest line number, folded in once per batch
        self.recent: deque[LogLine] = deque(state.recent_lines, RECENT_LINES)
        self.max_lineno = state.lines
        # the clock at the batch's last log line (_NO_LINE: no line yet), one store per line
        self.line_now: float | object | None = _NO_LINE
        # whether log lines may still carry evidence (.evidence): decided once per batch, as the
        # hot path cannot afford it per line; set again where it can turn true (a restart, a
        # phase that goes back). Scanning a line needlessly changes nothing.
        self.scan = _wants_evidence(state)

    def set(self, **changes: object) -> None:
        for name, value in changes.items():
            _setattr(self.s, name, value)

    def point(self, series: str, t: float, value: float) -> None:
        self.pending.setdefault(series, []).append((t, value))

    def finish(self) -> DashboardState:
        s = self.s
        for name, pts in self.pending.items():
            _setattr(s, name, getattr(s, name).extend(pts))
        self.pending = {}
        line_now = self.line_now
        if line_now is not _NO_LINE:
            _setattr(s, "recent_lines", tuple(self.recent))
            _setattr(s, "lines", max(s.lines, self.max_lineno))
            assert line_now is None or isinstance(line_now, float)
            _setattr(s, "activity", activity.on_lines(s.activity, line_now))
            self.line_now = _NO_LINE
        return s


def _wants_evidence(state: DashboardState) -> bool:
    return (state.engine == "unknown" or state.engine_inferred is not None
            or state.phase.rank < Phase.READY.rank)


_MILESTONE = LineKind.MILESTONE


def _copy(state: DashboardState) -> DashboardState:
    new = object.__new__(DashboardState)
    for name in _FIELDS:
        _setattr(new, name, getattr(state, name))
    return new


def _with_phase(b: _Batch, ev: PhaseEvent) -> None:
    s = b.s
    if ev.phase is Phase.INIT and ev.role == "target" and _rerun_in_log(s, ev):
        _restart(b, truncated=False)
        s = b.s
    # a crash freezes the phase (and its marks): the report's phase is the furthest reached
    # *before* the crash
    if s.crash is not None:
        return
    old = s.phase_mark(ev.phase)
    if old is None or old.inferred:  # a milestone line replaces what was only implied
        mark = PhaseMark(ev.phase, ev.lineno, ev.time, s.now, ev.detail, ev.role,
                         log_seconds(ev.time))
        b.set(phases=(*(m for m in s.phases if m is not old), mark))
    if ev.phase.rank > s.phase.rank:
        b.set(phase=ev.phase)


def _infer_phase(b: _Batch, phase: Phase, lineno: int, time: str | None, reason: str) -> None:
    """Raise the phase to one the evidence implies (never lower it; a crash does not freeze
    it: the crash itself is the evidence)."""
    s = b.s
    if phase.rank <= s.phase.rank:
        return
    marks = tuple(m for m in s.phases if m.phase is not phase)
    mark = PhaseMark(phase, lineno, time, s.now, "", "target", log_seconds(time),
                     inferred=reason)
    b.set(phase=phase, phases=(*marks, mark))


def _evidence_line(b: _Batch, ev: LogLine) -> None:
    """A traceback or error line: the engine and phase its frames name (.evidence)."""
    s = b.s
    if s.engine == "unknown":
        found = evidence.engine_in_line(ev.text)
        if found is not None:
            b.set(engine=found[0], engine_inferred=evidence.Inferred(found[0], ev.lineno, found[1]))
    elif s.engine_inferred is not None and s.engine_inferred.value == "vllm":
        found = evidence.engine_in_line(ev.text)
        if found is not None and found[0] == "sglang":  # old SGLang calls into vllm/distributed
            b.set(engine="sglang", engine_inferred=evidence.Inferred("sglang", ev.lineno, found[1]))
    if s.phase.rank < Phase.READY.rank:
        implied = evidence.phase_in_line(ev.text)
        if implied is not None:
            _infer_phase(b, implied[0], ev.lineno, None, implied[1])


def _with_crash(b: _Batch, ev: CrashEvent) -> None:
    s = b.s
    implied = evidence.phase_of_crash(ev, s.engine)
    if implied is not None and s.phase.rank < Phase.READY.rank:
        _infer_phase(b, implied[0], ev.lineno, ev.time, implied[1])
    refines = s.crash is not None and (s.crash.kind, s.crash.lineno) == (ev.kind, ev.lineno)
    if s.crash is not None and _specificity(s.crash) >= _specificity(ev) and not refines:
        return  # (a refinement: the same crash line, its cause read from the lines below)
    if ev.kind == "port_in_use" and s.phase is Phase.READY:
        # vLLM: "Application startup complete." followed by a bind error was never ready
        marks = tuple(m for m in s.phases if m.phase is not Phase.READY)
        b.set(crash=ev, phase=Phase.HTTP_SERVER, phases=marks)
        b.scan = True
        return
    b.set(crash=ev)


def _upsert_failure(
    failures: tuple[SourceFailed, ...], ev: SourceFailed | SourceRecovered
) -> tuple[SourceFailed, ...]:
    kept = tuple(f for f in failures if f.source != ev.source)
    return (*kept, ev) if isinstance(ev, SourceFailed) else kept


def _merge_spec(old: SpecConfig | None, ev: SpecConfig) -> SpecConfig:
    if old is None or ev.source == "log" or old.source != "log":
        return ev
    # the log's server_args line is authoritative; fill only what it lacks
    return SpecConfig(
        algorithm=old.algorithm or ev.algorithm,
        draft_model=old.draft_model or ev.draft_model,
        num_steps=old.num_steps if old.num_steps is not None else ev.num_steps,
        eagle_topk=old.eagle_topk if old.eagle_topk is not None else ev.eagle_topk,
        num_draft_tokens=old.num_draft_tokens
        if old.num_draft_tokens is not None else ev.num_draft_tokens,
        source=old.source,
    )


def _rerun_in_log(s: DashboardState, ev: PhaseEvent) -> bool:
    """A server's first line again after the watched process exited: the server was restarted
    writing to the same log (``>>``), a new run. (Only a live process source can say the old
    run ended: a log read alone, as ``report`` reads it, keeps its runs folded together.)"""
    first = s.phase_mark(Phase.INIT)
    return first is not None and ev.lineno > first.lineno and s.process_ended


def _restart(b: _Batch, *, truncated: bool = True) -> None:
    """The log restarted (``truncated``: the file began again at line 1; else a new run's first
    line in the same log): forget everything the old log said, keep the live sources' view."""
    s = b.s
    fresh = DashboardState(
        t_start=s.t_start, now=s.now, baseline_tok_s=s.baseline_tok_s,
        gpus=s.gpus, gpu_mem_peak=s.gpu_mem_peak, health=s.health, process=s.process,
        draft_config=s.draft_config, connections=s.connections, failures=s.failures,
        restarts=s.restarts + 1, restart_t=s.now, usual=s.usual, activity=s.activity,
        previous=_summary_of(s) or s.previous, markers=() if truncated else s.markers,
    )
    b.pending = {}
    b.scan = True
    if truncated:
        b.recent.clear()
        b.line_now = _NO_LINE
        b.max_lineno = 0
        b.set(**{name: getattr(fresh, name) for name in _FIELDS})
        return
    keep = ("lines", "recent_lines")  # the same file goes on: its line numbers too
    b.set(**{name: getattr(fresh, name) for name in _FIELDS if name not in keep})


def _new_process(b: _Batch, ev: ProcessSample) -> None:
    """Another server process than the one watched (it exited and a new one was found): a new
    run. Its clock starts when the process started; the old one's health and exit are gone."""
    s = b.s
    start = ev.started if ev.started is not None and ev.started > 0 else ev.t
    b.set(process=ev, process_exit=None, health=None, ever_ready_health=False,
          t_start=min(start, s.now) if s.now is not None else start)


def _summary_of(s: DashboardState) -> PreviousRun | None:
    """What the history would keep of the old run, when it got that far (``runsummary``)."""
    from .runsummary import previous_run  # (runsummary folds this module's state)

    return previous_run(s, "")


def _log_line(b: _Batch, ev: LogLine) -> None:
    """The hot path of a busy log (most events): no state field is touched until ``finish``."""
    b.recent.append(ev)
    s = b.s
    b.line_now = s.now
    if ev.lineno > b.max_lineno:
        b.max_lineno = ev.lineno
    if s.first_error_line is None and ev.kind in ERROR_KINDS:  # the buffer's one rule
        _setattr(s, "first_error_line", ev.lineno)
    if b.scan and evidence.worth_scanning(ev.kind, ev.text):  # startup, or a fragment
        _evidence_line(b, ev)
    if ev.kind is _MILESTONE and "watchdog" in ev.text:  # SGLang's server_args (.activity)
        _setattr(s, "activity", activity.on_server_args(s.activity, ev.text))


def _decode(b: _Batch, ev: DecodeStats) -> None:
    """The other hot path: one ``Decode batch`` / ``Engine 000`` stats line."""
    if not decode(b, ev):  # another tensor-parallel rank's copy of a counted line
        return
    s = b.s
    # stats lines mean the server is serving, even when the log never showed the ready
    # line (--skip-server-warmup, a log that starts mid-run)
    if (s.phase is not Phase.SERVING and s.crash is None and ev.source == "log"
            and s.phase.rank < Phase.SERVING.rank):
        _serving(b, ev.lineno, ev.time, evidence.SERVING_FROM_DECODE)


def _serving(b: _Batch, lineno: int, time: str | None, reason: str) -> None:
    """A stats line: the server is serving; inferred when nothing showed it start."""
    if evidence.serving_inferred(b.s.phase):
        _infer_phase(b, Phase.SERVING, lineno, time, reason)
    else:
        _with_phase(b, PhaseEvent(Phase.SERVING, lineno, time))


def _apply(b: _Batch, ev: Event) -> None:  # a flat dispatch, one branch per event type
    if isinstance(ev, LogLine):  # the two hot paths first (neither carries a time)
        _log_line(b, ev)
        return
    if isinstance(ev, DecodeStats):
        _decode(b, ev)
        return
    s = b.s
    t = getattr(ev, "t", None)
    if isinstance(t, float | int) and t > 0:
        b.set(now=float(t) if s.now is None else max(s.now, float(t)))
        if s.t_start is None:
            b.set(t_start=float(t))
    now = s.now if s.now is not None else 0.0

    if isinstance(ev, SpecStats):
        spec(b, ev, now)
        if ev.source == "log" and s.crash is None and s.phase.rank < Phase.SERVING.rank:
            _serving(b, ev.lineno, ev.time, evidence.SERVING_FROM_SPEC)
    elif isinstance(ev, EngineDetected):
        b.set(engine=ev.engine, engine_inferred=None)
    elif isinstance(ev, PhaseEvent):
        _with_phase(b, ev)
    elif isinstance(ev, Progress):
        b.set(**{"shards" if ev.what == "shards" else "graphs": ev})
    elif isinstance(ev, SpecConfig):
        b.set(spec=_merge_spec(s.spec, ev))
    elif isinstance(ev, HiddenStateDims):
        if ev.dim not in s.hidden_dims:
            # bounded: a log of thousands of distinct dims made every event cost O(dims)
            kept = s.hidden_dims if len(s.hidden_dims) < MAX_HIDDEN_DIMS else s.hidden_dims[:-1]
            b.set(hidden_dims=(*kept, ev.dim))
    elif isinstance(ev, ModelInfo):
        b.set(models=(*s.models, ev))
    elif isinstance(ev, CrashEvent):
        _with_crash(b, ev)
    elif isinstance(ev, LogRestarted):
        _restart(b)
    elif isinstance(ev, LogOpened):
        b.set(log_start=ev.start, log_size=ev.size, summary=None,
              lineno_base=0 if ev.start == 0 else None)
    elif isinstance(ev, LogPrefixCounted):
        b.set(lineno_base=ev.lines)
    elif isinstance(ev, SummaryProgress):
        if s.summary is None or not s.summary.finished:  # a late progress report after the end
            b.set(summary=ev)
    elif isinstance(ev, HealthSample):
        b.set(health=ev, ever_ready_health=s.ever_ready_health or ev.state == "ready")
        if ev.state == "ready":
            b.set(health_ok_t=ev.t)
    elif isinstance(ev, MetricsSample):
        apply_metrics(b, ev)
    elif isinstance(ev, ServerInfo):
        b.set(server_info=ev)
        if ev.spec is not None:
            b.set(spec=_merge_spec(s.spec, ev.spec))
    elif isinstance(ev, DraftConfig):
        b.set(draft_config=ev)
    elif isinstance(ev, ProcessSample):
        old = s.process.pid if s.process is not None else (
            s.process_exit.pid if s.process_exit is not None else None)
        if old is not None and old != ev.pid:
            # a new server process is a new run: after the old one's exit was seen (before the
            # new run's first line), or a live new pid where the old one was still thought up
            if s.process_ended or ev.status not in _GONE:
                _restart(b, truncated=False)
            _new_process(b, ev)
        b.set(process=ev, activity=activity.on_process(b.s.activity, ev))
    elif isinstance(ev, DownloadSample):
        b.set(activity=activity.on_download(b.s.activity, ev))
    elif isinstance(ev, ProcessExited):
        b.set(process_exit=ev, process_ended=True)
    elif isinstance(ev, GpuSample):
        # keyed by (host, index): on a multi-node run every host has a GPU 0
        peaks = {(h, i): v for h, i, v in s.gpu_mem_peak}
        for g in ev.gpus:
            if g.mem_used is not None:
                key = (g.host or ev.host, g.index)
                peaks[key] = max(peaks.get(key, 0), g.mem_used)
        b.set(gpus=ev, gpu_mem_peak=tuple((h, i, v) for (h, i), v in sorted(peaks.items())),
              activity=activity.on_gpu(s.activity, ev, s.process.pids if s.process else ()))
    elif isinstance(ev, SourceFailed | SourceRecovered):
        b.set(failures=_upsert_failure(s.failures, ev))
    elif isinstance(ev, ConnectionState):
        # a host keeps its place (first seen, i.e. --ssh order): the UI lists them in this order
        if any(c.host == ev.host for c in s.connections):
            b.set(connections=tuple(ev if c.host == ev.host else c for c in s.connections))
        else:
            b.set(connections=(*s.connections, ev))
    elif isinstance(ev, Baseline):
        b.set(baseline_tok_s=ev.tok_s)
    elif isinstance(ev, SpecHistogram):
        seen, more = s.client_hist, ev.counts
        width = max(len(seen), len(more))
        b.set(client_hist=tuple((seen[i] if i < len(seen) else 0)
                                + (more[i] if i < len(more) else 0) for i in range(width)))
    elif isinstance(ev, UserMarker):
        b.set(markers=(*s.markers, ev))
    elif isinstance(ev, UsualTimes):
        b.set(usual=ev)
    elif isinstance(ev, PreviousRun):
        b.set(previous=ev)
    # PrefillStats and Tick carry nothing the state keeps (Tick only advanced ``now``)


# Crash kinds from least to most specific (crash.KIND_SPECIFICITY); a later, more specific root
# cause replaces a generic one (an NCCL error followed by SIGQUIT is "nccl", not "killed").
def _specificity(c: CrashEvent) -> int:
    return KIND_SPECIFICITY.get(c.kind, max(KIND_SPECIFICITY.values()))


def reduce(state: DashboardState, events: Iterable[Event]) -> DashboardState:
    """Apply a batch of events, then re-evaluate the alert rules once for the whole batch.

    Returns ``state`` itself when the batch is empty, so consumers can skip a redraw.
    """
    b: _Batch | None = None
    for ev in events:
        if b is None:
            b = _Batch(state)
        _apply(b, ev)
    if b is None:
        return state
    new = b.finish()
    alerts = evaluate_alerts(new)
    if alerts != new.alerts:
        _setattr(new, "alerts", alerts)
    return new


_FIELDS = tuple(f.name for f in dataclasses.fields(DashboardState))
