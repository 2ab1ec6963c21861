"""Which number is shown, and where it came from: decided once, for every consumer.

The same quantity reaches the state from up to three places: the server's log (SGLang's
``Decode batch`` / vLLM's ``Engine 000`` stats lines), its Prometheus ``/metrics`` and SGLang's
``/server_info``. They differ in definition (``/metrics`` is a rate over the scrape window,
``/server_info``'s accept length a lifetime average, SGLang's ``accept rate`` changed meaning
across versions), so whoever shows a number must also say which one it is. This module is the
one place that picks: the status line, the Metrics pane, the alert rules and the headless
output all read :func:`figures` (or one of its functions), so they can never disagree.

The rules that pick are listed in the notes.

More in docs/architecture.md, "Module notes", ``model/views/figures``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from eagle_tui.model.acceptance import (
    distribution_from_histogram,
    distribution_from_rates,
    weighted_rates,
)
from eagle_tui.model.record import Record, record
from eagle_tui.model.series import Series
from eagle_tui.model.views.liveness import Liveness, liveness

if TYPE_CHECKING:
    from eagle_tui.model.state import DashboardState

# "": nothing known yet; "prometheus": Prometheus' stored series of the server's /metrics
Source = Literal["log", "/metrics", "prometheus", "server_info", "client", ""]
Freshness = Literal["current", "last_active", "stale", "dead", "stopped", ""]
T = TypeVar("T")
WINDOW = 20  # stats intervals in the windowed means and medians
SPEEDUP_WINDOW = WINDOW  # tok/s points in the speedup's median: the tok/s row's "med"
METRICS_STALE_S = 10.0  # a /metrics figure older than this (5 scrapes at the 2 s default) is stale
_FRESHNESS: dict[str, Freshness] = {"active": "current", "": "current", "idle": "last_active",
                                    "stale": "stale", "dead": "dead",
                                    "stopped": "stopped",
                                    "sleeping": "last_active", "paused": "last_active",
                                    "recovering": "last_active"}
_EMPTY = Series()


@dataclass(frozen=True, slots=True)
class Figure(Generic[T]):
    """One shown number: its value (``None``: unknown), where it came from, the series it is
    the newest point of (for sparklines and windowed statistics; empty if none) and what it
    summarizes when it is not one reading (``window``, e.g. ``"lifetime average"``)."""

    value: T | None
    source: Source = ""
    series: Series = _EMPTY
    window: str = ""
    freshness: Freshness = ""  # "": unknown value; see the module docstring
    age_s: float | None = None  # seconds since the server's newest stats

    @property
    def known(self) -> bool:
        return self.value is not None

    @property
    def current(self) -> bool:
        """A reading of now, not the last one of an idle, silent or dead server."""
        return self.freshness == "current"


@record
class Figures(Record):
    """Every figure the dashboard shows, from one state."""

    tok_s: Figure[float]
    accept_len: Figure[float]
    accept_lifetime: Figure[float]
    accept_rate: Figure[float]
    per_position: Figure[tuple[float, ...]]
    speedup: Figure[float]
    requests: Figure[int]  # running requests; queued and KV usage share its source
    accept_mean: Figure[float]
    accept_dist: Figure[tuple[float, ...]]
    live: Liveness


def _m(state: DashboardState) -> Source:
    """The metrics figures' source: the server's ``/metrics`` or Prometheus (drill-down)."""
    m = state.metrics.last
    return "prometheus" if m is not None and m.source == "prometheus" else "/metrics"


def _series(log: Series, metrics: Series, msource: Source) -> Figure[float]:
    if len(log):
        return Figure(log.last, "log", log)
    if len(metrics):
        return Figure(metrics.last, msource, metrics)
    return Figure(None, "", log)


def tok_s(state: DashboardState) -> Figure[float]:
    """Generation throughput: the log's, else ``/metrics'`` windowed rate."""
    return _series(state.stats.gen_tps, state.metrics.gen_tps, _m(state))


def accept_len(state: DashboardState) -> Figure[float]:
    """Current accept length (tokens per verify step): the log's, else ``/metrics'``."""
    return _series(state.stats.accept_len, state.metrics.accept_len, _m(state))


def accept_lifetime(state: DashboardState) -> Figure[float]:
    """``/server_info``'s accept length averaged over the server's life."""
    info = state.config.server_info
    if info is None or not info.avg_accept_len:
        return Figure(None)
    return Figure(info.avg_accept_len, "server_info", window="lifetime average")


def accept_rate(state: DashboardState) -> Figure[float]:
    if state.stats.accept_rate.last is not None:
        return Figure(state.stats.accept_rate.last, "log", state.stats.accept_rate)
    if state.metrics.acceptance_rate is not None:
        return Figure(state.metrics.acceptance_rate, _m(state))
    return Figure(None)


def accept_mean(state: DashboardState) -> Figure[float]:
    """Accept length over the last :data:`WINDOW` intervals, each weighed by its work."""
    if len(state.stats.accept_w):
        w = state.stats.accept_w.values(last_n=WINDOW)
        total = sum(w)
        value = sum(state.stats.accept_wv.values(last_n=WINDOW)) / total if total > 0 else None
        what = ("drafts" if state.stats.last_spec is not None
                else "verify steps (≈ running requests)")
        return Figure(value, "log", state.stats.accept_len,
                      f"last {len(w)} intervals, weighted by {what}")
    if len(state.metrics.accept_len):
        return Figure(state.metrics.accept_len.last, _m(state), state.metrics.accept_len,
                      "counter deltas over the scrape window")
    return Figure(None)


def accept_dist(state: DashboardState) -> Figure[tuple[float, ...]]:
    """P(exactly j drafts accepted per verify step), j = 0..k."""
    if state.stats.pp_window:
        rates = weighted_rates(state.stats.pp_window)
        return Figure(distribution_from_rates(rates) or None, "log",
                      window=f"last {len(state.stats.pp_window)} intervals, weighted by drafts")
    if state.metrics.per_position:
        return Figure(distribution_from_rates(state.metrics.per_position) or None, _m(state),
                      window="counter deltas over the scrape window")
    if state.stats.client_hist:
        return Figure(distribution_from_histogram(state.stats.client_hist) or None, "client",
                      window=f"{sum(state.stats.client_hist)} verify steps of the requests seen")
    return Figure(None)


def per_position(state: DashboardState) -> Figure[tuple[float, ...]]:
    if state.stats.per_position:
        return Figure(state.stats.per_position, "log")
    if state.metrics.per_position:
        return Figure(state.metrics.per_position, _m(state))
    return Figure(None)


def speedup(state: DashboardState) -> Figure[float]:
    """Median tok/s over the baseline; unknown without a baseline or any tok/s point. The
    median is the one the tok/s row shows (``med``, the same window), so the two agree."""
    window = f"median of the last {SPEEDUP_WINDOW}"
    source: Source = "log"
    series = state.stats.gen_tps
    tps = series.median(last_n=SPEEDUP_WINDOW)
    if not tps:  # none, or an idle log's zero: /metrics' median (which may be zero too)
        source, series = _m(state), state.metrics.gen_tps
        tps = series.median(last_n=SPEEDUP_WINDOW)
    if tps is None or not state.metrics.baseline_tok_s:
        return Figure(None)
    return Figure(tps / state.metrics.baseline_tok_s, source, series, window)


def requests(state: DashboardState) -> Figure[int]:
    source: Source = ("log" if state.stats.last_decode is not None
                      else _m(state) if state.metrics.last is not None else "")
    return Figure(state.stats.running, source)


def stamp(fig: Figure[T], live: Liveness, metrics_age_s: float | None = None) -> Figure[T]:
    """``fig`` with the freshness and age the server's state gives it (unknown: unstamped).

    A ``/metrics`` figure whose scrapes stopped (``metrics_age_s`` over :data:`METRICS_STALE_S`:
    the source failing, or every scrape skipped) is ``stale`` with its own age even while
    other data says the server is active: it is not a reading of now.
    """
    if not fig.known:
        return fig
    freshness = _FRESHNESS[live.activity]
    if (fig.source == "/metrics" and freshness == "current" and metrics_age_s is not None
            and metrics_age_s > METRICS_STALE_S):
        return replace(fig, freshness="stale", age_s=metrics_age_s)
    return replace(fig, freshness=freshness, age_s=live.data_age_s)


def _metrics_age(state: DashboardState) -> float | None:
    m = state.metrics.last
    return state.clock.now - m.t if m is not None and state.clock.now is not None else None


def figures(state: DashboardState) -> Figures:
    """All of them at once (the Metrics pane shows every one), stamped with the liveness."""
    live = liveness(state)
    lifetime = accept_lifetime(state)  # a lifetime average: as current as /server_info's answer
    age = _metrics_age(state)
    return Figures(stamp(tok_s(state), live, age), stamp(accept_len(state), live, age), lifetime,
                   stamp(accept_rate(state), live, age), stamp(per_position(state), live, age),
                   stamp(speedup(state), live, age), stamp(requests(state), live, age),
                   stamp(accept_mean(state), live, age), stamp(accept_dist(state), live, age),
                   live)


__all__ = ["METRICS_STALE_S", "SPEEDUP_WINDOW", "WINDOW", "Figure", "Figures", "Freshness",
           "Source", "accept_dist", "accept_len", "accept_lifetime", "accept_mean", "accept_rate",
           "figures", "per_position", "requests", "speedup", "stamp", "tok_s"]
