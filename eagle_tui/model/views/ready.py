"""What "ready" means, once, for every view: the startup pane, the headless lines, the run
history (``runs list/show/compare``) and the report.

**Time to ready** is the seconds from the server's start to its first readiness: from the log,
its first startup line to the engine's ready line (or the first ``/health`` 200, whichever came
first), on the log's own clock when the lines came in one catch-up burst (a log read after the
fact), else as observed from the moment eagle-tui started watching a server it saw start. An
observer that saw no startup line (attached to a server already up, its log read from the end)
has no time to ready: it did not see the start, and never guesses one.
"""

from __future__ import annotations

from eagle_tui.model.events import Phase
from eagle_tui.model.ingest.logclock import best_span, span
from eagle_tui.model.state import DashboardState, PhaseMark

MEANING = ("seconds from the server's start (its first startup line) to its first readiness "
           "(the engine's ready line or the first /health 200)")


def readiness_mark(state: DashboardState) -> PhaseMark | None:
    """The first mark of readiness (the ready line, the first /health 200, or a later phase)."""
    marks = [m for m in state.startup.phases if m.phase.rank >= Phase.READY.rank]
    timed = [m for m in marks if m.t is not None]
    if timed:
        return min(timed, key=lambda m: m.t or 0.0)
    return min(marks, key=lambda m: m.lineno) if marks else None


def start_mark(state: DashboardState) -> PhaseMark | None:
    """The server's first startup line seen (``None``: the observer did not see the start)."""
    marks = [m for m in state.startup.phases if m.phase.rank < Phase.READY.rank]
    return min(marks, key=lambda m: m.lineno) if marks else None


def _first_logged(marks: list[PhaseMark]) -> PhaseMark | None:
    timed = [m for m in marks if m.log_s is not None]
    return min(timed, key=lambda m: m.lineno) if timed else None


def ready_seconds(state: DashboardState) -> float | None:
    """The time to ready (:data:`MEANING`), ``None`` when not ready or the start was not seen."""
    ready, start = readiness_mark(state), start_mark(state)
    health_t = state.liveness.first_ready_t
    if start is None or (ready is None and health_t is None):
        return None
    t_start = state.clock.t_start
    times = [t for t in (ready.t if ready is not None else None, health_t) if t is not None]
    observed = max(0.0, min(times) - t_start) if times and t_start is not None else None
    phases = state.startup.phases
    first = _first_logged([m for m in phases if m.phase.rank < Phase.READY.rank])
    ready_line = _first_logged([m for m in phases if m.phase.rank >= Phase.READY.rank])
    logged = span(first.log_s, ready_line.log_s) if first is not None and ready_line is not None \
        else None
    secs = best_span(observed, logged)
    return round(secs, 3) if secs is not None else None


__all__ = ["MEANING", "readiness_mark", "ready_seconds", "start_mark"]
