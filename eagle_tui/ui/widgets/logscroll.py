"""Scrolling, follow/pause and throttled repaints of the log view (its Line-API base class).

Kept apart from :mod:`eagle_tui.ui.widgets.logview`, which feeds the buffer and renders rows,
because this part is about Textual's scrolling machinery only: what a row *is* does not matter
here, only how many there are (``row_count``) and how wide the content is (``content_width``).

Follow: on by default. Scrolling up pauses it (new lines are counted, not shown); ``End``/``f`` or
scrolling back to the bottom resumes.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Callable

from textual import events
from textual.actions import SkipAction
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.timer import Timer
from textual.widget import Widget

from eagle_tui.ui.frames import FRAME_INTERVAL, frame_delay
from eagle_tui.ui.widgets.scrollbars import sync_scrollbars


class LogScroll(ScrollView):
    """A ScrollView over ``row_count`` rows that follows the end unless the user scrolls up."""

    def __init__(self, *, frame_interval: float = FRAME_INTERVAL, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.follow = True
        self.unseen = 0
        self._programmatic = False
        self._quiet = False
        self._scrollbars_stale = False
        self.frame_interval = frame_interval
        self._last_paint = 0.0
        self._paint_timer: Timer | None = None

    # ------------------------------------------------------------------ what subclasses give
    @property
    @abstractmethod
    def row_count(self) -> int:
        """Rows in the view (the virtual height)."""

    @abstractmethod
    def content_width(self) -> int:
        """Cells of the widest row (the virtual width)."""

    def _followed(self) -> None:
        """Follow resumed: drop the cursor and the cached strips."""

    def _post_status(self) -> None:
        """Tell the status line (the view's status may have changed)."""

    # ------------------------------------------------------------------ repaints
    def _request_paint(self) -> None:
        """Repaint for new lines, at most once per ``frame_interval``.

        A followed log scrolls every row on every batch, and one full repaint of a 160-column
        view costs ~10 ms of Textual's compositor here: at 20 batches/s that alone was 20-40 %
        of a core for a 200 lines/s tail. Capping streaming repaints at 5 per second keeps the
        tail live to the eye; keys and scrolling still repaint at once. The throttled repaints
        fall on the app's frame grid (:func:`frame_delay`), with the panes' updates.
        """
        if self._paint_timer is not None:
            return  # already due: a late timer must not turn into a second, off-grid repaint
        wait = frame_delay(time.monotonic(), self._last_paint, self.frame_interval)
        if wait <= 0 or not self.is_mounted:
            self._paint()
        else:
            self._paint_timer = self.set_timer(wait, self._paint)

    def _paint(self) -> None:
        self._paint_timer = None
        self._last_paint = time.monotonic()
        if self._scrollbars_stale:
            self._scrollbars_stale = False
            programmatic, self._programmatic = self._programmatic, True
            try:  # Textual's _scroll_update, without repainting bars that look the same
                sync_scrollbars(self, self.virtual_size)
            finally:
                self._programmatic = programmatic
            if self.follow:  # a scrollbar that just appeared took a row: stay at the end
                self._scroll_to_row(None)
            if self.show_vertical_scrollbar:
                self.vertical_scrollbar.position = self.scroll_y
        self.refresh()
        self._post_status()

    @property
    def paint_pending(self) -> bool:
        """A throttled repaint is scheduled (tests wait for it before reading the screen)."""
        return self._paint_timer is not None

    def _update_virtual_size(self) -> None:
        """Set the scrollable size without a screen-wide layout.

        Assigning ``virtual_size`` (a ``layout=True`` reactive) re-lays out the whole screen; at
        20 batches a second that was most of the dashboard's CPU while tailing. The view's own
        size never depends on its content, so only the scrollbars need updating.
        """
        size = Size(self.content_width(), self.row_count)
        if size != self.virtual_size:
            self.set_reactive(Widget.virtual_size, size)
            if self._quiet:  # streaming: the scrollbars follow at the next (throttled) paint
                self._scrollbars_stale = True
                return
            programmatic, self._programmatic = self._programmatic, True
            try:  # _scroll_update clamps the scroll: that is not the user scrolling
                self._scroll_update(size)
            finally:
                self._programmatic = programmatic

    # ------------------------------------------------------------------ scrolling and follow
    def _set_scroll(self, y: float) -> None:
        self._programmatic = True
        try:
            self.scroll_target_y = y
            self.scroll_y = y
        finally:
            self._programmatic = False

    def _scroll_to_row(self, row: int | None) -> None:
        """``None`` → the end; else put ``row`` a third of the way down the view."""
        if row is None:
            self._set_scroll(max(0, self.row_count - self.scrollable_content_region.height))
        else:
            self._set_scroll(max(0, row - self.scrollable_content_region.height // 3))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        if self._quiet and self._programmatic:
            self._scrollbars_stale = True  # repainted, with the scrollbar, by _paint
            return
        super().watch_scroll_y(old_value, new_value)
        if self._programmatic:
            return
        at_end = new_value >= self.max_scroll_y
        if new_value < old_value and not at_end and self.follow:
            self.set_follow(False)
        elif new_value > old_value and at_end and not self.follow:
            self.set_follow(True)

    def set_follow(self, follow: bool) -> None:
        self.follow = follow
        if follow:
            self.unseen = 0
            self._followed()
            self._update_virtual_size()
            self._scroll_to_row(None)
            self.refresh()
        self._post_status()

    def action_scroll_end(self) -> None:
        self.set_follow(True)

    # Scrolling up pauses *before* the scroll starts, and keys scroll without animation.
    # Left to ``watch_scroll_y``, a key's animated scroll raced the next batch's scroll-to-end
    # while following (at 50k lines/s a PgUp was sometimes undone before it showed: 3-4 of ~45
    # lost in the tmux benchmark), and an animation still running undid a quick End.
    def _pause_for_scroll_up(self) -> None:
        if self.follow and self.max_scroll_y > 0 and self.scroll_y > 0:
            self.set_follow(False)

    def _key_scroll(self, scroll: Callable[..., object], up: bool) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction
        if up:
            self._pause_for_scroll_up()
        scroll(animate=False)

    def action_scroll_up(self) -> None:
        self._key_scroll(self.scroll_up, up=True)

    def action_page_up(self) -> None:
        self._key_scroll(self.scroll_page_up, up=True)

    def action_scroll_home(self) -> None:
        self._key_scroll(self.scroll_home, up=True)

    def action_scroll_down(self) -> None:
        self._key_scroll(self.scroll_down, up=False)

    def action_page_down(self) -> None:
        self._key_scroll(self.scroll_page_down, up=False)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        """Pause following first; Textual's own handler (``Widget``'s, run after) scrolls."""
        if not (event.ctrl or event.shift):
            self._pause_for_scroll_up()


__all__ = ["FRAME_INTERVAL", "LogScroll"]
