"""The working copy of one ``reduce()`` call (:mod:`.fold`, :mod:`.stats_fold` write through it)."""

from __future__ import annotations

import dataclasses
from collections import deque

from . import activity
from .events import LogLine, Phase
from .state import RECENT_LINES, DashboardState

FIELDS: tuple[str, ...] = ()  # filled below, once the class exists
NO_LINE = object()
_setattr = object.__setattr__


class Batch:
    """The working copy of one ``reduce()`` call.

    ``dataclasses.replace`` on a 50-field frozen dataclass costs ~35 µs; doing it several times
    per event made the reducer the bottleneck of a busy log (~100 µs per stats line). Instead,
    ``reduce`` copies the state once per batch, mutates that private copy in place (nobody else
    holds a reference to it yet, so immutability is preserved for every observer) and buffers
    series points so each :class:`Series` is rebuilt once per batch, not once per point.
    """

    __slots__ = ("line_now", "max_lineno", "pending", "recent", "s", "scan")

    def __init__(self, state: DashboardState) -> None:
        self.s = copy(state)
        self.pending: dict[str, list[tuple[float, float]]] = {}
        # log lines: the short tail and the highest line number, folded in once per batch
        self.recent: deque[LogLine] = deque(state.recent_lines, RECENT_LINES)
        self.max_lineno = state.lines
        # the clock at the batch's last log line (NO_LINE: no line yet), one store per line
        self.line_now: float | object | None = NO_LINE
        # whether log lines may still carry evidence (.evidence): decided once per batch, as the
        # hot path cannot afford it per line; set again where it can turn true (a restart, a
        # phase that goes back). Scanning a line needlessly changes nothing.
        self.scan = wants_evidence(state)

    def set(self, **changes: object) -> None:
        for name, value in changes.items():
            _setattr(self.s, name, value)

    def point(self, series: str, t: float, value: float) -> None:
        self.pending.setdefault(series, []).append((t, value))

    def finish(self) -> DashboardState:
        s = self.s
        for name, pts in self.pending.items():
            _setattr(s, name, getattr(s, name).extend(pts))
        self.pending = {}
        line_now = self.line_now
        if line_now is not NO_LINE:
            _setattr(s, "recent_lines", tuple(self.recent))
            _setattr(s, "lines", max(s.lines, self.max_lineno))
            assert line_now is None or isinstance(line_now, float)
            _setattr(s, "activity", activity.on_lines(s.activity, line_now))
            self.line_now = NO_LINE
        return s


def wants_evidence(state: DashboardState) -> bool:
    return (state.engine == "unknown" or state.engine_inferred is not None
            or state.phase.rank < Phase.READY.rank)




def copy(state: DashboardState) -> DashboardState:
    new = object.__new__(DashboardState)
    for name in FIELDS:
        _setattr(new, name, getattr(state, name))
    return new


FIELDS = tuple(f.name for f in dataclasses.fields(DashboardState))
