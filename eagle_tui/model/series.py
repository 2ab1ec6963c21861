"""Windowed statistics over a bounded, immutable series of (t, value) points.

A :class:`Series` is a value: ``append`` returns a new series, so it can live inside the frozen
:class:`~eagle_tui.model.state.DashboardState`. It keeps at most ``maxlen`` points (copying a few
hundred floats per append is cheaper than any cleverness at the 1-20 Hz rates metrics arrive at).

The EWMA is seeded with the first value, never with 0: a dashboard that shows "12 tok/s" for the
first minute because its average started at zero is lying.
"""

from __future__ import annotations

import math

from eagle_tui.model.record import Record, record


def _quantile(sorted_vals: list[float], q: float) -> float:
    """Linear-interpolated quantile of an already sorted, non-empty list (numpy's default)."""
    if len(sorted_vals) == 1:
        return sorted_vals[0]
    pos = q * (len(sorted_vals) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    frac = pos - lo
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * frac


@record
class Series(Record):
    """Bounded (t, value) points plus an EWMA; all statistics are pure functions of it."""

    points: tuple[tuple[float, float], ...] = ()
    maxlen: int = 600
    alpha: float = 0.3
    ewma: float | None = None

    def append(self, t: float, value: float) -> Series:
        if not math.isfinite(value):
            return self
        pts = (*self.points, (t, value))
        if len(pts) > self.maxlen:
            pts = pts[-self.maxlen :]
        ewma = value if self.ewma is None else self.alpha * value + (1 - self.alpha) * self.ewma
        return Series(pts, self.maxlen, self.alpha, ewma)

    def extend(self, points: list[tuple[float, float]]) -> Series:
        """Append many points at once: one tuple copy per batch instead of one per point."""
        ewma = self.ewma
        kept = []
        for t, value in points:
            if not math.isfinite(value):
                continue
            ewma = value if ewma is None else self.alpha * value + (1 - self.alpha) * ewma
            kept.append((t, value))
        if not kept:
            return self
        room = self.maxlen - len(kept)
        if room <= 0:
            pts = tuple(kept[-self.maxlen :])
        elif len(self.points) > room:
            pts = self.points[-room:] + tuple(kept)  # one copy, already trimmed
        else:
            pts = self.points + tuple(kept)
        return Series(pts, self.maxlen, self.alpha, ewma)

    def __len__(self) -> int:
        return len(self.points)

    @property
    def last(self) -> float | None:
        return self.points[-1][1] if self.points else None

    def values(self, last_n: int | None = None, since: float | None = None) -> list[float]:
        """Values of the window: the last ``last_n`` points and/or those with ``t >= since``."""
        pts = self.points
        if since is not None:
            pts = tuple(p for p in pts if p[0] >= since)
        if last_n is not None:
            pts = pts[-last_n:] if last_n > 0 else ()
        return [v for _, v in pts]

    def mean(self, last_n: int | None = None, since: float | None = None) -> float | None:
        vals = self.values(last_n, since)
        return sum(vals) / len(vals) if vals else None

    def median(self, last_n: int | None = None, since: float | None = None) -> float | None:
        return self.quantile(0.5, last_n, since)

    def quantile(
        self, q: float, last_n: int | None = None, since: float | None = None
    ) -> float | None:
        vals = sorted(self.values(last_n, since))
        return _quantile(vals, q) if vals else None

    def p10(self, last_n: int | None = None, since: float | None = None) -> float | None:
        return self.quantile(0.1, last_n, since)

    def p90(self, last_n: int | None = None, since: float | None = None) -> float | None:
        return self.quantile(0.9, last_n, since)
