"""Issue 15: clocks and ages shown at a coarser step as they grow, and the input thread's wake-up.

A number that moves repaints its row; at idle the once-a-second clock was most of the
dashboard's CPU. These pin the steps (per second while short) and that a tick which changes
nothing on screen repaints nothing.
"""

from __future__ import annotations

import dataclasses
import os
import select

from eagle_tui.model.events import Phase
from eagle_tui.model.state import Clock, DashboardState, Startup
from eagle_tui.ui.driver import _WakingEvent
from eagle_tui.ui.format import age_step, clock_step, coarse_age, coarse_clock
from eagle_tui.ui.widgets.startup import Stepper
from eagle_tui.ui.widgets.status import StatusLine


def test_clocks_tick_every_second_for_a_minute_then_coarser() -> None:
    assert [coarse_clock(s) for s in (5, 59.9)] == ["0:05", "0:59"]
    assert [coarse_clock(s) for s in (61, 64.9, 65)] == ["1:00", "1:00", "1:05"]
    assert coarse_clock(605) == "10:00" and coarse_clock(3725) == "1:02:00"
    assert [clock_step(s) for s in (0, 60, 600, 3600)] == [1.0, 5.0, 10.0, 60.0]
    assert coarse_clock(None) == coarse_clock(float("nan")) == "—"


def test_ages_are_per_second_only_while_short() -> None:
    assert coarse_age(4.6) == "4.0s" and coarse_age(45.0) == "45.0s" and coarse_age(47) == "45.0s"
    assert coarse_age(130) == "2:10" and coarse_age(4000) == "1:05:00"
    assert [age_step(s) for s in (0, 10, 60, 600, 3600)] == [1.0, 5.0, 10.0, 60.0, 300.0]


def test_a_status_line_that_reads_the_same_is_not_repainted() -> None:
    line = StatusLine()
    calls: list[int] = []
    line.refresh = lambda *a, **k: calls.append(1) or line  # type: ignore[method-assign]
    def ready(now: float) -> DashboardState:  # a ready server's clock is the coarse one
        return DashboardState(Startup(phase=Phase.READY), clock=Clock(t_start=0.0, now=now))

    line.show(ready(3700.0))
    line.show(ready(3710.0))  # 1:01:40 and 1:01:50: both "1:01:00"
    assert len(calls) == 1
    line.show(ready(3760.0))
    assert len(calls) == 2
    starting = DashboardState(Startup(phase=Phase.LOADING_WEIGHTS),
                              clock=Clock(t_start=0.0, now=3700.0))
    line.show(starting)
    line.show(DashboardState(Startup(phase=Phase.LOADING_WEIGHTS),
                             clock=Clock(t_start=0.0, now=3701.0)))
    assert len(calls) == 4  # while it starts, every second


def test_a_ready_stepper_is_redrawn_only_when_its_coarse_total_moves() -> None:
    """Once ready, the stepper's clocks (total, uptime) are coarse: a tick that moves neither
    rebuilds nothing; while the server starts, every second does."""
    stepper = Stepper()
    built: list[float | None] = []
    stepper.repaint = lambda: built.append(stepper.state_clock.now)  # type: ignore[method-assign]

    states = {p: DashboardState(Startup(phase=p)) for p in (Phase.READY, Phase.LOADING_WEIGHTS)}

    def at(phase: Phase, now: float) -> DashboardState:  # only the clock is a new record
        return dataclasses.replace(states[phase], clock=Clock(t_start=0.0, now=now))

    stepper.show(at(Phase.READY, 3700.0))
    stepper.show(at(Phase.READY, 3701.0))  # total "1:01:00" both times
    stepper.show(at(Phase.READY, 3709.0))
    assert built == [3700.0]
    stepper.show(at(Phase.READY, 3720.0))  # "1:02:00"
    assert built == [3700.0, 3720.0]
    stepper.show(at(Phase.LOADING_WEIGHTS, 3721.0))
    stepper.show(at(Phase.LOADING_WEIGHTS, 3722.0))
    assert built == [3700.0, 3720.0, 3721.0, 3722.0]  # while it starts, every second


def test_the_exit_event_wakes_a_select_on_its_pipe() -> None:
    ev = _WakingEvent()
    try:
        assert select.select([ev.read_fd], [], [], 0)[0] == []
        ev.set()
        assert select.select([ev.read_fd], [], [], 1.0)[0] == [ev.read_fd] and ev.is_set()
        ev.clear()  # drained: the next thread's select blocks again
        assert select.select([ev.read_fd], [], [], 0)[0] == [] and not ev.is_set()
    finally:
        ev.close()
    r, w = os.pipe()  # may reuse the closed pipe's numbers
    try:
        ev.set()  # after close: nothing is written to whatever now has those numbers
        os.set_blocking(r, False)
        assert select.select([r], [], [], 0)[0] == []
    finally:
        os.close(r)
        os.close(w)
