"""An engine's Prometheus ``/metrics``: the prefix of its names, the names eagle-tui reads, and
how one scrape of them (and the window behind it) becomes a :class:`MetricsSample`.

The HTTP and the exposition parsing stay in ``sources/metrics.py``; what reaches an engine's
reader here is already reduced to plain name → value maps (:class:`Scrape`), so the maths of
each engine is a pure function its own package holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field

from eagle_tui.model.events import Engine, EngineTimings, MetricsSample
from eagle_tui.model.numbers import MAX_VALUE
from eagle_tui.model.record import Record, record


@record
class Scrape(Record):
    """One scrape, reduced to what eagle-tui uses.

    ``gauges`` hold each gauge summed over label sets (the ranks of one group counted once) and,
    under ``NAME#mean``, their mean; ``counters`` are lifetime totals (names without
    ``_total``); ``per_pos`` the per-position counter, by its ``position`` label.
    """

    t: float
    engine: Engine
    gauges: dict[str, float] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)
    per_pos: dict[int, float] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()  # samples whose value cannot be represented (not read)
    # the gauges read by one label's value (``MetricsFacet.labelled``): name → value → figure
    labelled: dict[str, dict[str, float]] = field(default_factory=dict)


# (this scrape, the oldest scrape of the window, whether a counter went down) → the sample;
# the oldest is ``now`` itself when the window holds nothing older (or is not used)
SampleReader = Callable[[Scrape, Scrape, bool], MetricsSample]
# a counter's growth over a window (``None``: missing at either end, or it went down)
Delta = Callable[[str], float | None]
# (the counters' deltas, the generation tokens of the window) → (accept length, its weight, a
# note saying how), or None when the window has no such figure
WindowAccept = Callable[[Delta, float | None], tuple[float, float, str] | None]


def _no_accept(_delta: Delta, _gen: float | None) -> tuple[float, float, str] | None:
    return None


def first(values: dict[str, float], *names: str) -> float | None:
    """The value of the first of ``names`` present (a new name, then the old one)."""
    for n in names:
        if n in values:
            return values[n]
    return None


def whole(v: float | None) -> int | None:
    """A count as an int; ``None`` for no value or one past :data:`MAX_VALUE` (not a reading)."""
    return int(v) if v is not None and abs(v) <= MAX_VALUE else None


def _always(_scrape: Scrape) -> bool:
    return True


def _empty(now: Scrape, _base: Scrape, reset: bool) -> MetricsSample:
    return MetricsSample(t=now.t, engine=now.engine, counter_reset=reset)


@record
class MetricsFacet(Record):
    """Names on the server's ``/metrics`` page and the reading of them."""

    prefix: str = ""  # every metric of the engine's own starts with this ("sglang:")
    gauges: tuple[str, ...] = ()  # gauges read, old names included
    counters: tuple[str, ...] = ()  # lifetime counters read (as exposed, without ``_total``)
    per_position: str | None = None  # a counter summed per ``position`` label
    # when one scrape holds the names of two engines, the higher precedence names it (equal:
    # the first seen)
    precedence: int = 0
    # whether a scrape enters the counter window (the reset check); one that does not reaches
    # ``read`` with itself as the window's oldest and no reset
    windowed: Callable[[Scrape], bool] = _always
    read: SampleReader = _empty
    # a benchmark window's figures from the counters at its start and end
    window_counters: tuple[str, ...] = ()  # the counters a window reads
    gen_counter: str = ""  # generated tokens (the window's tok/s)
    window_accept: WindowAccept = _no_accept
    # algorithms that draft a block (the verify window is the block + 1), upper case
    block_algorithms: tuple[str, ...] = ()
    missing_hint: str = ""  # what a 404 on ``/metrics`` means for it ("needs --enable-metrics")
    # gauges kept per value of one label, (name, label): its startup phases, say
    labelled: tuple[tuple[str, str], ...] = ()
    # the startup durations the engine's gauges report (``None``: it has none)
    startup: Callable[[Scrape], EngineTimings | None] | None = None


__all__ = ["Delta", "MetricsFacet", "SampleReader", "Scrape", "WindowAccept", "first",
           "whole"]
