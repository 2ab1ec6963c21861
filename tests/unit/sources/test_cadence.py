"""The local watcher's sampling pace (``sources/cadence.py``): full while the tree moves."""

from __future__ import annotations

import dataclasses

import pytest

from eagle_tui.model.events import ProcessSample
from eagle_tui.model.views.liveness import FRESH_S
from eagle_tui.sources.cadence import STEADY_BACKOFF, STEADY_MAX_S, moved, next_interval

QUIET = ProcessSample(100.0, 42, "sleeping", "python3", 2 << 30, 0.0, 50.0, 3,
                      read_bytes=10 << 20, pids=(42, 43, 44))
# one field at a time, each past what a reader sees (and the same field within it)
MOVES = [
    {"pid": 43}, {"status": "running"}, {"name": "sglang"}, {"started": 51.0},
    {"pids": (42, 43)}, {"rss_bytes": (2 << 30) + (30 << 20)}, {"rss_bytes": None},
    {"cpu_percent": 1.0}, {"cpu_percent": None}, {"read_bytes": (10 << 20) + (1 << 20)},
    {"read_bytes": None},
]
STILL = [{"rss_bytes": (2 << 30) + (5 << 20)}, {"cpu_percent": 0.9},
         {"read_bytes": (10 << 20) + 4096}, {"num_procs": 3}]


def _next(**change: object) -> ProcessSample:
    return dataclasses.replace(QUIET, t=QUIET.t + 1.0, **change)  # type: ignore[arg-type]


@pytest.mark.parametrize("change", MOVES, ids=lambda c: next(iter(c)))
def test_any_shown_move_brings_the_full_rate_back(change: dict[str, object]) -> None:
    new = _next(**change)
    assert moved(QUIET, new) and moved(new, QUIET)
    assert next_interval(QUIET, new, 4.0, 1.0) == 1.0


@pytest.mark.parametrize("change", STILL, ids=lambda c: next(iter(c)))
def test_a_tree_that_did_not_move_is_sampled_less_often(change: dict[str, object]) -> None:
    new = _next(**change)
    assert not moved(QUIET, new)
    assert next_interval(QUIET, new, 1.0, 1.0) == 2.0


def test_the_first_sample_counts_as_a_move() -> None:
    assert moved(None, QUIET) and next_interval(None, QUIET, 5.0, 1.0) == 1.0


@pytest.mark.parametrize("base", [0.05, 0.2, 1.0, 2.0, 10.0])
def test_the_backoff_doubles_to_its_cap_and_never_below_the_base(base: float) -> None:
    waits, wait = [], base
    for _ in range(12):
        wait = next_interval(QUIET, _next(), wait, base)
        waits.append(wait)
    assert waits == sorted(waits) and waits[0] == min(2 * base, waits[-1])
    assert waits[-1] == max(base, min(base * STEADY_BACKOFF, STEADY_MAX_S))
    assert waits[-1] <= max(base, FRESH_S / 2)  # a sample stays fresh for the liveness view
