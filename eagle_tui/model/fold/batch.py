"""The working copy of one ``reduce()`` call (:mod:`.fold` and :mod:`.stats_fold` write through it).

Copy on write, per record: a record is copied the first time the batch changes it, that private
copy is then changed in place (nobody else holds a reference to it yet, so every observer still
sees immutable records), and a record the batch never changes stays the very same object.
Series points are buffered so each :class:`~.series.Series` is rebuilt once per batch, not once
per point.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from eagle_tui.model.events import LogLine, Phase
from eagle_tui.model.state import RECENT_LINES, RECORDS, DashboardState, activity

NO_LINE = object()
_setattr = object.__setattr__
_new = object.__new__


def _clone(record: Any) -> Any:
    new = _new(type(record))
    for name in type(record).__slots__:
        _setattr(new, name, getattr(record, name))
    return new


class Batch:
    """One ``reduce()`` call's working state: ``s`` (read it freely; write with :meth:`put`)."""

    __slots__ = ("base", "line_now", "max_lineno", "own", "pending", "recent", "s", "scan")

    def __init__(self, state: DashboardState) -> None:
        self.base = state
        s = _new(DashboardState)
        for name in RECORDS:
            _setattr(s, name, getattr(state, name))
        self.s = s
        self.own: set[str] = set()  # the records this batch has copied (its own to change)
        self.pending: dict[tuple[str, str], list[tuple[float, float]]] = {}
        # log lines: the short tail and the highest line number, folded in once per batch
        self.recent: deque[LogLine] = deque(state.log.recent_lines, RECENT_LINES)
        self.max_lineno = state.log.lines
        # the clock at the batch's last log line (NO_LINE: no line yet), one store per line
        self.line_now: float | object | None = NO_LINE
        # whether log lines may still carry evidence (.evidence): decided once per batch, as the
        # hot path cannot afford it per line; set again where it can turn true (a restart, a
        # phase that goes back). Scanning a line needlessly changes nothing.
        self.scan = wants_evidence(state)

    def mut(self, record: str) -> Any:
        """The batch's own copy of a record, to change in place (copied on the first call);
        call it only for a change: the record is new in the batch's state from then on."""
        if record in self.own:
            return getattr(self.s, record)
        rec = _clone(getattr(self.s, record))
        _setattr(self.s, record, rec)
        self.own.add(record)
        return rec

    def put(self, record: str, **changes: object) -> None:
        """Change fields of one record; a change to the values it already has copies nothing."""
        s = self.s
        rec = getattr(s, record)
        if record not in self.own:
            if all(getattr(rec, k) is v for k, v in changes.items()):
                return
            rec = _clone(rec)
            _setattr(s, record, rec)
            self.own.add(record)
        for name, value in changes.items():
            _setattr(rec, name, value)

    def swap(self, record: str, value: object) -> None:
        """Replace a whole record (or the alerts) with a value of the fold's own making."""
        if getattr(self.s, record) is not value:
            _setattr(self.s, record, value)
            self.own.discard(record)

    def point(self, key: tuple[str, str], t: float, value: float) -> None:
        """A point for the series ``key`` (record, field), added when the batch finishes."""
        pts = self.pending.get(key)
        if pts is None:
            pts = self.pending[key] = []
        pts.append((t, value))

    def finish(self) -> DashboardState:
        s = self.s
        for (record, name), pts in self.pending.items():
            self.put(record, **{name: getattr(getattr(s, record), name).extend(pts)})
        self.pending = {}
        line_now = self.line_now
        if line_now is not NO_LINE:
            log = s.log
            self.put("log", recent_lines=tuple(self.recent),
                     lines=max(log.lines, self.max_lineno))
            assert line_now is None or isinstance(line_now, float)
            self.swap("activity", activity.on_lines(s.activity, line_now))
            self.line_now = NO_LINE
        # a record changed and changed back within the batch (a stale sample, then the held
        # one again) stays the same object: observers repaint only for new content
        base = self.base
        for record in RECORDS:
            old, new = getattr(base, record), getattr(s, record)
            if new is not old and new == old:
                _setattr(s, record, old)
                self.own.discard(record)
        return s


def wants_evidence(state: DashboardState) -> bool:
    st = state.startup
    return (st.engine == "unknown" or st.engine_inferred is not None
            or st.phase.rank < Phase.READY.rank)
