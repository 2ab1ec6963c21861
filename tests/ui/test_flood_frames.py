"""A flood repaints the followed log at its own, shorter interval; a steady tail on the grid."""

from __future__ import annotations

import random
import types
from typing import Any

import pytest

from eagle_tui.ui.frames import (
    FLOOD_FRAME_INTERVAL,
    FLOOD_HOLD_S,
    FLOOD_ROWS,
    FRAME_INTERVAL,
    PANE_INTERVAL,
    pane_delay,
)
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


class FakeDeadline:
    """What :class:`Scroller` uses of its ``ui/deadline.Deadline``: the waits it starts."""

    def __init__(self, view: FakeView) -> None:
        self.view = view
        self.current: FakeTimer | None = None
        self.due = 0.0

    @property
    def pending(self) -> bool:
        return self.current is not None

    def start(self, wait: float, _callback: Any) -> None:
        self.stop()
        self.current = FakeTimer(wait)
        self.view.timers.append(self.current)
        self.due = logscroll.time.monotonic() + wait  # type: ignore[attr-defined]

    def stop(self) -> None:
        if self.current is not None:
            self.current.stop()
            self.current = None


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [NOW]
    monkeypatch.setattr(logscroll, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    return now


def scroller(interval: float = FRAME_INTERVAL) -> tuple[Scroller, FakeView]:
    view = FakeView()
    s = Scroller(view, lambda: 0, lambda: None, interval)  # type: ignore[arg-type]
    s.deadline = FakeDeadline(view)  # type: ignore[assignment]
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


def test_the_panes_wait_for_the_logs_repaint_in_a_steady_tail() -> None:
    # the clock's tick is due, the log repainted just now: the next frame point, together
    assert pane_delay(NOW, NOW - 1.0, NOW - 0.01, flood=False) == pytest.approx(
        FRAME_INTERVAL - 0.01)
    # updated 0.3 s ago: the pane grid's next point, not sooner
    assert pane_delay(NOW, NOW - 0.3, NOW - 0.01, flood=False) == pytest.approx(
        PANE_INTERVAL - 0.01)


def test_in_a_flood_the_panes_keep_the_floods_pace() -> None:
    """The flood's last numbers (the metrics pane) show about when its last lines do: the
    panes' next update is on the flood's grid, with the log's repaint, and less than two flood
    frames away (a grid point at least three quarters of an interval after the last)."""
    assert pane_delay(NOW, NOW - 0.3, NOW - 0.01, flood=True) == pytest.approx(
        FLOOD_FRAME_INTERVAL - 0.01)
    rng = random.Random(7)
    for _ in range(2000):
        now = 1000 + rng.random() * 10
        last, painted = now - rng.random() * 3, now - rng.random() * 3
        for flood, pace in ((True, FLOOD_FRAME_INTERVAL), (False, PANE_INTERVAL)):
            wait = pane_delay(now, last, painted, flood)
            assert 0.0 <= wait < 1.75 * pace
            if wait:  # on the grid the log's repaints use: one screen update for both
                grid = FLOOD_FRAME_INTERVAL if flood else FRAME_INTERVAL
                assert (now + wait) / grid == pytest.approx(round((now + wait) / grid))
