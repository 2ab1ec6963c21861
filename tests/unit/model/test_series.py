"""Windowed statistics of ``Series``: windows, quantiles, EWMA seeded with the first value."""

from __future__ import annotations

import math
import statistics

import pytest

from eagle_tui.model.series import Series


def series(values: list[float], t0: float = 0.0, maxlen: int = 600) -> Series:
    s = Series(maxlen=maxlen)
    for i, v in enumerate(values):
        s = s.append(t0 + i, v)
    return s


def test_append_returns_a_new_value_and_keeps_the_old() -> None:
    a = Series()
    b = a.append(1.0, 2.0)
    assert (len(a), len(b), b.last) == (0, 1, 2.0)


def test_bounded_to_maxlen_keeping_the_newest() -> None:
    s = series([float(i) for i in range(10)], maxlen=4)
    assert s.values() == [6.0, 7.0, 8.0, 9.0]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_values_are_ignored(bad: float) -> None:
    s = series([1.0]).append(5.0, bad)
    assert s.values() == [1.0] and s.ewma == 1.0


def test_windows_by_count_and_by_time() -> None:
    s = series([1.0, 2.0, 3.0, 4.0, 5.0], t0=100.0)  # t = 100..104
    assert s.values(last_n=2) == [4.0, 5.0]
    assert s.values(last_n=0) == []
    assert s.values(since=103.0) == [4.0, 5.0]
    assert s.values(last_n=1, since=100.0) == [5.0]
    assert s.mean(since=102.0) == 4.0


def test_statistics_match_the_reference_definitions() -> None:
    vals = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]
    s = series(vals)
    assert s.mean() == statistics.mean(vals)
    assert s.median() == statistics.median(vals)
    # linear interpolation between closest ranks (numpy's default / "inclusive")
    q = statistics.quantiles(vals, n=10, method="inclusive")
    assert s.p10() == pytest.approx(q[0]) and s.p90() == pytest.approx(q[-1])
    assert s.quantile(0.0) == 1.0 and s.quantile(1.0) == 9.0


def test_empty_windows_give_none() -> None:
    s = Series()
    assert (s.last, s.mean(), s.median(), s.p10(), s.p90(), s.ewma) == (None,) * 6
    assert series([1.0]).mean(since=10.0) is None


def test_ewma_is_seeded_with_the_first_value_not_zero() -> None:
    s = series([100.0])
    assert s.ewma == 100.0
    s = s.append(1.0, 200.0)
    assert s.ewma == pytest.approx(0.3 * 200.0 + 0.7 * 100.0)
    assert series([50.0] * 20).ewma == pytest.approx(50.0)
