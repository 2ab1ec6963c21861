"""The startup stepper's steps and their status, from the state (pure).

Seven steps a launch goes through (args, weights, KV cache, CUDA graphs, HTTP, warmup,
ready), each done / active / failed / pending with its elapsed seconds. The Startup pane draws
them; the ETA and the slow-phase alert (``eta``, ``alerts``) read the same figures, so the
pane and the alert always agree.
"""

from __future__ import annotations

from eagle_tui.model.events import Phase
from eagle_tui.model.ingest.logclock import best_span, span
from eagle_tui.model.record import Record, record
from eagle_tui.model.state import DashboardState, PhaseMark
from eagle_tui.model.views.enginetimes import step_reported
from eagle_tui.model.views.numtext import fixed
from eagle_tui.model.views.ready import ready_seconds


@record
class Step(Record):
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
            elif (engine := step_reported(state, step.label)) is not None:
                elapsed = engine  # the engine's own measure of it (.enginetimes)
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


def step_detail(state: DashboardState, label: str, status: str) -> tuple[str, float | None] | None:
    """What a running step is doing where no count of shards or graphs says it: the
    checkpoint's bytes read (weights) or the step inside compiling (CUDA graphs), as a text and
    the fraction done (``None``: no fraction; the whole: nothing to add)."""
    st = state.startup
    if status not in ("active", "failed"):
        return None
    read = st.weight_bytes
    if label == "weights" and read is not None and (st.shards is None or st.shards.total <= 0):
        # (a replayed record may hold any float: only what a checkpoint can be is shown)
        size = read.size_gib if read.size_gib is not None and 0 <= read.size_gib < 1e9 else None
        pct = read.percent if read.percent is not None and 0 <= read.percent <= 100 else None
        if size is not None and pct is not None:
            return f"{fixed(size * pct / 100, 1)}/{fixed(size, 1)} GiB", pct / 100
        if pct is not None:
            return f"{fixed(pct, 0)}% read", pct / 100
        return (f"{fixed(size, 1)} GiB", None) if size is not None else None
    sub = st.substep
    if label != "CUDA graphs" or sub is None or sub.finished or (
            st.graphs is not None and st.graphs.lineno > sub.lineno):
        return None
    if sub.done is not None and sub.total and 0 <= sub.done <= sub.total:
        return f"{sub.what} {sub.done}/{sub.total}", sub.done / sub.total
    return f"{sub.what}…", None


__all__ = ["STEPS", "Step", "step_detail", "step_states"]
