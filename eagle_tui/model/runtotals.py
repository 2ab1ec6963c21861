"""A run's own totals: the server's lifetime counters added up over the run, restarts included.

A run is the life of one server process, so its acceptance is its counters' ratio over that
life (``1 + Σaccepted / Σdrafts``, ``Σgeneration_tokens / Σverify_calls``), not a mean of
interval values. The counters start at zero when the server starts and go *down* only when it
restarts: each scrape adds its growth since the scrape before, and after a restart the new
life's whole value (it counted from zero again). The first scrape adds its whole value too: the
counters hold the server's life so far, which is the run's. Pure; fed by the fold
(:func:`add_counters`) and by ``stop``'s final scrape.
"""

from __future__ import annotations

from collections.abc import Mapping

from eagle_tui.model.record import Record, record

Pairs = tuple[tuple[str, float], ...]


@record
class CounterRun(Record):
    """Σ of each counter over the run, the last values seen, and the restarts seen."""

    totals: Pairs = ()
    last: Pairs = ()
    restarts: int = 0
    scrapes: int = 0

    def total(self, name: str) -> float | None:
        for k, v in self.totals:
            if k == name:
                return v
        return None


def restarted(last: Mapping[str, float], now: Mapping[str, float]) -> bool:
    """A counter went down, or one seen before is gone: the server started again."""
    return any(name not in now or now[name] < value for name, value in last.items())


def add_counters(run: CounterRun, counters: Mapping[str, float]) -> CounterRun:
    """``run`` with one scrape's lifetime ``counters`` added (their growth since the last)."""
    if not counters:
        return run
    last = dict(run.last)
    reset = bool(last) and restarted(last, counters)
    totals = dict(run.totals)
    for name, value in counters.items():
        if value != value or value < 0:  # NaN or a negative count: not a reading
            continue
        before = 0.0 if reset else last.get(name, 0.0)
        totals[name] = totals.get(name, 0.0) + max(0.0, value - before)
    return CounterRun(tuple(sorted(totals.items())), tuple(sorted(counters.items())),
                      run.restarts + int(reset), run.scrapes + 1)


def totals_of(sequence: list[Mapping[str, float]]) -> CounterRun:
    """The totals of successive scrapes (a test's or a log's replay)."""
    run = CounterRun()
    for counters in sequence:
        run = add_counters(run, counters)
    return run


__all__ = ["CounterRun", "Pairs", "add_counters", "restarted", "totals_of"]
