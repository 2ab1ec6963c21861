"""A flood repaints the followed log at its own, shorter interval; a steady tail on the grid."""

from __future__ import annotations

import types
from typing import Any

import pytest

from eagle_tui.ui.frames import FLOOD_FRAME_INTERVAL, FLOOD_HOLD_S, FLOOD_ROWS, FRAME_INTERVAL
from eagle_tui.ui.widgets import logscroll
from eagle_tui.ui.widgets.logscroll import Scroller

NOW = 1000.01  # just past a point of every grid


class FakeTimer:
    def __init__(self, wait: float) -> None:
        self.wait = wait
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


class FakeView:
    """What :class:`Scroller` uses of a ``ScrollView`` to schedule its repaints."""

    is_mounted = True

    def __init__(self) -> None:
        self.timers: list[FakeTimer] = []

    def set_timer(self, wait: float, _callback: Any) -> FakeTimer:
        self.timers.append(FakeTimer(wait))
        return self.timers[-1]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [NOW]
    monkeypatch.setattr(logscroll, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    return now


def scroller(interval: float = FRAME_INTERVAL) -> tuple[Scroller, FakeView]:
    view = FakeView()
    s = Scroller(view, lambda: 0, lambda: None, interval)  # type: ignore[arg-type]
    s.paint = lambda: None  # type: ignore[method-assign]  # (only the scheduling is looked at)
    s.follow = False  # (no scroll to the end: the fake view has no size)
    s.last_paint = NOW - 0.01  # the last repaint was on a grid point
    return s, view


def test_a_steady_tail_waits_for_the_frame_grid(clock: list[float]) -> None:
    s, view = scroller()
    s.appended(FLOOD_ROWS - 1, 0, lambda: None)
    assert view.timers[-1].wait == pytest.approx(FRAME_INTERVAL - 0.01)


def test_a_flood_brings_the_next_repaint_forward_and_keeps_its_pace(clock: list[float]) -> None:
    s, view = scroller()
    s.appended(10, 0, lambda: None)  # a steady batch: the repaint waits for the grid
    steady = view.timers[-1]
    s.appended(FLOOD_ROWS, 0, lambda: None)  # then a flood's batch: the timer comes forward
    assert steady.stopped
    assert view.timers[-1].wait == pytest.approx(FLOOD_FRAME_INTERVAL - 0.01)
    s.deadline.stop()  # (it fired)
    s.last_paint = clock[0] = NOW - 0.01 + FLOOD_FRAME_INTERVAL
    clock[0] += 0.01
    s.appended(10, 0, lambda: None)  # a small batch within the flood: the same pace
    assert view.timers[-1].wait == pytest.approx(FLOOD_FRAME_INTERVAL - 0.01)
    s.deadline.stop()
    clock[0] += FLOOD_HOLD_S
    s.last_paint = clock[0] - 0.01
    s.appended(10, 0, lambda: None)  # the flood is over: back to the grid
    assert view.timers[-1].wait > FLOOD_FRAME_INTERVAL


def test_a_flood_never_slows_a_faster_configured_pace(clock: list[float]) -> None:
    s, view = scroller(0.05)
    s.appended(FLOOD_ROWS, 0, lambda: None)
    assert view.timers[-1].wait <= 0.05
