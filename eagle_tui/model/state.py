"""The one immutable dashboard state and ``reduce(state, events)``.

Everything a consumer shows (the TUI, ``wait``'s progress lines, ``report``'s JSON) is a pure
function of this state, and the state is a pure function of the event stream. That is what lets a
recorded session replay into exactly the live state, and lets tests drive the whole product with
scripted events.

Log *text* is deliberately not kept here beyond a short tail (``recent_lines``): the log view owns
its own bounded line buffer, fed with the same ``LogLine`` events, so a 50k lines/s log never
copies a 10,000-line tuple per batch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

from .alerts import Alert, evaluate_alerts
from .crash import KIND_SPECIFICITY
from .events import (
    Baseline,
    ConnectionState,
    CrashEvent,
    DecodeStats,
    DraftConfig,
    Engine,
    EngineDetected,
    Event,
    GpuSample,
    HealthSample,
    HiddenStateDims,
    LineKind,
    LogLine,
    LogRestarted,
    MetricsSample,
    ModelInfo,
    Phase,
    PhaseEvent,
    PrefillStats,
    ProcessExited,
    ProcessSample,
    Progress,
    ServerInfo,
    SourceFailed,
    SourceRecovered,
    SpecConfig,
    SpecStats,
    Tick,
    UserMarker,
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


@dataclass(frozen=True, slots=True)
class DashboardState:
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
    # metrics, from the log
    accept_len: Series = field(default_factory=Series)  # per stats line (SGLang / vLLM)
    gen_tps: Series = field(default_factory=Series)
    accept_rate: Series = field(default_factory=Series)
    per_position: tuple[float, ...] = ()
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
    gpus: GpuSample | None = None
    gpu_mem_peak: tuple[tuple[int, int], ...] = ()  # (index, peak bytes)
    failures: tuple[SourceFailed, ...] = ()  # currently failing sources, one per source
    connections: tuple[ConnectionState, ...] = ()
    restarts: int = 0
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
    def tok_s(self) -> float | None:
        """Best current tok/s: the log's last value, else /metrics' windowed rate."""
        if self.gen_tps.last is not None:
            return self.gen_tps.last
        return self.m_gen_tps.last

    @property
    def current_accept_len(self) -> float | None:
        if self.accept_len.last is not None:
            return self.accept_len.last
        return self.m_accept_len.last

    @property
    def speedup(self) -> float | None:
        tps = self.gen_tps.median(last_n=10) or self.m_gen_tps.median(last_n=10)
        if tps is None or not self.baseline_tok_s:
            return None
        return tps / self.baseline_tok_s


def _with_phase(state: DashboardState, ev: PhaseEvent, t: float | None) -> DashboardState:
    # a crash freezes the phase (and its marks): the report's phase is the furthest reached
    # *before* the crash
    if state.crash is not None:
        return state
    phases = state.phases
    if state.phase_mark(ev.phase) is None:
        phases = (*phases, PhaseMark(ev.phase, ev.lineno, ev.time, t, ev.detail, ev.role))
    phase = ev.phase if ev.phase.rank > state.phase.rank else state.phase
    return dataclasses.replace(state, phases=phases, phase=phase)


def _with_crash(state: DashboardState, ev: CrashEvent) -> DashboardState:
    if state.crash is not None and _specificity(state.crash) >= _specificity(ev):
        return state
    if ev.kind == "port_in_use" and state.phase is Phase.READY:
        # vLLM: "Application startup complete." followed by a bind error was never ready
        marks = tuple(m for m in state.phases if m.phase is not Phase.READY)
        return dataclasses.replace(state, crash=ev, phase=Phase.HTTP_SERVER, phases=marks)
    return dataclasses.replace(state, crash=ev)


def _upsert_failure(
    failures: tuple[SourceFailed, ...], ev: SourceFailed | SourceRecovered
) -> tuple[SourceFailed, ...]:
    kept = tuple(f for f in failures if f.source != ev.source)
    return (*kept, ev) if isinstance(ev, SourceFailed) else kept


def _apply(state: DashboardState, ev: Event) -> DashboardState:  # noqa: C901 - a flat dispatch
    rep = dataclasses.replace
    t = getattr(ev, "t", None)
    if isinstance(t, float | int) and t > 0:
        state = rep(
            state,
            now=float(t) if state.now is None else max(state.now, float(t)),
            t_start=float(t) if state.t_start is None else state.t_start,
        )
    now = state.now if state.now is not None else 0.0

    if isinstance(ev, LogLine):
        recent = (*state.recent_lines[-(RECENT_LINES - 1) :], ev)
        first_err = state.first_error_line
        if first_err is None and ev.kind in (LineKind.ERROR, LineKind.TRACEBACK):
            first_err = ev.lineno
        return rep(state, lines=max(state.lines, ev.lineno), recent_lines=recent,
                   first_error_line=first_err)
    if isinstance(ev, EngineDetected):
        return rep(state, engine=ev.engine)
    if isinstance(ev, PhaseEvent):
        return _with_phase(state, ev, state.now)
    if isinstance(ev, Progress):
        if ev.what == "shards":
            return rep(state, shards=ev)
        return rep(state, graphs=ev)
    if isinstance(ev, SpecConfig):
        if state.spec is not None and ev.source != "log" and state.spec.source == "log":
            # the log's server_args line is authoritative; fill only what it lacks
            merged = SpecConfig(
                algorithm=state.spec.algorithm or ev.algorithm,
                draft_model=state.spec.draft_model or ev.draft_model,
                num_steps=state.spec.num_steps if state.spec.num_steps is not None else ev.num_steps,
                eagle_topk=state.spec.eagle_topk if state.spec.eagle_topk is not None
                else ev.eagle_topk,
                num_draft_tokens=state.spec.num_draft_tokens
                if state.spec.num_draft_tokens is not None else ev.num_draft_tokens,
                source=state.spec.source,
            )
            return rep(state, spec=merged)
        return rep(state, spec=ev)
    if isinstance(ev, DecodeStats):
        s = rep(
            state,
            last_decode=ev,
            running=ev.running if ev.running is not None else state.running,
            queued=ev.queued if ev.queued is not None else state.queued,
            kv_usage=ev.kv_usage if ev.kv_usage is not None else state.kv_usage,
        )
        if ev.gen_tps is not None:
            s = rep(s, gen_tps=s.gen_tps.append(now, ev.gen_tps))
        if ev.accept_len is not None:
            s = rep(s, accept_len=s.accept_len.append(now, ev.accept_len))
        if ev.accept_rate is not None:
            s = rep(s, accept_rate=s.accept_rate.append(now, ev.accept_rate))
        # stats lines mean the server is serving, even when the log never showed the ready
        # line (--skip-server-warmup, a log that starts mid-run)
        if s.phase.rank < Phase.SERVING.rank and s.crash is None and ev.source == "log":
            s = _with_phase(s, PhaseEvent(Phase.SERVING, ev.lineno, ev.time), s.now)
        return s
    if isinstance(ev, PrefillStats):
        return state
    if isinstance(ev, SpecStats):
        s = rep(state, last_spec=ev, per_position=ev.per_position or state.per_position)
        if ev.mean_accept_len is not None:
            s = rep(s, accept_len=s.accept_len.append(now, ev.mean_accept_len))
        if ev.acceptance_rate is not None:
            s = rep(s, accept_rate=s.accept_rate.append(now, ev.acceptance_rate))
        return s
    if isinstance(ev, HiddenStateDims):
        if ev.dim in state.hidden_dims:
            return state
        return rep(state, hidden_dims=(*state.hidden_dims, ev.dim))
    if isinstance(ev, ModelInfo):
        return rep(state, models=(*state.models, ev))
    if isinstance(ev, CrashEvent):
        return _with_crash(state, ev)
    if isinstance(ev, LogRestarted):
        fresh = DashboardState(
            t_start=state.t_start, now=state.now, baseline_tok_s=state.baseline_tok_s,
            gpus=state.gpus, health=state.health, process=state.process,
            draft_config=state.draft_config, connections=state.connections,
        )
        return rep(fresh, restarts=state.restarts + 1)
    if isinstance(ev, HealthSample):
        return rep(state, health=ev, ever_ready_health=state.ever_ready_health or ev.state == "ready")
    if isinstance(ev, MetricsSample):
        s = rep(state, last_metrics=ev)
        if ev.gen_tps is not None:
            s = rep(s, m_gen_tps=s.m_gen_tps.append(ev.t, ev.gen_tps))
        if ev.accept_len is not None:
            s = rep(s, m_accept_len=s.m_accept_len.append(ev.t, ev.accept_len))
        if ev.acceptance_rate is not None:
            s = rep(s, m_acceptance_rate=ev.acceptance_rate)
        if ev.per_position:
            s = rep(s, m_per_position=ev.per_position)
        if s.last_decode is None:
            s = rep(
                s,
                running=ev.running if ev.running is not None else s.running,
                queued=ev.queued if ev.queued is not None else s.queued,
                kv_usage=ev.kv_usage if ev.kv_usage is not None else s.kv_usage,
            )
        if s.engine == "unknown" and ev.engine != "unknown":
            s = rep(s, engine=ev.engine)
        return s
    if isinstance(ev, ServerInfo):
        s = rep(state, server_info=ev)
        if ev.spec is not None:
            s = _apply(s, ev.spec)
        return s
    if isinstance(ev, DraftConfig):
        return rep(state, draft_config=ev)
    if isinstance(ev, ProcessSample):
        return rep(state, process=ev)
    if isinstance(ev, ProcessExited):
        return rep(state, process_exit=ev)
    if isinstance(ev, GpuSample):
        peaks = dict(state.gpu_mem_peak)
        for g in ev.gpus:
            if g.mem_used is not None:
                peaks[g.index] = max(peaks.get(g.index, 0), g.mem_used)
        return rep(state, gpus=ev, gpu_mem_peak=tuple(sorted(peaks.items())))
    if isinstance(ev, SourceFailed | SourceRecovered):
        return rep(state, failures=_upsert_failure(state.failures, ev))
    if isinstance(ev, ConnectionState):
        kept = tuple(c for c in state.connections if c.host != ev.host)
        return rep(state, connections=(*kept, ev))
    if isinstance(ev, Baseline):
        return rep(state, baseline_tok_s=ev.tok_s)
    if isinstance(ev, UserMarker):
        return rep(state, markers=(*state.markers, ev))
    if isinstance(ev, Tick):
        return state
    return state


# Crash kinds from least to most specific (crash.KIND_SPECIFICITY); a later, more specific root
# cause replaces a generic one (an NCCL error followed by SIGQUIT is "nccl", not "killed").
def _specificity(c: CrashEvent) -> int:
    return KIND_SPECIFICITY.get(c.kind, max(KIND_SPECIFICITY.values()))


def reduce(state: DashboardState, events: Iterable[Event]) -> DashboardState:
    """Apply a batch of events, then re-evaluate the alert rules once for the whole batch."""
    changed = False
    for ev in events:
        new = _apply(state, ev)
        if new is not state:
            state = new
            changed = True
    if changed:
        alerts = evaluate_alerts(state)
        if alerts != state.alerts:
            state = dataclasses.replace(state, alerts=alerts)
    return state
