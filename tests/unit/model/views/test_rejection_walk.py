"""``alerts.rejection`` finds a recovery by one comparison a line: the same answer as walking
back completion by completion (its earlier form, kept here as the reference), on generated
acceptance series around the thresholds, fixed and a tier's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.views.alerts import (
    FIXED,
    RECOVERED_SHOWN,
    Limits,
    Points,
    _completes,
    _newest,
    rejection,
)


def _walked(points: Points, limits: Limits) -> tuple[str, int]:
    i, seen = _newest(points, len(points) - 1, limits)
    if seen == "low":
        return "rejected", i
    if seen != "high":
        return "", -1
    j = i
    oldest = max(1, len(points) - RECOVERED_SHOWN)
    while j >= oldest and _completes(points, j - 1, limits) == "high":
        j -= 1
    if j < oldest:
        return "", -1
    _, before = _newest(points, j - 1, limits)
    return ("recovered", j) if before == "low" else ("", -1)


@st.composite
def series(draw: st.DrawFn) -> tuple[Points, Limits]:
    limits = draw(st.sampled_from([FIXED, (1.5, 2.0), (0.9, 1.1)]))
    low, high = limits
    values = [low - 0.1, low, (low + high) / 2, high, high + 0.1, high + 1.0]
    # long healthy stretches, short dips: the shapes the walk meets
    runs = draw(st.lists(st.tuples(st.sampled_from(values), st.integers(1, 90)), max_size=8))
    flat = [v for v, n in runs for _ in range(n)]
    return tuple((float(t), v) for t, v in enumerate(flat)), limits


@settings(max_examples=600, deadline=None)
@given(series())
def test_rejection_is_the_walk_completion_by_completion(case: tuple[Points, Limits]) -> None:
    points, limits = case
    assert rejection(points, limits) == _walked(points, limits)
