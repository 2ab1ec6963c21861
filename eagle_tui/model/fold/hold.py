"""Folding the hold events (and the sleep gauge of ``/metrics``) into :class:`Holds`.

A mark keeps its ``since`` while the same word repeats (a gauge read every scrape, a poll every
few seconds), and takes the event's time when the word changes; the newest word wins, whoever
said it. A restart clears everything (:func:`cleared`).
"""

from __future__ import annotations

from dataclasses import replace

from eagle_tui.model.events import HoldLine, HoldSample, MetricsSample
from eagle_tui.model.events.hold import (
    ASLEEP,
    AWAKE,
    FT_FAULT,
    FT_GAVE_UP,
    FT_HEALTHY,
    PAUSED,
    RESUMED,
    WAKING,
)
from eagle_tui.model.state.hold import MAX_HOLD_LINES, HoldMark, Holds


def _mark(old: HoldMark | None, on: bool, now: float, *, time: str | None = None,
          level: int | None = None, source: str = "", detail: str = "") -> HoldMark:
    """The new mark: the old one's ``since`` (and its level, when this word has none) while
    the word stays the same."""
    if old is not None and old.on == on:
        return HoldMark(on, old.since, old.time if time is None else time,
                        level if level is not None else old.level, source or old.source,
                        detail or (old.detail if on else ""))
    return HoldMark(on, now if now > 0 else None, time, level, source, detail)


def on_line(h: Holds, ev: HoldLine, now: float) -> Holds:
    lines = (*h.lines[-(MAX_HOLD_LINES - 1):], ev)
    w, src = ev.what, "log"
    if w in (ASLEEP, WAKING):
        sleep = _mark(h.sleep, True, now, time=ev.time, level=ev.level, source=src,
                      detail=ev.detail if w == ASLEEP else f"waking up ({ev.detail})")
        return replace(h, sleep=sleep, lines=lines)
    if w == AWAKE:
        return replace(h, sleep=_mark(h.sleep, False, now, time=ev.time, source=src),
                       lines=lines)
    if w in (PAUSED, RESUMED):
        return replace(h, pause=_mark(h.pause, w == PAUSED, now, time=ev.time, source=src,
                                      detail=ev.detail), lines=lines)
    if w in (FT_FAULT, FT_GAVE_UP):
        return replace(h, ft=_mark(h.ft, True, now, time=ev.time, source=src, detail=ev.detail),
                       lines=lines)
    if w == FT_HEALTHY:
        return replace(h, ft=_mark(h.ft, False, now, time=ev.time, source=src), lines=lines)
    return replace(h, lines=lines)  # a note ([FT] rejected, failed): for the report only


def on_sample(h: Holds, ev: HoldSample, now: float) -> Holds:
    """An endpoint's answer. ``sleeping`` true while ``paused`` is too says nothing of sleep
    (an engine whose "sleeping" includes paused: the gauge and the log tell)."""
    new = h
    if ev.paused is not None:
        new = replace(new, pause=_mark(h.pause, ev.paused, now, source=ev.path))
    if ev.sleeping is False or (ev.sleeping and ev.paused is False):
        new = replace(new, sleep=_mark(h.sleep, ev.sleeping, now, source=ev.path))
    return h if (new.pause, new.sleep) == (h.pause, h.sleep) else new


def on_metrics(h: Holds, ev: MetricsSample, now: float) -> Holds:
    if ev.asleep is None:
        return h
    mark = _mark(h.sleep, ev.asleep, now, level=ev.sleep_level if ev.asleep else None,
                 source=ev.source)
    return h if mark == h.sleep else replace(h, sleep=mark)


def cleared(h: Holds) -> Holds:
    """After a restart: the new server holds nothing yet (the old lines stay for the report)."""
    return Holds(lines=h.lines) if (h.sleep or h.pause or h.ft) else h


__all__ = ["cleared", "on_line", "on_metrics", "on_sample"]
