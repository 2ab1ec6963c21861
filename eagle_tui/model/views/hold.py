"""Is the server held on purpose? ``sleeping (level 1) since 14:02:11``, ``paused since …``,
``fault-tolerance: engine 0 UNHEALTHY since …``: what :mod:`.liveness` shows instead of idle,
stale or starting, and what silences the stall and idle alerts.

A fault-tolerance recovery outranks a sleep, a sleep outranks a pause (a sleeping engine's
scheduler is paused too).
"""

from __future__ import annotations

import time as _time
from typing import TYPE_CHECKING, Literal

from eagle_tui.model.events import HoldLine
from eagle_tui.model.record import Record, record
from eagle_tui.model.state.alert import Alert

if TYPE_CHECKING:
    from eagle_tui.model.state import DashboardState, HoldMark

HoldState = Literal["sleeping", "paused", "recovering"]


@record
class Hold(Record):
    """The hold shown: its state word, since when (observed time), and the sentence."""

    state: HoldState
    since: float | None
    text: str
    level: int | None = None
    source: str = ""

    def as_dict(self) -> dict[str, object]:
        return {"state": self.state, "since": None if self.since is None else round(self.since, 3),
                "level": self.level, "source": self.source or None, "text": self.text}


def since_text(mark: HoldMark) -> str:
    """``since 14:02:11`` (the observed time), the log's own time text when only it is known."""
    if mark.since is not None and mark.since > 0:
        return f"since {_time.strftime('%H:%M:%S', _time.localtime(mark.since))}"
    return f"since {mark.time}" if mark.time else ""


def _sentence(head: str, mark: HoldMark, *, detail_first: bool = False) -> str:
    if detail_first:  # "fault-tolerance: engine 0 UNHEALTHY since 14:02:11"
        return " ".join(p for p in (head, mark.detail, since_text(mark)) if p)
    return " ".join(p for p in (head, since_text(mark)) if p) + (
        f" ({mark.detail})" if mark.detail else "")


def hold_of(state: DashboardState) -> Hold | None:
    """The server's hold, ``None`` when it holds none (or crashed: a crash says more)."""
    if state.startup.crash is not None:
        return None
    h = state.holds
    if h.ft is not None and h.ft.on:
        text = _sentence("fault-tolerance:", h.ft, detail_first=True)
        return Hold("recovering", h.ft.since, text, None, h.ft.source)
    if h.sleep is not None and h.sleep.on:
        lv = h.sleep.level
        head = "sleeping" if lv is None else f"sleeping (level {lv})"
        return Hold("sleeping", h.sleep.since, _sentence(head, h.sleep), lv, h.sleep.source)
    if h.pause is not None and h.pause.on:
        return Hold("paused", h.pause.since, _sentence("paused", h.pause), None, h.pause.source)
    return None


def hold_line_dict(line: HoldLine, lineno_base: int | None = 0) -> dict[str, object]:
    """One sleep, pause or fault-tolerance log line as a report event (its file line)."""
    return {"event": line.what, "line": line.lineno + (lineno_base or 0), "time": line.time,
            "level": line.level, "detail": line.detail or None}


def rule_held(state: DashboardState) -> Alert | None:
    """An alert that says the server is held, and that the stall and lost-readiness alerts
    wait until it is not (they would call a deliberate stop a failure)."""
    held = hold_of(state)
    if held is None:
        return None
    if held.state == "recovering":
        return Alert("held", "warning", f"Fault-tolerance recovery: "
                     f"{held.text.removeprefix('fault-tolerance: ')}; generation waits for it.")
    return Alert("held", "info", f"The server is {held.text}: generation is stopped on purpose "
                 "(the stall and readiness alerts wait until it resumes).")


__all__ = ["Hold", "HoldState", "hold_line_dict", "hold_of", "rule_held", "since_text"]
