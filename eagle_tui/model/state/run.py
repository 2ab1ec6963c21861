"""The run's records: how far its startup got (:class:`Startup`) and its clock (:class:`Clock`),
with the views that read only them."""

from __future__ import annotations

from eagle_tui.model.events import (
    CrashEvent,
    Engine,
    EngineTimings,
    Phase,
    PreviousRun,
    Progress,
    SubStep,
    UsualTimes,
    WeightBytes,
)
from eagle_tui.model.ingest.evidence import Inferred
from eagle_tui.model.record import Record, record


@record
class PhaseMark(Record):
    """When a phase was first reached: log line number, server time text and observed time."""

    phase: Phase
    lineno: int
    time: str | None
    t: float | None
    detail: str = ""
    role: str = "target"
    log_s: float | None = None  # the server's clock (``logclock``): durations on attach
    inferred: str = ""  # why the phase is implied, when no milestone line said it (.evidence)


@record
class Startup(Record):
    """The engine, the furthest phase reached and its marks, the crash, and the runs before."""

    engine: Engine = "unknown"
    # evidence (.evidence): an engine implied by the lines, not detected from a banner
    engine_inferred: Inferred | None = None
    phase: Phase = Phase.NONE  # furthest phase reached (never goes back, except on restart)
    phases: tuple[PhaseMark, ...] = ()
    shards: Progress | None = None
    graphs: Progress | None = None
    piecewise: Progress | None = None  # SGLang's piecewise prefill graphs (compile, capture)
    crash: CrashEvent | None = None
    usual: UsualTimes | None = None  # earlier runs' phase times (startup ETA, slow phases)
    restarts: int = 0
    restart_t: float | None = None  # when the current run began (a restart), observed time
    # why: "truncated" (the log file shrank: copytruncate, a ``>`` relaunch), "replaced" (a new
    # file at the path) or "" (a new server process, its counters reset)
    restart_reason: str = ""
    previous: PreviousRun | None = None  # the run this one replaced (shown for comparison)
    # what the engine reports itself: its measured phase durations, the step it is in inside
    # compiling, the checkpoint's size and how much of it was read (``fold/startup.py``)
    engine_times: EngineTimings | None = None
    substep: SubStep | None = None
    weight_bytes: WeightBytes | None = None

    @property
    def ready(self) -> bool:
        return self.phase.rank >= Phase.READY.rank and self.crash is None

    @property
    def halted(self) -> bool:
        """Whether a crash ended this run: a container's crash loop, kept in the run its engine
        restarted, does not (that run's phases go on)."""
        return self.crash is not None and self.crash.kind != "crash_loop"

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


@record
class Clock(Record):
    """The events' clock: when the session began and the newest event time."""

    t_start: float | None = None
    now: float | None = None

    @property
    def elapsed(self) -> float | None:
        if self.t_start is None or self.now is None:
            return None
        return max(0.0, self.now - self.t_start)
