"""Startup ETA per step, and the phase that takes far longer than usual.

"Usual" is the median of earlier runs of the same model and flags on the same host (the run
history, as a :class:`~eagle_tui.model.events.UsualTimes` event). Before there is any history
the weights step still has an estimate, from the rate of weight shards (or, where the engine
prints them, checkpoint bytes) loaded so far. A step that has taken more than
:data:`SLOW_FACTOR` times its usual time (and at least :data:`SLOW_MIN_S`) is *slow*: the
Startup pane says so and a warning alert names it ("CUDA graphs: 3:10, usually 0:45").
"""

from __future__ import annotations

from eagle_tui.model.events import Phase
from eagle_tui.model.record import Record, record
from eagle_tui.model.state import DashboardState

SLOW_FACTOR = 2.0
SLOW_MIN_S = 5.0
#: Startup pane step → the run-history phase keys it spans (``runsummary.phase_times``).
STEP_PHASES: dict[str, tuple[str, ...]] = {
    "args": ("init",),
    "weights": ("loading_weights",),
    "KV cache": ("weights_loaded", "kv_cache"),
    "CUDA graphs": ("cuda_graph",),
    "warmup": ("http_server",),
}


@record
class StepEta(Record):
    """What the Startup pane adds to an active step: time left, the usual time, slowness."""

    left: float | None
    usual: float | None
    slow: bool
    basis: str  # "history" (n runs), "shards" or "bytes" (the rate so far)


def usual_for(state: DashboardState, label: str) -> float | None:
    if state.startup.usual is None:
        return None
    table = dict(state.startup.usual.phases)
    keys = STEP_PHASES.get(label, ())
    values = [table[k] for k in keys if k in table]
    return sum(values) if values else None


def step_eta(state: DashboardState, label: str, elapsed: float | None) -> StepEta | None:
    """The ETA of the active step ``label`` after ``elapsed`` seconds (``None``: no basis)."""
    usual = usual_for(state, label)
    if usual is not None and elapsed is not None:
        slow = elapsed > SLOW_FACTOR * usual and elapsed >= SLOW_MIN_S
        return StepEta(max(0.0, usual - elapsed), usual, slow, "history")
    if label == "weights" and elapsed is not None and state.startup.shards is not None:
        done, total = state.startup.shards.done, state.startup.shards.total
        if 0 < done < total and elapsed > 0:
            return StepEta(elapsed / done * (total - done), None, False, "shards")
    read = state.startup.weight_bytes
    if label == "weights" and elapsed is not None and elapsed > 0 and read is not None \
            and read.percent is not None and 0 < read.percent < 100:
        # the checkpoint's bytes read so far (the engine's prefetch): the same rate ahead
        return StepEta(elapsed / read.percent * (100 - read.percent), None, False, "bytes")
    return None


def piecewise_left(state: DashboardState) -> float | None:
    """Seconds left of the piecewise graphs' current stage as the engine's bar estimates them
    (``None``: no stage running, or its bar has no estimate yet)."""
    p = state.startup.piecewise
    if p is None or p.done >= p.total or state.startup.phase is not Phase.CUDA_GRAPH:
        return None
    return p.left_s


__all__ = ["SLOW_FACTOR", "SLOW_MIN_S", "STEP_PHASES", "StepEta", "piecewise_left", "step_eta",
           "usual_for"]
