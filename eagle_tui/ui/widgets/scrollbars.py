"""Scrollbar updates that repaint a bar only when its drawing changes.

Textual's ``_scroll_update`` sets a scroll view's bar sizes and then repaints *both* bars. A
followed log changes its virtual size on every batch, so each streaming frame re-rendered the
25-row vertical bar and the 157-column horizontal one: at 200 lines/s that was the largest single
cost of a frame (more than the log rows themselves). A bar is drawn in
eighths of a cell (``ScrollBarRender``); :func:`thumb` computes the same geometry, and
:func:`sync_scrollbars` stores the new values without repainting and repaints a bar only when its
thumb moved by at least an eighth of a cell or the bar changed length.
"""

from __future__ import annotations

from math import ceil

from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar, ScrollBarRender

from eagle_tui.ui.textual_private import show_or_hide_scrollbars

Thumb = tuple[int, int, int] | None  # bar length, first and last eighth of the thumb


def thumb(size: int, virtual: int, window: int, position: float) -> Thumb:
    """The thumb's extent as ``ScrollBarRender.render_bar`` draws it (``None``: no thumb)."""
    window = window if window < virtual else 0
    if not (window and size and virtual and size != virtual):
        return None
    eighths = len(ScrollBarRender.VERTICAL_BARS)
    thumb_size = max(1, window / (virtual / size))
    start = int((size - thumb_size) * (position / (virtual - window)) * eighths)
    return size, start, start + ceil(thumb_size * eighths)


def _set(bar: ScrollBar, virtual: int, window: int, position: float) -> None:
    def key() -> Thumb:
        length = bar.size.height if bar.vertical else bar.size.width
        return thumb(length, ceil(bar.window_virtual_size), ceil(bar.window_size), bar.position)

    before = key()
    bar.set_reactive(ScrollBar.window_virtual_size, virtual)
    bar.set_reactive(ScrollBar.window_size, window)
    bar.set_reactive(ScrollBar.position, int(position * 8) / 8)  # ScrollBar.validate_position
    if key() != before:
        bar.refresh()


def sync_scrollbars(view: ScrollView, virtual_size: Size) -> None:
    """``view._scroll_update(virtual_size)`` without repainting bars that look the same."""
    show_or_hide_scrollbars(view)  # Textual's decision (a layout only when it changes)
    width, height = view.container_size
    if view.show_vertical_scrollbar and view.styles.scrollbar_size_vertical:
        _set(view.vertical_scrollbar, virtual_size.height,
             height - view.scrollbar_size_horizontal, view.scroll_y)
    if view.show_horizontal_scrollbar and view.styles.scrollbar_size_horizontal:
        _set(view.horizontal_scrollbar, virtual_size.width,
             width - view.scrollbar_size_vertical, view.scroll_x)
    view.scroll_x = view.validate_scroll_x(view.scroll_x)
    view.scroll_y = view.validate_scroll_y(view.scroll_y)


__all__ = ["sync_scrollbars", "thumb"]
