"""The hold events: a server that sleeps, is paused or recovers from a fault, as its log
lines (:class:`HoldLine`) and its endpoints (:class:`HoldSample`) say."""

from __future__ import annotations

from eagle_tui.model.record import Record, record

# what a hold line says (HoldLine.what)
ASLEEP, WAKING, AWAKE = "asleep", "waking", "awake"
PAUSED, RESUMED = "paused", "resumed"
FT_FAULT, FT_HEALTHY, FT_GAVE_UP, FT_NOTE = "ft_fault", "ft_healthy", "ft_gave_up", "ft_note"
HOLD_WHATS = (ASLEEP, WAKING, AWAKE, PAUSED, RESUMED, FT_FAULT, FT_HEALTHY, FT_GAVE_UP, FT_NOTE)


@record
class HoldLine(Record):
    """One log line of the engine's sleep, pause or fault-tolerance machinery."""

    what: str  # one of HOLD_WHATS
    lineno: int
    time: str | None = None
    level: int | None = None  # the sleep level, where the line says it
    detail: str = ""  # what to show ("engine 0 UNHEALTHY (RuntimeError)")


@record
class HoldSample(Record):
    """What the server's endpoints said about a hold (``None``: not asked or not said)."""

    t: float
    paused: bool | None = None
    sleeping: bool | None = None
    path: str = ""


__all__ = ["ASLEEP", "AWAKE", "FT_FAULT", "FT_GAVE_UP", "FT_HEALTHY", "FT_NOTE", "HOLD_WHATS",
           "PAUSED", "RESUMED", "WAKING", "HoldLine", "HoldSample"]
