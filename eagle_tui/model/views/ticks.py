"""How soon the session's clock must tick again: every second while anything may move, slower
once a ready (or halted) server has been quiet for a while.

A tick moves only the clock, and at a quiet server every view that reads the clock shows it
coarsely by then (``ui/format.py``: steps of 5 s and more past the first minute), yet each tick
cost a state, a message to the dashboard and a pass over its panes. After ``QUIET_AFTER_S``
without any other event, longer than every liveness threshold that a tick can cross (10-15 s,
``views/liveness``), the ticks fall on a ``quiet`` grid of the session's clock (from its start,
so an uptime's 5 s steps still change on time); any other event brings the 1 s ticks back,
except a :func:`routine` sample, which starts no age: a live, quiet server's process, GPU and
health samples, and the access lines its log writes for eagle-tui's own polls, must not keep a
tick a second going for as long as it is watched; while quiet, they wait for the next tick
(:func:`can_wait`). A server that is still starting keeps the 1 s
ticks: its steps' times move by the second.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from eagle_tui.model.bench.windows import is_own_access
from eagle_tui.model.buffers.gpuhistory import memory_moved
from eagle_tui.model.events import (
    Event,
    GpuSample,
    HealthSample,
    LogLine,
    MetricsSample,
    ProcessSample,
    Tick,
)
from eagle_tui.model.events.live import idle_reading

if TYPE_CHECKING:
    from eagle_tui.model.state import DashboardState

# How long before each point of the frame grid (multiples of an interval on the monotonic clock,
# ui/frames.py) a streaming log is read (transport/local.STREAM_LEAD_S) and the 1 s ticks come:
# the session's batch interval and a thread hop, so each read lands just before a repaint.
GRID_LEAD_S = 0.07
QUIET_AFTER_S = 30.0
QUIET_TICK_S = 5.0
MIN_WAIT_S = 0.05  # a grid point this close is the one just ticked: the next one is due


def routine(ev: Event) -> bool:
    """A tick, or a sample that says all is well (a live process, GPUs read, a ready or idle
    server): no age or liveness threshold starts from it. Any other event, a sample of trouble too,
    brings the 1 s ticks back."""
    if isinstance(ev, ProcessSample):
        return ev.status in ("running", "sleeping")
    if isinstance(ev, GpuSample):
        return ev.state == "ok"
    if isinstance(ev, HealthSample):
        return ev.state == "ready"
    if isinstance(ev, MetricsSample):  # an idle server's scrape (a busy one's figures move)
        return not ev.counter_reset and idle_reading(ev.running, ev.gen_tps, ev.queued)
    if type(ev) is LogLine:  # the access line of one of our own polls: its echo, no news
        return is_own_access(ev.text)
    return isinstance(ev, Tick)


def can_wait(events: Sequence[Event], state: DashboardState) -> bool:
    """Whether a batch may wait for the next quiet tick: routine samples only, none of them news
    against ``state``, what is on screen: a GPU memory step or a server gone to sleep or woken
    is shown at once."""
    gpu, metrics = state.gpu.sample, state.metrics.last
    for ev in events:
        if type(ev) is Tick or not routine(ev):
            return False
        if isinstance(ev, GpuSample) and memory_moved(gpu, ev):
            return False
        if isinstance(ev, MetricsSample) and (metrics is None or (
                ev.asleep, ev.sleep_level) != (metrics.asleep, metrics.sleep_level)):
            return False
    return True


def tick_delay(state: DashboardState, now: float, last_event: float, interval: float,
               quiet: float = QUIET_TICK_S) -> float:
    """Seconds from ``now`` to the next tick; ``last_event``: when the last event other than a
    tick came (the session's clock)."""
    startup = state.startup
    if now - last_event < QUIET_AFTER_S or not (startup.ready or startup.halted):
        return interval
    start = state.clock.t_start if state.clock.t_start is not None else now
    left = quiet - (now - start) % quiet
    return left if left >= MIN_WAIT_S else left + quiet


def grid_wait(now: float, interval: float, lead: float = GRID_LEAD_S) -> float:
    """Seconds from ``now`` (the loop's monotonic clock) to the next point ``k * interval -
    lead``: the 1 s ticks fall on the grid the log is read on, so a tick and the lines read at
    that point go out in one batch instead of two (one reduction, one message to the dashboard)."""
    left = -(now + lead) % interval
    return left if left >= min(MIN_WAIT_S, interval / 4) else left + interval


def grid_due(started: float, interval: float, lead: float = GRID_LEAD_S) -> float:
    """When a periodic step (a sample, a poll) that began at ``started`` (the loop's monotonic
    clock) begins again: the first point ``k * interval - lead`` at least half an interval
    later. A sampler off the grid made a batch of its own each time (a reduction, a message to
    the dashboard, a UI turn); on it, its answer joins the log read and the tick of that point.
    Off the grid, the next step comes ½ to 1½ intervals later, then every ``interval``."""
    return math.ceil((started + interval / 2 + lead) / interval) * interval - lead


__all__ = ["GRID_LEAD_S", "QUIET_AFTER_S", "QUIET_TICK_S", "can_wait", "grid_due", "grid_wait",
           "routine", "tick_delay"]
