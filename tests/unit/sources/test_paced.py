"""``sources.base.paced``: the one poll loop of the polling sources, on a fake clock.

Its steps fall on the session's grid (``ticks.grid_due``: ``GRID_LEAD_S`` before each multiple
of the interval), so with a 0.5 s interval a loop started at 0 steps at 0, 0.43, 0.93...
"""

from __future__ import annotations

import asyncio
import itertools
import types
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eagle_tui.model.views.ticks import GRID_LEAD_S
from eagle_tui.sources import base

LEAD = GRID_LEAD_S


class _Clock:
    """A loop time that moves only when the loop sleeps or a step's body works."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _run(monkeypatch: pytest.MonkeyPatch, interval: float | Callable[[], float],
         count: int | None = None, more: Callable[[], bool] | None = None,
         work: float = 0.0, limit: int = 50) -> tuple[list[float], _Clock]:
    """The fake times at which each step started, and the clock (its sleeps)."""
    clock = _Clock()
    fake = types.SimpleNamespace(get_running_loop=lambda: clock, sleep=clock.sleep)
    monkeypatch.setattr(base, "asyncio", fake)

    async def go() -> list[float]:
        starts: list[float] = []
        steps = base.paced(interval, count=count) if more is None else base.paced(
            interval, more, count)
        async for _ in steps:
            starts.append(clock.now)
            clock.now += work
            if len(starts) >= limit:
                break
        return starts

    return asyncio.run(go()), clock


@pytest.mark.parametrize("count", [0, 1, 4])
def test_count_steps_and_no_wait_after_the_last(monkeypatch: pytest.MonkeyPatch,
                                                count: int) -> None:
    starts, clock = _run(monkeypatch, 0.5, count=count)
    assert starts == pytest.approx([0.0, 0.5 - LEAD, 1.0 - LEAD, 1.5 - LEAD][:count])
    assert len(clock.sleeps) == max(0, count - 1)


def test_the_body_time_counts_toward_the_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    starts, clock = _run(monkeypatch, 1.0, count=3, work=0.25)
    assert starts == pytest.approx([0.0, 1.0 - LEAD, 2.0 - LEAD])
    assert clock.sleeps == pytest.approx([0.75 - LEAD, 0.75])


def test_a_body_longer_than_the_interval_does_not_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    starts, clock = _run(monkeypatch, 1.0, count=3, work=1.5)
    assert starts == [0.0, 1.5, 3.0]
    assert clock.sleeps == [0.0, 0.0]


def test_more_is_asked_before_each_step_and_after_each_body(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []

    def more() -> bool:
        asked.append(1)
        return len(asked) <= 3

    starts, clock = _run(monkeypatch, 0.5, more=more)
    # asked before the 1st, after it, before the 2nd, after it: no
    assert starts == pytest.approx([0.0, 0.5 - LEAD])
    assert clock.sleeps == pytest.approx([0.5 - LEAD])


def test_the_interval_is_read_after_each_body(monkeypatch: pytest.MonkeyPatch) -> None:
    waits = iter([0.25, 2.0, 0.5])
    starts, _ = _run(monkeypatch, lambda: next(waits), count=4)
    # the next point of each interval's grid at least half of it after the last start
    assert starts == pytest.approx([0.0, 0.25 - LEAD, 2.0 - LEAD, 2.5 - LEAD])


def test_forever_until_the_consumer_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    starts, _ = _run(monkeypatch, 0.5, limit=20)
    assert len(starts) == 20


@given(interval=st.floats(0.05, 5.0), work=st.floats(0.0, 0.3), start=st.floats(0.0, 1e4))
def test_after_the_first_every_step_is_on_the_grid_an_interval_apart(
        interval: float, work: float, start: float) -> None:
    """Generated intervals, bodies and start times: the second step on the grid ½ to 1½
    intervals after the first, each one after it an interval later (a body shorter than it)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        clock = _Clock()
        clock.now = start
        fake = types.SimpleNamespace(get_running_loop=lambda: clock, sleep=clock.sleep)
        monkeypatch.setattr(base, "asyncio", fake)

        async def go() -> list[float]:
            starts: list[float] = []
            async for _ in base.paced(interval, count=5):
                starts.append(clock.now)
                clock.now += min(work, interval / 2)
            return starts

        starts = asyncio.run(go())
    slack = 1e-6 * max(1.0, start)
    assert interval / 2 - slack <= starts[1] - starts[0] <= 1.5 * interval + slack
    for a, b in itertools.pairwise(starts[1:]):
        assert abs(b - a - interval) < 2 * slack
    phase = (starts[1] + LEAD) % interval
    assert min(phase, interval - phase) < slack
