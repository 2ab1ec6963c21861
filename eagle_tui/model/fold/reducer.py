"""``reduce(state, events)``: the one writer of :class:`~.state.DashboardState`.

Each batch of events is applied to a private working copy (:mod:`.batch`), then the alert rules
are evaluated once for the whole batch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from eagle_tui.model.buffers.logbuffer import ERROR_KINDS
from eagle_tui.model.events import (
    Baseline,
    ConnectionState,
    CrashEvent,
    DecodeStats,
    DownloadSample,
    DraftConfig,
    EngineDetected,
    EngineTimings,
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
    PrefillStats,
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
    StopRequested,
    SubStep,
    SummaryProgress,
    UserMarker,
    UsualTimes,
    WeightBytes,
)
from eagle_tui.model.fold import hold
from eagle_tui.model.fold.batch import NO_LINE, Batch
from eagle_tui.model.fold.restarts import (
    carried,
    drawn_by_log,
    log_restart_counts,
    rerun_in_log,
    up_again,
)
from eagle_tui.model.fold.side import SIDE_EVENTS, apply_side, process_exited
from eagle_tui.model.fold.startup import startup_detail
from eagle_tui.model.fold.stats import apply_metrics, decode, spec
from eagle_tui.model.ingest import evidence
from eagle_tui.model.ingest.crash import KIND_SPECIFICITY, STOP_KINDS
from eagle_tui.model.ingest.crashhints import hint_for
from eagle_tui.model.ingest.logclock import log_seconds
from eagle_tui.model.state import (
    DashboardState,
    LiveSources,
    LiveTimes,
    LogCounters,
    LogStats,
    PhaseMark,
    ServedConfig,
    ServerMetrics,
    Startup,
    activity,
)
from eagle_tui.model.views.alerts import evaluate_alerts

_GONE = ("exited", "not_found", "zombie")
MAX_HIDDEN_DIMS = 32  # a server shows one to three; more is a hostile or garbled log
_MILESTONE = LineKind.MILESTONE


def _with_phase(b: Batch, ev: PhaseEvent) -> None:
    if (why := rerun_in_log(b.s, ev)) is not None:
        _restart(b, truncated=False, reason=why)
    st = b.s.startup
    # a crash freezes the phase (and its marks): the report's phase is the furthest reached
    # *before* the crash
    if st.halted:
        return
    old = st.phase_mark(ev.phase)
    if old is None or old.inferred:  # a milestone line replaces what was only implied
        mark = PhaseMark(ev.phase, ev.lineno, ev.time, b.s.clock.now, ev.detail, ev.role,
                         log_seconds(ev.time))
        b.put("startup", phases=(*(m for m in st.phases if m is not old), mark))
    if ev.phase.rank > st.phase.rank:
        b.put("startup", phase=ev.phase)
    up_again(b, ev.phase.rank >= Phase.READY.rank)


def _infer_phase(b: Batch, phase: Phase, lineno: int, time: str | None, reason: str) -> None:
    """Raise the phase to one the evidence implies (never lower it; a crash does not freeze
    it: the crash itself is the evidence)."""
    st = b.s.startup
    if phase.rank <= st.phase.rank:
        return
    marks = tuple(m for m in st.phases if m.phase is not phase)
    mark = PhaseMark(phase, lineno, time, b.s.clock.now, "", "target", log_seconds(time),
                     inferred=reason)
    b.put("startup", phase=phase, phases=(*marks, mark))


def _evidence_line(b: Batch, ev: LogLine) -> None:
    """A traceback or error line: the engine and phase its frames name (.evidence)."""
    st = b.s.startup
    if st.engine == "unknown":
        found = evidence.engine_in_line(ev.text)
        if found is not None:
            b.put("startup", engine=found[0],
                  engine_inferred=evidence.Inferred(found[0], ev.lineno, found[1]))
    elif st.engine_inferred is not None:
        found = evidence.engine_in_line(ev.text)
        if found is not None and evidence.corrects(st.engine_inferred.value, found[0]):
            b.put("startup", engine=found[0],
                  engine_inferred=evidence.Inferred(found[0], ev.lineno, found[1]))
    if b.s.startup.phase.rank < Phase.READY.rank:
        implied = evidence.phase_in_line(ev.text)
        # (serving only in a fragment: with the server's start in view, a failing loop can be
        # the warm-up request's)
        if implied is not None and (implied[0] is not Phase.SERVING
                                    or evidence.serving_inferred(b.s.startup.phase)):
            _infer_phase(b, implied[0], ev.lineno, None, implied[1])


def _with_crash(b: Batch, ev: CrashEvent) -> None:
    st = b.s.startup
    implied = evidence.phase_of_crash(ev, st.engine)
    if implied is not None and st.phase.rank < Phase.READY.rank:
        _infer_phase(b, implied[0], ev.lineno, ev.time, implied[1])
        st = b.s.startup
    mark = st.phase_mark(st.phase)
    if ev.kind == "cuda_oom" and (st.engine_inferred is not None
                                  or (mark is not None and mark.inferred)):
        # an OOM's fix depends on the phase and the engine's flags, and the parser's hint knew
        # only the lines' own: the evidence (frames, the crash itself) knows more. (Only the
        # OOM's: the message here is cut, and other hints take numbers from all of it.)
        ev = replace(ev, hint=hint_for(ev.kind, st.engine, st.phase, ev.message))
    refines = st.crash is not None and (st.crash.kind, st.crash.lineno) == (ev.kind, ev.lineno)
    if st.crash is not None and _specificity(st.crash) >= _specificity(ev) and not refines:
        return  # (a refinement: the same crash line, its cause read from the lines below)
    if b.s.live.stopped is not None and ev.kind in STOP_KINDS:
        return  # the user's stop killed it: its children's death lines are the stop
    if ev.kind == "port_in_use" and st.phase is Phase.READY:
        # vLLM: "Application startup complete." followed by a bind error was never ready
        marks = tuple(m for m in st.phases if m.phase is not Phase.READY)
        b.put("startup", crash=ev, phase=Phase.HTTP_SERVER, phases=marks)
        b.scan = True
        return
    b.put("startup", crash=ev)


def _upsert_failure(
    failures: tuple[SourceFailed, ...], ev: SourceFailed | SourceRecovered
) -> tuple[SourceFailed, ...]:
    kept = tuple(f for f in failures if f.source != ev.source)
    return (*kept, ev) if isinstance(ev, SourceFailed) else kept


def _merge_spec(old: SpecConfig | None, ev: SpecConfig) -> SpecConfig:
    if old is not None and ev.algorithm is None and ev.draft_model is None:
        return old  # only "speculation is on" (a drafter loading): what is known stays
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


def _restart(b: Batch, *, truncated: bool = True, reason: str = "", count: bool = True) -> None:
    """The log restarted (``truncated``: the file began again at line 1; else a new run's first
    line in the same log): forget everything the old log said, keep the live sources' view."""
    from eagle_tui.model.views.runsummary import previous_run  # (only a restart needs it)

    s = b.s
    st, log, live = s.startup, s.log, s.live
    fresh = Startup(restarts=st.restarts + 1, restart_t=s.clock.now, usual=st.usual,
                    previous=previous_run(s, "") or st.previous, restart_reason=reason,
                    crash=carried(st))
    if not truncated:  # the same file goes on: the same log parser, which tells its engine once
        fresh = replace(fresh, engine=st.engine, engine_inferred=st.engine_inferred)
    b.swap("startup", fresh if count else st)
    b.swap("config", ServedConfig(draft_config=s.config.draft_config))
    b.swap("stats", LogStats())
    b.swap("metrics", ServerMetrics(baseline_tok_s=s.metrics.baseline_tok_s))
    b.swap("live", LiveSources(health=live.health, process=live.process,
                               failures=live.failures, connections=live.connections))
    b.swap("liveness", LiveTimes())
    b.swap("alerts", ())
    b.swap("holds", hold.cleared(s.holds))
    b.pending = {}
    b.scan = True
    if truncated:
        b.recent.clear()
        b.line_now = NO_LINE
        b.max_lineno = 0
        b.swap("log", LogCounters())
        return
    # the same file goes on: its line numbers too, and where the view opened it (the tail's
    # start, the count of the lines before it, their summary)
    b.swap("log", replace(log, first_error_line=None))


def _new_process(b: Batch, ev: ProcessSample) -> None:
    """Another server process than the one watched (it exited and a new one was found): a new
    run. Its clock starts when the process started; the old one's health and exit are gone."""
    now = b.s.clock.now
    start = ev.started if ev.started is not None and ev.started > 0 else ev.t
    b.put("live", process=ev, process_exit=None, health=None, ever_ready_health=False,
          stopped=None)
    b.put("liveness", first_ready_t=None)
    b.put("clock", t_start=min(start, now) if now is not None else start)


def _log_line(b: Batch, ev: LogLine) -> None:
    """The hot path of a busy log (most events): no record is touched until ``finish``."""
    b.recent.append(ev)
    s = b.s
    b.line_now = s.clock.now
    if ev.lineno > b.max_lineno:
        b.max_lineno = ev.lineno
    if s.log.first_error_line is None and ev.kind in ERROR_KINDS:  # the buffer's one rule
        b.put("log", first_error_line=ev.lineno)
    if b.scan and evidence.worth_scanning(ev.kind, ev.text):  # startup, or a fragment
        _evidence_line(b, ev)
    if ev.kind is _MILESTONE and "watchdog" in ev.text:  # SGLang's server_args (.activity)
        b.swap("activity", activity.on_server_args(s.activity, ev.text))


def _decode(b: Batch, ev: DecodeStats) -> None:
    """The other hot path: one ``Decode batch`` / ``Engine 000`` stats line."""
    if not decode(b, ev):  # another tensor-parallel rank's copy of a counted line
        return
    st = b.s.startup
    # stats lines mean the server is serving, even when the log never showed the ready
    # line (--skip-server-warmup, a log that starts mid-run)
    if (st.phase is not Phase.SERVING and not st.halted and ev.source == "log"
            and st.phase.rank < Phase.SERVING.rank):
        _serving(b, ev.lineno, ev.time, evidence.SERVING_FROM_DECODE)


def _serving(b: Batch, lineno: int, time: str | None, reason: str) -> None:
    """A stats line: the server is serving; inferred when nothing showed it start."""
    if evidence.serving_inferred(b.s.startup.phase):
        _infer_phase(b, Phase.SERVING, lineno, time, reason)
    else:
        _with_phase(b, PhaseEvent(Phase.SERVING, lineno, time))


def _clock(b: Batch, t: object) -> float:
    """An event's time moves the clock on (never back); the clock's time after it."""
    c = b.s.clock
    if isinstance(t, float | int) and t > 0:
        now = float(t) if c.now is None else max(c.now, float(t))
        b.put("clock", now=now, t_start=float(t) if c.t_start is None else c.t_start)
        return now
    return c.now if c.now is not None else 0.0


def _apply(b: Batch, ev: Event) -> None:  # a flat dispatch, one branch per event type
    if isinstance(ev, LogLine):  # the two hot paths first (neither carries a time)
        _log_line(b, ev)
        return
    if isinstance(ev, DecodeStats):
        _decode(b, ev)
        return
    now = _clock(b, getattr(ev, "t", None))
    s = b.s

    if isinstance(ev, SpecStats):
        spec(b, ev, now)
        st = s.startup
        if ev.source == "log" and not st.halted and st.phase.rank < Phase.SERVING.rank:
            _serving(b, ev.lineno, ev.time, evidence.SERVING_FROM_SPEC)
    elif isinstance(ev, EngineDetected):
        b.put("startup", engine=ev.engine, engine_inferred=None)
    elif isinstance(ev, PhaseEvent):
        _with_phase(b, ev)
    elif isinstance(ev, EngineTimings | SubStep | WeightBytes):
        if isinstance(ev, SubStep) and s.startup.phase.rank < Phase.CUDA_GRAPH.rank:
            _with_phase(b, PhaseEvent(Phase.CUDA_GRAPH, ev.lineno, ev.time, ev.detail))
        startup_detail(b, ev)
    elif isinstance(ev, Progress):
        b.put("startup", **{ev.what: ev})
    elif isinstance(ev, SpecConfig):
        b.put("config", spec=_merge_spec(s.config.spec, ev))
    elif isinstance(ev, HiddenStateDims):
        dims = s.config.hidden_dims
        if ev.dim not in dims:
            # bounded: a log of thousands of distinct dims made every event cost O(dims)
            kept = dims if len(dims) < MAX_HIDDEN_DIMS else dims[:-1]
            b.put("config", hidden_dims=(*kept, ev.dim))
    elif isinstance(ev, ModelInfo):  # (runs a ``report`` folds together: each model once)
        if not any((m.role, m.architecture) == (ev.role, ev.architecture) for m in s.config.models):
            b.put("config", models=(*s.config.models, ev))
    elif isinstance(ev, CrashEvent):
        _with_crash(b, ev)
    elif isinstance(ev, LogRestarted):
        _restart(b, reason=ev.reason, count=log_restart_counts(s.startup))
    elif isinstance(ev, LogOpened):
        b.put("log", log_start=ev.start, log_size=ev.size, summary=None,
              lineno_base=0 if ev.start == 0 else None)
    elif isinstance(ev, LogPrefixCounted):
        b.put("log", lineno_base=ev.lines)
    elif isinstance(ev, SummaryProgress):
        if s.log.summary is None or not s.log.summary.finished:  # a late report after the end
            b.put("log", summary=ev)
    elif isinstance(ev, HealthSample):
        # (a sample equal to the one held keeps it: records are replaced only for new content)
        health = s.live.health if s.live.health == ev else ev
        b.put("live", health=health,
              ever_ready_health=s.live.ever_ready_health or ev.state == "ready")
        if ev.state == "ready" and s.liveness.health_ok_t != ev.t:
            b.put("liveness", health_ok_t=ev.t)
            if s.liveness.first_ready_t is None:
                b.put("liveness", first_ready_t=ev.t)
            up_again(b)
    elif isinstance(ev, MetricsSample | ServerInfo) and ev.startup is not None:
        startup_detail(b, ev.startup)
        _apply(b, replace(ev, startup=None))
    elif isinstance(ev, MetricsSample):
        apply_metrics(b, ev)
        b.swap("holds", hold.on_metrics(s.holds, ev, now))
    elif isinstance(ev, SIDE_EVENTS):
        apply_side(b, ev, now)
    elif isinstance(ev, ServerInfo):
        b.put("config", server_info=ev)
        if ev.spec is not None:
            b.put("config", spec=_merge_spec(s.config.spec, ev.spec))
    elif isinstance(ev, DraftConfig):
        b.put("config", draft_config=ev)
    elif isinstance(ev, ProcessSample):
        _process(b, ev)
    elif isinstance(ev, DownloadSample):
        b.swap("activity", activity.on_download(s.activity, ev))
    elif isinstance(ev, ProcessExited):
        process_exited(b, ev)
    elif isinstance(ev, StopRequested):
        b.put("live", stopped=ev)
    elif isinstance(ev, GpuSample):
        _gpus(b, ev)
    elif isinstance(ev, SourceFailed | SourceRecovered):
        b.put("live", failures=_upsert_failure(s.live.failures, ev))
    elif isinstance(ev, ConnectionState):
        # a host keeps its place (first seen, i.e. --ssh order): the UI lists them in this order
        conns = s.live.connections
        if any(c.host == ev.host for c in conns):
            b.put("live", connections=tuple(ev if c.host == ev.host else c for c in conns))
        else:
            b.put("live", connections=(*conns, ev))
    elif isinstance(ev, Baseline):
        b.put("metrics", baseline_tok_s=ev.tok_s)
    elif isinstance(ev, SpecHistogram):
        seen, more = s.stats.client_hist, ev.counts
        width = max(len(seen), len(more))
        b.put("stats", client_hist=tuple((seen[i] if i < len(seen) else 0)
                                         + (more[i] if i < len(more) else 0)
                                         for i in range(width)))
    elif isinstance(ev, UserMarker):
        b.put("log", markers=(*s.log.markers, ev))
    elif isinstance(ev, UsualTimes):
        b.put("startup", usual=ev)
    elif isinstance(ev, PreviousRun):
        b.put("startup", previous=ev)
    elif isinstance(ev, PrefillStats):
        # a fragment with no sign of the server's start: its prefill batches are requests being
        # served (with the start in view, a prefill can be the warm-up request's: no inference)
        st = s.startup
        if not st.halted and evidence.serving_inferred(st.phase):
            _infer_phase(b, Phase.SERVING, ev.lineno, ev.time, evidence.SERVING_FROM_PREFILL)
    # Tick carries nothing the state keeps (it only advanced the clock)


def _process(b: Batch, ev: ProcessSample) -> None:
    live = b.s.live
    old = live.process.pid if live.process is not None else (
        live.process_exit.pid if live.process_exit is not None else None)
    if old is not None and old != ev.pid:
        # a new server process is a new run: after the old one's exit was seen (before the
        # new run's first line), or a live new pid where the old one was still thought up;
        # unless the container's log said so after the old one was last seen
        if (live.process_ended or ev.status not in _GONE) and not drawn_by_log(live, b.s.startup):
            _restart(b, truncated=False)
        _new_process(b, ev)
    b.put("live", process=ev)
    b.swap("activity", activity.on_process(b.s.activity, ev))


def _gpus(b: Batch, ev: GpuSample) -> None:
    s = b.s
    # keyed by (host, index): on a multi-node run every host has a GPU 0
    peaks = {(h, i): v for h, i, v in s.gpu.mem_peak}
    for g in ev.gpus:
        if g.mem_used is not None:
            key = (g.host or ev.host, g.index)
            peaks[key] = max(peaks.get(key, 0), g.mem_used)
    mem_peak = tuple((h, i, v) for (h, i), v in sorted(peaks.items()))
    b.put("gpu", sample=ev, mem_peak=mem_peak if mem_peak != s.gpu.mem_peak else s.gpu.mem_peak)
    process = s.live.process
    b.swap("activity", activity.on_gpu(s.activity, ev, process.pids if process else ()))


# Crash kinds from least to most specific (crash.KIND_SPECIFICITY); a later, more specific root
# cause replaces a generic one (an NCCL error followed by SIGQUIT is "nccl", not "killed").
def _specificity(c: CrashEvent) -> int:
    return KIND_SPECIFICITY.get(c.kind, max(KIND_SPECIFICITY.values()))


def reduce(state: DashboardState, events: Iterable[Event]) -> DashboardState:
    """Apply a batch of events, then re-evaluate the alert rules once for the whole batch.

    Returns ``state`` itself when the batch is empty, so consumers can skip a redraw; a record
    that no event of the batch changed is the same object in the new state (copy on write).
    """
    b: Batch | None = None
    for ev in events:
        if b is None:
            b = Batch(state)
        _apply(b, ev)
    if b is None:
        return state
    new = b.finish()
    alerts = evaluate_alerts(new)
    if alerts != new.alerts:
        object.__setattr__(new, "alerts", alerts)
    return new
