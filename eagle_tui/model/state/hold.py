"""The server's holds (:class:`Holds`): asleep, paused, recovering from a fault, each with
since when, as the log, the endpoints and the sleep gauge said (the newest word wins)."""

from __future__ import annotations

from eagle_tui.model.events import HoldLine
from eagle_tui.model.record import Record, record

MAX_HOLD_LINES = 64  # the log's hold lines kept for the report (the newest)


@record
class HoldMark(Record):
    """One hold: on or off, since when (observed time; the log's own time text where a line
    said it), the sleep level where known, who said it and what to add."""

    on: bool
    since: float | None = None
    time: str | None = None
    level: int | None = None
    source: str = ""  # "log", "/metrics", the endpoint's path
    detail: str = ""


@record
class Holds(Record):
    """Sleep, pause and fault-tolerance recovery (``None``: nothing said either way)."""

    sleep: HoldMark | None = None
    pause: HoldMark | None = None
    ft: HoldMark | None = None
    lines: tuple[HoldLine, ...] = ()  # the log's hold lines, the newest MAX_HOLD_LINES


__all__ = ["MAX_HOLD_LINES", "HoldMark", "Holds"]
