"""The log view's scrolling part: follow/pause, scrolls that are not the user's, throttled repaints.

A plain object the view holds (:class:`~eagle_tui.ui.widgets.logview.LogView`), not a base
class: it works on the view through Textual's public ``ScrollView`` API (plus one quarantined
private call, :func:`~eagle_tui.ui.textual_private.scroll_update`). What a row *is* does not
matter here, only how many there are (``rows``).

Follow: on by default. Scrolling up pauses it (new lines are counted, not shown); ``End``/``f`` or
scrolling back to the bottom resumes. The view owns the decision (``set_follow``); this part
says when the user's scroll asks for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.widget import Widget

from eagle_tui.ui.deadline import Deadline
from eagle_tui.ui.frames import (
    FLOOD_FRAME_INTERVAL,
    FLOOD_HOLD_S,
    FLOOD_ROWS,
    FRAME_INTERVAL,
    frame_delay,
)
from eagle_tui.ui.textual_private import scroll_update
from eagle_tui.ui.widgets.scrollbars import sync_scrollbars


class Scroller:
    """Follow state, programmatic scrolls and throttled repaints of ``view``.

    ``rows`` gives the view's row count (its virtual height); ``painted`` runs after each
    repaint (the view's status line).
    """

    def __init__(self, view: ScrollView, rows: Callable[[], int], painted: Callable[[], None],
                 frame_interval: float = FRAME_INTERVAL) -> None:
        self.view = view
        self.rows = rows
        self.painted = painted
        self.follow = True
        self.unseen = 0
        self.programmatic = False  # the scroll under way is ours, not the user's
        self.quiet = False  # streaming: scroll moves repaint at the next throttled paint
        self.scrollbars_stale = False
        self.frame_interval = frame_interval
        self.last_paint = 0.0
        self.deadline = Deadline(view)  # the scheduled repaint
        self.flood_until = 0.0  # repaints at the flood's pace until then (monotonic)
        # runs first in every repaint (the app hands over the batches it held back for it);
        # what it appends is painted by the repaint under way, not by another one
        self.before_paint: Callable[[], None] | None = None
        self._painting = False

    @contextmanager
    def ours(self) -> Iterator[None]:
        """Scrolls made inside are programmatic (the previous state is restored after)."""
        programmatic, self.programmatic = self.programmatic, True
        try:
            yield
        finally:
            self.programmatic = programmatic

    # ------------------------------------------------------------------ repaints
    def request_paint(self) -> None:
        """Repaint for new lines, at most once per ``frame_interval``.

        A followed log scrolls every row on every batch, and a full repaint of a wide view is
        one of Textual's costliest compositor passes (see docs/performance.md): streaming
        repaints are capped so the tail stays live to the eye at a small share of a core, while
        keys and scrolling still repaint at once. The throttled repaints fall on the app's frame
        grid (:func:`frame_delay`), with the panes' updates.
        """
        if self._painting:
            return  # the repaint under way shows it
        if not self.paint_soon():
            self.paint()

    def paint_soon(self) -> bool:
        """Whether a throttled repaint is due, scheduling one on the frame grid when the last
        was too recent; False: a repaint now would not wait."""
        now = time.monotonic()
        interval = self.frame_interval
        if now < self.flood_until:
            interval = min(interval, FLOOD_FRAME_INTERVAL)
        wait = frame_delay(now, self.last_paint, interval)
        if self.deadline.pending:
            if self.deadline.due <= now + wait + interval / 4:
                return True  # already due: a late timer must not turn into a second, off-grid one
            self.deadline.stop()  # a flood began: its first repaint comes at its pace
        if wait <= 0 or not self.view.is_mounted:
            return False
        self.deadline.start(wait, self.paint)
        return True

    def paint(self) -> None:
        view = self.view
        if self.before_paint is not None:
            self._painting = True
            try:
                self.before_paint()
            finally:
                self._painting = False
        self.deadline.stop()  # (painted now: a repaint it had scheduled is not needed)
        self.last_paint = time.monotonic()
        if self.scrollbars_stale:
            self.scrollbars_stale = False
            with self.ours():  # scroll_update, without repainting bars that look the same
                sync_scrollbars(view, view.virtual_size)
            if self.follow:  # a scrollbar that just appeared took a row: stay at the end
                self.scroll_to_row(None)
            if view.show_vertical_scrollbar:
                view.vertical_scrollbar.position = view.scroll_y
        # the rows only (a bar is repainted by ``sync_scrollbars`` when its look changes);
        # before the first layout the rows are no area: the whole view
        rows = view.scrollable_content_region.reset_offset
        view.refresh(*(rows,) if rows else ())
        self.painted()

    @property
    def paint_pending(self) -> bool:
        return self.deadline.pending

    def set_virtual_size(self, size: Size) -> None:
        """Set the scrollable size without a screen-wide layout.

        Assigning ``virtual_size`` (a ``layout=True`` reactive) re-lays out the whole screen,
        which at a streaming batch rate was most of the dashboard's CPU while tailing. The
        view's own size never depends on its content, so only the scrollbars need updating.
        """
        view = self.view
        if size != view.virtual_size:
            view.set_reactive(Widget.virtual_size, size)
            if self.quiet:  # streaming: the scrollbars follow at the next (throttled) paint
                self.scrollbars_stale = True
                return
            with self.ours():  # it clamps the scroll: that is not the user scrolling
                scroll_update(view, size)

    # ------------------------------------------------------------------ scrolling
    def set_scroll(self, y: float) -> None:
        self.programmatic = True
        try:
            self.view.scroll_target_y = y
            self.view.scroll_y = y
        finally:
            self.programmatic = False

    def scroll_to_row(self, row: int | None) -> None:
        """``None`` → the end; else put ``row`` a third of the way down the view."""
        height = self.view.scrollable_content_region.height
        if row is None:
            self.set_scroll(max(0, self.rows() - height))
        else:
            self.set_scroll(max(0, row - height // 3))

    def appended(self, added_rows: int, shift: int, resize: Callable[[], None]) -> None:
        """Rows were appended (``shift``: rows added above the view's top, negative when pruned):
        ``resize`` sets the new virtual size; follow the end, else stay put and count them."""
        if added_rows >= FLOOD_ROWS:
            self.flood_until = time.monotonic() + FLOOD_HOLD_S
        self.quiet = True  # the scroll below repaints through request_paint, throttled
        try:
            resize()
            if self.follow:
                self.scroll_to_row(None)
            else:
                self.unseen += added_rows
                if shift:
                    self.set_scroll(max(0.0, self.view.scroll_y + shift))
        finally:
            self.quiet = False
        self.request_paint()

    def keep_place(self, shift: int) -> None:
        """``shift`` rows appeared above the view (or went, negative): stay where it was."""
        if self.follow:
            self.scroll_to_row(None)
        else:
            self.set_scroll(max(0.0, self.view.scroll_y + shift))

    def absorbed(self) -> bool:
        """A streaming scroll of ours: Textual's scroll handling waits for the next paint."""
        if self.quiet and self.programmatic:
            self.scrollbars_stale = True  # repainted, with the scrollbar, by paint()
            return True
        return False

    def follow_wanted(self, old_value: float, new_value: float) -> bool | None:
        """What the user's scroll from ``old_value`` to ``new_value`` asks of follow (None:
        no change): scrolling up pauses it, scrolling back to the end resumes it."""
        if self.programmatic:
            return None
        at_end = new_value >= self.view.max_scroll_y
        if new_value < old_value and not at_end and self.follow:
            return False
        if new_value > old_value and at_end and not self.follow:
            return True
        return None

    def pause_wanted(self) -> bool:
        """Scrolling up from here leaves the end: pause *before* the scroll starts."""
        view = self.view
        return self.follow and view.max_scroll_y > 0 and view.scroll_y > 0


__all__ = ["FRAME_INTERVAL", "Scroller"]
