"""How often a quiet server is sampled: its local process tree (``sources/process``), its
``/metrics`` and load endpoint (``sources/metrics``, ``sources/loads``).

At the full rate while anything a reader of the samples sees moves (:func:`moved`; a scrape
that is not an idle reading), less often while nothing does (:func:`backoff`): a quiet server
left on screen for hours cost a wake-up, a state and a pass over the panes a second, and each
poll of its endpoints wrote an access line to its log, which the dashboard then read. Its exit
never waits for a sample (the pidfd, or the watcher's liveness poll). The remote watcher's
``ps`` is its liveness check too, so it keeps its pace.
"""

from __future__ import annotations

from eagle_tui.model.events import ProcessSample

# A tree that did not move is sampled at most this many sample intervals apart, and at most
# STEADY_MAX_S apart: a sample older than views/liveness's FRESH_S no longer says "up".
STEADY_BACKOFF = 5.0
STEADY_MAX_S = 5.0
RSS_MOVED = 1 << 20  # a change of RSS below a MiB (and below 1 %) is not a move
CPU_MOVED = 1.0  # CPU is shown in whole percents
READ_MOVED_BPS = 64 * 1024  # reads slower than this are a quiet server's, not a loading one's


def moved(prev: ProcessSample | None, new: ProcessSample) -> bool:
    """Whether ``new`` says anything ``prev`` did not: another process or state, other pids,
    RSS or CPU that moved past what is shown, or reads at a loading rate."""
    if prev is None or (prev.pid, prev.status, prev.name, prev.started, prev.pids) != (
            new.pid, new.status, new.name, new.started, new.pids):
        return True
    if _apart(prev.rss_bytes, new.rss_bytes, max(RSS_MOVED, (prev.rss_bytes or 0) / 100)):
        return True
    if _apart(prev.cpu_percent, new.cpu_percent, CPU_MOVED):
        return True
    if prev.read_bytes is None or new.read_bytes is None:
        return prev.read_bytes != new.read_bytes
    dt = new.t - prev.t
    return new.read_bytes - prev.read_bytes >= READ_MOVED_BPS * dt if dt > 0 \
        else new.read_bytes != prev.read_bytes


def _apart(a: float | None, b: float | None, slack: float) -> bool:
    if a is None or b is None:
        return a is not b
    return abs(a - b) >= slack


def next_interval(prev: ProcessSample | None, new: ProcessSample, current: float,
                  base: float) -> float:
    """The wait before the sample after ``new``: ``base`` when it :func:`moved` from ``prev``,
    else twice ``current``, at most ``base`` × :data:`STEADY_BACKOFF` and :data:`STEADY_MAX_S`
    (never less than ``base``)."""
    return backoff(moved(prev, new), current, base)


def backoff(moved: bool, current: float, base: float) -> float:
    """The wait before the next sample: ``base`` after one that ``moved``, else twice
    ``current``, at most ``base`` × :data:`STEADY_BACKOFF` and :data:`STEADY_MAX_S` (never less
    than ``base``)."""
    if moved:
        return base
    return min(max(current, base) * 2, max(base, min(base * STEADY_BACKOFF, STEADY_MAX_S)))


__all__ = ["STEADY_BACKOFF", "STEADY_MAX_S", "backoff", "moved", "next_interval"]
