"""The startup stepper's steps and their status, from the state (pure).

Seven steps a launch goes through (args, weights, KV cache, CUDA graphs, HTTP, warmup,
ready), each done / active / failed / pending with its elapsed seconds. The Startup pane draws
them; the ETA and the slow-phase alert (``eta``, ``alerts``) read the same figures, so the
pane and the alert always agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from eagle_tui.model.events import Phase
from eagle_tui.model.ingest.logclock import best_span, span
from eagle_tui.model.state import DashboardState, PhaseMark
from eagle_tui.model.views.ready import ready_seconds


@dataclass(frozen=True, slots=True)
class Step:
    label: str
    starts: tuple[Phase, ...]  # first of these marks starts the step
    done_at: Phase  # the step is done once the state's phase reaches this


STEPS = (
    Step("args", (Phase.INIT,), Phase.LOADING_WEIGHTS),
    Step("weights", (Phase.LOADING_WEIGHTS,), Phase.WEIGHTS_LOADED),
    Step("KV cache", (Phase.WEIGHTS_LOADED, Phase.KV_CACHE), Phase.CUDA_GRAPH),
    Step("CUDA graphs", (Phase.CUDA_GRAPH,), Phase.HTTP_SERVER),
    Step("HTTP", (Phase.HTTP_SERVER,), Phase.HTTP_SERVER),
    Step("warmup", (Phase.HTTP_SERVER,), Phase.READY),
    Step("ready", (Phase.READY,), Phase.READY),
)

def _mark(state: DashboardState, phases: tuple[Phase, ...]) -> PhaseMark | None:
    marks = [m for p in phases if (m := state.startup.phase_mark(p)) is not None]
    return min(marks, key=lambda m: m.phase.rank) if marks else None


def _end_mark(state: DashboardState, done_at: Phase) -> PhaseMark | None:
    marks = [m for m in state.startup.phases if m.phase.rank >= done_at.rank and m.t is not None]
    return min(marks, key=lambda m: m.t or 0.0) if marks else None


def _span(start: PhaseMark | None, end: PhaseMark | None,
          start_t: float | None) -> float | None:
    """Observed seconds from start to end, or the log's own when both came in one catch-up
    burst (attached to a server that was already up: see ``model.logclock``)."""
    observed = (max(0.0, end.t - start_t) if end is not None and end.t is not None
                and start_t is not None else None)
    logged = span(start.log_s, end.log_s) if start is not None and end is not None else None
    return best_span(observed, logged)


def step_states(state: DashboardState) -> list[tuple[Step, str, float | None]]:
    """Each step with its status (done / active / failed / pending) and elapsed seconds."""
    out: list[tuple[Step, str, float | None]] = []
    started = state.startup.phase is not Phase.NONE or state.log.lines > 0
    active_given = False
    for step in STEPS:
        reached = state.startup.phase.rank >= min(p.rank for p in step.starts) or (
            step.label == "args" and started
        )
        done = state.startup.phase.rank >= step.done_at.rank
        start_mark = _mark(state, step.starts)
        start_t = start_mark.t if start_mark else (
            state.clock.t_start if step.label == "args" else None)
        elapsed: float | None = None
        if done:
            status = "done"
            end = _end_mark(state, step.done_at)
            if step.label == "ready":  # time to ready: the one meaning (.ready)
                elapsed = ready_seconds(state)
            elif step.starts[0] != step.done_at:
                elapsed = _span(start_mark, end, start_t)
        elif reached and not active_given:
            status = "failed" if state.startup.crash is not None else "active"
            active_given = True
            if start_t is not None and state.clock.now is not None:
                elapsed = max(0.0, state.clock.now - start_t)
        else:
            status = "pending"
        out.append((step, status, elapsed))
    return out



__all__ = ["STEPS", "Step", "step_states"]
