"""One frame grid for every throttled repaint, so throttled updates share a screen update.

Each repaint costs a compositor pass over every widget in the dirty area, and a large part of a
pass is the same whatever changed. While a log streams, the log view repaints at most every
``FRAME_INTERVAL`` and the panes at most every ``PANE_INTERVAL``; with independent timers those
were ~8 separate screen updates a second at 200 lines/s (most of the UI thread's time). Timers
that fire on a shared grid of the monotonic clock (multiples of the interval, and the pane
interval a multiple of the frame interval) land in the same screen update instead, which
Textual merges into one pass.
"""

from __future__ import annotations

import math

# At a steady stream every repaint of a followed log shows a whole new screenful, and each is a
# full pass of Textual's compositor: more repaints a second would take the dashboard's CPU budget
# (docs/performance.md). Two a second still reads as a live tail; keys, scrolling, a crash, a
# new phase and a GPU memory step repaint at once, whatever these say.
FRAME_INTERVAL = 0.5  # s between repaints caused by streaming lines (keys repaint at once)
# A flood (a batch of FLOOD_ROWS new rows or more, i.e. thousands of lines a second) is a
# moment to watch, not a steady tail: its repaints come this often, so the screen stays within a
# few tenths of a second of the log; it ends FLOOD_HOLD_S after its last big batch.
FLOOD_FRAME_INTERVAL = 0.25
FLOOD_ROWS = 200
FLOOD_HOLD_S = 1.0
PANE_INTERVAL = 1.0  # s between pane redraws while only numbers change (a multiple of the above)


def frame_delay(now: float, last: float, interval: float) -> float:
    """Seconds to wait before the next throttled repaint; 0.0 means repaint now.

    Now, when the last one was at least ``interval`` ago; else at the first point of the grid
    (multiples of ``interval`` on the monotonic clock) about ``interval`` after the last
    repaint, so that every throttled repaint of the app falls on the same instants. Timers fire
    a few ms late: a quarter interval of slack keeps a repaint that ran just after its grid
    point on the next one, not the one after.
    """
    if now - last >= interval:
        return 0.0
    due = math.ceil((last + 0.75 * interval) / interval) * interval
    return max(0.0, due - now)


def pane_delay(now: float, last_panes: float, painted: float, flood: bool) -> float:
    """Seconds to wait before the panes' next update while only their numbers change (0.0:
    now), given when they and the log last drew and whether a flood is on.

    On the grid, every ``PANE_INTERVAL``; a tick that falls while the log streams waits for the
    log's next repaint, to share its screen update (each update draws the screen from the status
    line down). In a flood both come every ``FLOOD_FRAME_INTERVAL``: the flood's last numbers
    show on the flood's grid with its last lines, not on the pane grid up to a second later.
    """
    frame, interval = ((FLOOD_FRAME_INTERVAL, FLOOD_FRAME_INTERVAL) if flood
                       else (FRAME_INTERVAL, PANE_INTERVAL))
    wait = frame_delay(now, last_panes, interval)
    if wait <= 0 and now - painted < frame:
        wait = frame_delay(now, painted, frame)
    return wait


__all__ = ["FLOOD_FRAME_INTERVAL", "FLOOD_HOLD_S", "FLOOD_ROWS", "FRAME_INTERVAL", "PANE_INTERVAL",
           "frame_delay", "pane_delay"]
