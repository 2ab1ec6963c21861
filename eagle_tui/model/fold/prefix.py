"""The background summary of a log opened at its end, made one with the live tail's state.

A log opened at its end (``LogOpened``) is parsed from ``start`` on: its events count lines from
there. The bytes before ``start`` are summarized elsewhere (``report/prefix.py``, in a child
process) into a :class:`~.state.DashboardState` whose line numbers are the file's own. When
that summary is in, the session replaces its state with the summary's followed by every event
it reduced since it began (:func:`merged`): what a full parse of the file would show, computed
in a fraction of the time.

The one rule for line numbers: the state keeps them as the tail's events carry them, counted
from ``start`` (those of the summary come out zero or negative); ``state.log.lineno_base`` (the
lines before ``start``) turns one into the file's own (:func:`absolute`), and is ``None`` until
counted (then shown as "line ~N"). A log read from byte 0 has ``lineno_base == 0``: nothing
changes.
Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from eagle_tui.model.events import (
    CrashEvent,
    Event,
    LogLine,
    LogOpened,
    LogPrefixCounted,
    LogRestarted,
    SummaryProgress,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.record import Record, record
from eagle_tui.model.series import Series
from eagle_tui.model.state import RECORDS, DashboardState

# the event bytes the session keeps while a summary runs (a LogLine counts its text): what it
# replays onto the summary. Past it, the summary is not merged (and the state says so).
RETAIN_BYTES = 64 << 20
EVENT_COST = 96  # bytes counted per event besides a line's text
_LIVENESS = ("data_t", "active_t", "idle_t")


@record
class PrefixSummary(Record):
    """What the background summary returns: the ``state`` of the ``lines`` lines before the
    tail (the file's own line numbers), whose crash events also cover the first ``covered``
    lines of the tail (its parser read on past the start with the context the tail's lacked:
    :func:`merged` puts ``crashes`` where the tail's own crash events of those lines were;
    their line numbers count from the tail's start)."""

    state: DashboardState
    lines: int
    covered: int = 0
    # the crash events of the covered lines, each after the line (of the tail) that decided it
    crashes: tuple[tuple[int, CrashEvent], ...] = ()


def absolute(lineno: int, base: int | None) -> int:
    """The file's own number of a line the state holds (``base``: ``state.lineno_base``; a
    ``None`` base leaves it as it is: shown as approximate by :func:`line_text`)."""
    return lineno if base is None else lineno + base


def line_text(lineno: int, base: int | None) -> str:
    """``"line N"`` with the file's own number, ``"line ~N"`` while the lines before the tail
    are not counted yet (``N`` then counts from the tail's start)."""
    return f"line {lineno + base}" if base is not None else f"line ~{lineno}"


def summarizing(state: DashboardState) -> bool:
    """Whether the lines before the tail are still being summarized (a verdict waits: a crash
    there must still be seen)."""
    return state.log.log_start > 0 and (state.log.summary is None or not state.log.summary.finished)


def summary_text(state: DashboardState) -> str | None:
    """The status line's words for the background summary: ``"summarizing 43 % · 1.2 s left"``
    while it runs, what went wrong when it failed, ``None`` otherwise."""
    s = state.log.summary
    if s is not None and s.finished:
        if s.error.startswith("not merged"):
            return f"earlier lines {s.error}"
        return f"earlier lines not summarized: {s.error}" if s.error else None
    if state.log.log_start <= 0:
        return None
    if s is None or s.total <= 0:
        return "summarizing the earlier lines"
    text = f"summarizing {min(99, int(100 * s.done / s.total))} %"
    return text + (f" · {s.eta_s:.1f} s left" if s.eta_s is not None else "")


def summary_dict(state: DashboardState) -> dict[str, Any] | None:
    """The background summary for the JSON lines (``None``: the log was read from its start)."""
    s = state.log.summary
    if state.log.log_start <= 0 and s is None:
        return None
    return {"start": state.log.log_start, "done": s.done if s else 0,
            "total": s.total if s else state.log.log_start, "lines": s.lines if s else 0,
            "eta_s": None if s is None or s.eta_s is None else round(s.eta_s, 1),
            "finished": bool(s and s.finished), "error": s.error if s else "",
            "lineno_base": state.log.lineno_base}


def cost(events: Iterable[Event]) -> int:
    """What keeping ``events`` for a merge costs, in bytes (roughly: text plus a fixed part)."""
    total = 0
    for ev in events:
        total += EVENT_COST + (len(ev.text) if type(ev) is LogLine else 0)
    return total


def _shift(value: Any, delta: int) -> Any:
    if isinstance(value, tuple):
        return tuple(_shift(v, delta) for v in value)
    lineno = getattr(value, "lineno", None)
    if isinstance(lineno, int) and dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, lineno=lineno + delta)
    return value


def _retime(series: Series, t: float) -> Series:
    """Points the summary stamped without a clock (``t == 0``) at ``t``: when the log was
    opened, where a catch-up would have stamped them."""
    if not any(p[0] == 0.0 for p in series.points):
        return series
    pts = tuple((t if pt == 0.0 else pt, v) for pt, v in series.points)
    return dataclasses.replace(series, points=pts)


def rebase(summary: DashboardState, lines: int, t: float | None) -> DashboardState:
    """The summary of the first ``lines`` lines with the tail's line numbers (each one less
    ``lines``: they come out ``<= 0``) and its unclocked points and liveness stamped ``t``."""
    records: dict[str, Any] = {}
    for name in RECORDS:
        if name in ("activity", "alerts"):
            continue
        record = getattr(summary, name)
        changes = _rebased(record, lines, t, liveness=name == "liveness")
        if changes:
            records[name] = dataclasses.replace(record, **changes)
    records["alerts"] = ()  # evaluated again by the merge's reduce
    return dataclasses.replace(summary, **records)


def _rebased(record: Any, lines: int, t: float | None, *, liveness: bool) -> dict[str, Any]:
    """One record's fields that change in :func:`rebase`."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if f.name in ("lines", "first_error_line") and (value is None or isinstance(value, int)):
            if value is not None:  # (a count of lines; a record's own ``lines`` are shifted)
                changes[f.name] = value - lines
        elif isinstance(value, Series):
            if t is not None:
                changes[f.name] = _retime(value, t)
        elif liveness and f.name in _LIVENESS:
            if t is not None and value is not None and value == 0.0:
                changes[f.name] = t
        else:
            shifted = _shift(value, -lines)
            if shifted is not value:
                changes[f.name] = shifted
    return changes


def merged(summary: PrefixSummary, since_start: Iterable[Event],
           t: float | None) -> DashboardState:
    """The state a full parse gives: the summary of the lines before the tail, then every event
    the session reduced since it began (the tail's and every other source's), in their order,
    but the tail's crash events of the lines the summary covered. ``t``: when the log was
    opened (the summary's unclocked points are stamped with it)."""
    covered = summary.covered
    crashes = list(summary.crashes)
    events: list[Event] = []
    for ev in since_start:
        if type(ev) is CrashEvent and 0 < ev.lineno <= covered:
            continue
        lineno = getattr(ev, "lineno", None)
        while crashes and isinstance(lineno, int) and lineno > crashes[0][0]:
            events.append(crashes.pop(0)[1])
        events.append(ev)
    events.extend(c for _, c in crashes)
    return reduce(rebase(summary.state, summary.lines, t), events)


class Kept:
    """The events a session keeps from its start for the merge of a summary, and when to
    start one (the session's bookkeeping, pure: the session only runs the task)."""

    def __init__(self) -> None:
        self.events: list[Event] | None = []  # None: nothing can be merged any more
        self.bytes = 0
        self.opened: LogOpened | None = None
        self.why = ""

    def add(self, events: list[Event]) -> LogOpened | None:
        """Keep a reduced batch; the ``LogOpened`` to summarize when it is the first one."""
        if self.events is None:
            return None
        start: LogOpened | None = None
        if self.opened is None:
            for ev in events:
                if type(ev) is LogOpened and ev.start > 0:
                    self.opened = start = ev
                    break
                if type(ev) is LogLine or type(ev) is LogRestarted:
                    self.events = None  # the log is read from its start: nothing to merge
                    return None
        elif any(type(ev) is LogRestarted for ev in events):
            self.events, self.why = None, "the log restarted"  # the old file's summary
            return None
        self.events.extend(events)
        self.bytes += cost(events)
        if self.bytes > RETAIN_BYTES:
            self.events, self.why = None, "the tail since the open outgrew what is kept"
        return start

    def merge(self, summary: PrefixSummary,
              t: float | None) -> tuple[DashboardState | None, list[Event]]:
        """The merged state (``None``: not merged) and the events that end the summary."""
        opened = self.opened
        assert opened is not None
        done = SummaryProgress(opened.path, opened.host, opened.start, opened.start,
                               summary.lines, 0.0, True)
        ends: list[Event] = [LogPrefixCounted(opened.path, opened.host, summary.lines), done]
        kept, self.events = self.events, None
        if kept is None:
            if self.why == "the log restarted":  # another file now: its state knows nothing
                return None, []  # of the old one's summary, and needs none
            return None, [ends[0], dataclasses.replace(done, error=f"not merged: {self.why}")]
        return merged(summary, [*kept, *ends], t), ends


__all__ = [
    "EVENT_COST",
    "RETAIN_BYTES",
    "Kept",
    "PrefixSummary",
    "absolute",
    "cost",
    "line_text",
    "merged",
    "rebase",
    "summarizing",
    "summary_dict",
    "summary_text",
]
