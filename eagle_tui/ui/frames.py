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


__all__ = ["FRAME_INTERVAL", "PANE_INTERVAL", "frame_delay"]
