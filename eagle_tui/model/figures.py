"""Which number is shown, and where it came from: decided once, for every consumer.

The same quantity reaches the state from up to three places: the server's log (SGLang's
``Decode batch`` / vLLM's ``Engine 000`` stats lines), its Prometheus ``/metrics`` and SGLang's
``/server_info``. They differ in definition (``/metrics`` is a rate over the scrape window,
``/server_info``'s accept length a lifetime average, SGLang's ``accept rate`` changed meaning
across versions), so whoever shows a number must also say which one it is. This module is the
one place that picks: the status line, the Metrics pane, the alert rules and the headless
output all read :func:`figures` (or one of its functions), so they can never disagree.

The rules (those :mod:`.state` used, where the status line, the Metrics pane and the alert rules
used to decide each on its own):

- **tok/s** and **accept length**: the log's series when it has any point, else ``/metrics'``.
  The log is per stats line and says what the server itself measured; ``/metrics`` only fills
  in for a log that is not watched or not verbose. (The ``drafts_rejected`` rule used to look at
  the log alone; it now follows this rule, so a server watched through ``/metrics`` only is
  also told that its drafts are being rejected.)
- **lifetime accept length**: ``/server_info``'s ``avg_spec_accept_length``. A different number
  (an average since the server started, not a current value), so it is its own figure, never the
  accept length; the Metrics pane shows it only while no accept length is known.
- **acceptance rate** and **per-position acceptance**: the log's, else ``/metrics'``.
- **speedup**: the median of the last ten tok/s points (the log's, else ``/metrics'`` when the
  log's median is zero or unknown) over the non-speculative baseline.
- **requests** (running, queued, KV usage): the reducer already prefers the log's (``/metrics``
  only fills them while no stats line was seen); the figure says which one that was.

Pure: a function of the state, no clock, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Literal, TypeVar

from .series import Series

if TYPE_CHECKING:
    from .state import DashboardState

Source = Literal["log", "/metrics", "server_info", ""]  # "": nothing known yet
T = TypeVar("T")
SPEEDUP_WINDOW = 10  # tok/s points in the speedup's median
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

    @property
    def known(self) -> bool:
        return self.value is not None


@dataclass(frozen=True, slots=True)
class Figures:
    """Every figure the dashboard shows, from one state."""

    tok_s: Figure[float]
    accept_len: Figure[float]
    accept_lifetime: Figure[float]
    accept_rate: Figure[float]
    per_position: Figure[tuple[float, ...]]
    speedup: Figure[float]
    requests: Figure[int]  # running requests; queued and KV usage share its source


def _series(log: Series, metrics: Series) -> Figure[float]:
    if len(log):
        return Figure(log.last, "log", log)
    if len(metrics):
        return Figure(metrics.last, "/metrics", metrics)
    return Figure(None, "", log)


def tok_s(state: DashboardState) -> Figure[float]:
    """Generation throughput: the log's, else ``/metrics'`` windowed rate."""
    return _series(state.gen_tps, state.m_gen_tps)


def accept_len(state: DashboardState) -> Figure[float]:
    """Current accept length (tokens per verify step): the log's, else ``/metrics'``."""
    return _series(state.accept_len, state.m_accept_len)


def accept_lifetime(state: DashboardState) -> Figure[float]:
    """``/server_info``'s accept length averaged over the server's life."""
    info = state.server_info
    if info is None or not info.avg_accept_len:
        return Figure(None)
    return Figure(info.avg_accept_len, "server_info", window="lifetime average")


def accept_rate(state: DashboardState) -> Figure[float]:
    if state.accept_rate.last is not None:
        return Figure(state.accept_rate.last, "log", state.accept_rate)
    if state.m_acceptance_rate is not None:
        return Figure(state.m_acceptance_rate, "/metrics")
    return Figure(None)


def per_position(state: DashboardState) -> Figure[tuple[float, ...]]:
    if state.per_position:
        return Figure(state.per_position, "log")
    if state.m_per_position:
        return Figure(state.m_per_position, "/metrics")
    return Figure(None)


def speedup(state: DashboardState) -> Figure[float]:
    """Median tok/s over the baseline; unknown without a baseline or any tok/s point."""
    window = f"median of the last {SPEEDUP_WINDOW}"
    source: Source = "log"
    series = state.gen_tps
    tps = series.median(last_n=SPEEDUP_WINDOW)
    if not tps:  # none, or an idle log's zero: /metrics' median (which may be zero too)
        source, series = "/metrics", state.m_gen_tps
        tps = series.median(last_n=SPEEDUP_WINDOW)
    if tps is None or not state.baseline_tok_s:
        return Figure(None)
    return Figure(tps / state.baseline_tok_s, source, series, window)


def requests(state: DashboardState) -> Figure[int]:
    source: Source = ("log" if state.last_decode is not None
                      else "/metrics" if state.last_metrics is not None else "")
    return Figure(state.running, source)


def figures(state: DashboardState) -> Figures:
    """All of them at once (the Metrics pane shows every one)."""
    return Figures(tok_s(state), accept_len(state), accept_lifetime(state), accept_rate(state),
                   per_position(state), speedup(state), requests(state))


__all__ = ["SPEEDUP_WINDOW", "Figure", "Figures", "Source", "accept_len", "accept_lifetime",
           "accept_rate", "figures", "per_position", "requests", "speedup", "tok_s"]
