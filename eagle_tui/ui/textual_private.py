"""Every use of Textual's private API in eagle-tui, in one place, each for a gain worth its cost.

Textual's public API does most of the job; four things it cannot do without reaching inside:
a prompt Esc key (:class:`EscapeParser`, :func:`run_input_loop`), scrollbars repainted only
when their drawing changes (:func:`show_or_hide_scrollbars`, :func:`scroll_update`), one
stylesheet parse less before the first frame (:func:`defer_css_refresh`), a widget's changed
rows rendered alone (:func:`render_rows`), a plain widget's own cached rows drawn as they are
(:func:`plain_rows`), an update that renders only the rows it draws (:class:`RowCompositor`),
and the node composing a pane that binds to it (:func:`composing_node`).
``tests/ui/test_textual_private.py`` checks every name used here, fingerprints the Textual code
this module copies or relies on, and checks that no other UI module reaches a Textual private
attribute, so an upgrade that changes any of it fails there with the name of what to re-read.

More in docs/architecture.md, "Module notes", ``ui/textual_private``.
"""

from __future__ import annotations

import os
import selectors
import time
from codecs import getincrementaldecoder
from collections.abc import Mapping
from itertools import pairwise
from typing import TYPE_CHECKING, Any, TypeVar

from textual._compositor import Compositor
from textual._loop import loop_last
from textual._parser import ParseError, Read1
from textual._xterm_parser import XTermParser

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rich.style import Style as RichStyle
    from textual._compositor import ChopsUpdate
    from textual.app import App
    from textual.content import Content
    from textual.drivers.linux_driver import LinuxDriver
    from textual.geometry import Region, Size
    from textual.screen import Screen
    from textual.strip import Strip
    from textual.widget import Widget

IDLE_WAIT = 0.1  # s between the input thread's checks for exit when no key comes (Textual's)
WOKEN_IDLE_WAIT = 2.0  # ... when the exit also wakes the thread (``wake_fd``): only a backstop


class EscapeParser(XTermParser):
    """Textual's parser with its ESC wait capped at ``wait``, remembering when that wait runs out.

    The parser asks for its next character through ``read1``; only the ESC wait passes a
    timeout, so the last call tells whether a deadline is pending (``deadline``). ``wait=None``
    keeps Textual's wait (``ESCDELAY``).
    """

    def __init__(self, debug: bool = False, wait: float | None = None) -> None:
        self.wait = wait
        self.idle_wait = IDLE_WAIT
        self.deadline: float | None = None  # time.monotonic(), as the parser's own clock
        super().__init__(debug)

    def read1(self, timeout: float | None = None) -> Read1:  # type: ignore[override]
        if timeout is not None and self.wait is not None:
            timeout = min(timeout, self.wait)
        self.deadline = None if timeout is None else time.monotonic() + timeout
        return Read1(timeout)

    def select_timeout(self) -> float:
        """How long the input thread may block in ``select``: until the ESC deadline, if any."""
        if self.deadline is None:
            return self.idle_wait
        # a little past the deadline: tick() must find it expired, not call select(0) in a loop
        return min(self.idle_wait, max(0.0, self.deadline - time.monotonic()) + 0.001)


def run_input_loop(driver: LinuxDriver, wait: float | None, wake_fd: int | None = None) -> None:
    """Textual's ``LinuxDriver.run_input_thread``, with an :class:`EscapeParser` of ``wait``.

    ``wake_fd`` (a pipe's read end that becomes readable when the driver's ``exit_event`` is
    set) lets the thread block for :data:`WOKEN_IDLE_WAIT` instead of waking every
    :data:`IDLE_WAIT` to look at the event: an idle dashboard should not wake at all.

    """
    parser = EscapeParser(driver._debug, wait)
    selector = selectors.SelectSelector()
    selector.register(driver.fileno, selectors.EVENT_READ)
    if wake_fd is not None:
        selector.register(wake_fd, selectors.EVENT_READ)
        parser.idle_wait = WOKEN_IDLE_WAIT
    fileno = driver.fileno
    EVENT_READ = selectors.EVENT_READ
    feed = parser.feed
    tick = parser.tick
    decode = getincrementaldecoder("utf-8")().decode
    read = os.read

    def process_selector_events(
        selector_events: list[tuple[selectors.SelectorKey, int]], final: bool = False
    ) -> None:
        for last, (selector_key, mask) in loop_last(selector_events):
            if selector_key.fd != fileno:
                continue  # the wake-up pipe: the loop's condition does the rest
            if mask & EVENT_READ:
                unicode_data = decode(read(fileno, 1024 * 4), final=final and last)
                if not unicode_data:
                    break  # stdin is piped
                for event in feed(unicode_data):
                    driver.process_message(event)
        for event in tick():
            driver.process_message(event)

    try:
        while not driver.exit_event.is_set():
            process_selector_events(selector.select(parser.select_timeout()))
        selector.unregister(driver.fileno)
        if wake_fd is not None:
            selector.unregister(wake_fd)
        process_selector_events(selector.select(IDLE_WAIT), final=True)
    finally:
        selector.close()
        try:
            for _event in feed(""):
                pass
        except (EOFError, ParseError):
            pass


def show_or_hide_scrollbars(view: Widget) -> None:
    """Textual's own decision to show or hide ``view``'s scrollbars (a layout only on a change)."""
    view._refresh_scrollbars()


def scroll_update(view: Widget, virtual_size: Size) -> None:
    """Textual's ``_scroll_update``: new scrollbar sizes and a clamped scroll for a new
    ``virtual_size`` set without a layout (``set_reactive``), both bars repainted. The log view
    calls it on a key or scroll move; while lines stream it uses ``sync_scrollbars`` instead."""
    view._scroll_update(virtual_size)


def render_rows(widget: Widget, rows: Mapping[int, Content]) -> bool:
    """Render only ``rows`` (content row → its one line) into ``widget``'s last render, when
    those rows are all that is dirty; False: Textual renders the whole widget, as it would.

    Textual's ``render_line`` re-renders every row of a widget when any row is dirty: a clock's
    tick re-rendered a pane's whole text every second to change one row. A row is rendered
    alone and its cells' offsets (x, 0) moved to (x, row), what a whole render gives them (a
    click or a selection reads them): rendering it below ``row`` empty lines instead cost a
    pane's lower rows four times as much.
    """
    from textual.geometry import Region
    from textual.visual import Visual

    cache, size = widget._render_cache, widget.size
    dirty = widget._dirty_regions
    if not rows or not dirty or cache.size != size or widget.text_selection is not None:
        return False
    offset = widget.content_offset
    if not dirty <= {Region(0, y, size.width, 1).translate(offset) for y in rows}:
        return False  # something else (a resize, a full refresh) made it dirty
    lines = list(cache.lines)
    if max(rows) >= len(lines):
        return False
    for y, line in rows.items():
        strip = Visual.to_strips(widget, line, size.width, 1, widget.visual_style)[0]
        lines[y] = strip_on_row(strip, y)
    widget._render_cache = type(cache)(size, lines)
    dirty.clear()
    return True


def strip_on_row(strip: Strip, y: int) -> Strip:
    """``strip``, rendered as row 0, with the offsets its cells carry moved to row ``y``."""
    if not y:
        return strip
    from rich.segment import Segment
    from rich.style import Style
    from textual.strip import Strip

    segments = []
    for text, style, control in strip:
        if style is not None and (offset := style.meta.get("offset")) is not None:
            style = style + Style.from_meta({"offset": (offset[0], y)})
        segments.append(Segment(text, style, control))
    return Strip(segments, strip.cell_length)


def decorated(widget: Widget) -> bool:
    """Whether ``widget``'s styles draw on its rows beyond their text and padding (a border,
    an outline, a tint, opacity, a hatch, a title): then only Textual's styles cache draws
    them (:func:`plain_rows`, ``ui/widgets/onerow``)."""
    st = widget.styles
    return bool(any(edge for edge, _ in st.border) or any(edge for edge, _ in st.outline)
                or st.tint.a or widget.opacity != 1.0 or st.text_opacity != 1.0
                or (st.has_rule("hatch") and st.hatch != "none")
                or widget.border_title or widget.border_subtitle)


def plain_rows(widget: Widget, crop: Region, row: Callable[[int], Strip]) -> list[Strip] | None:
    """``widget``'s rows in ``crop`` as ``row`` gives them (its own cached strips, filtered and
    cropped as Textual would), when its styles add nothing to a row; None: Textual's styles
    cache draws them.

    That cache (``StylesCache.render_line``) makes every row of a repainted widget a new strip
    (for borders, padding, tint, opacity); where there are none it holds the same segments, but
    a new strip misses the caches a strip keeps (its filtered and its cut forms), so a row
    scrolled by a key was filtered and cut again, and the wrapping was a third of a followed
    log's repaint.
    """
    from rich.style import Style

    hover = widget.hover_style
    if (any(widget.styles.padding) or decorated(widget)
            or (widget.auto_links and hover.link_id and "@click" in hover.meta)):
        return None
    width = widget.region.width
    base_background, background = widget.background_colors
    filters = widget.get_line_filters()
    strips = []
    for y in crop.line_range:
        strip = row(y)
        if strip.cell_length != width:  # (what the styles cache does with a short row)
            strip = strip.adjust_cell_length(
                width, Style(bgcolor=(base_background + background).rich_color))
        for line_filter in filters:
            strip = strip.apply_filter(line_filter, background)
        strips.append(strip)
    widget._styles_cache.set_dirty(crop)  # its rows there are stale now, should it draw again
    x1, x2 = crop.column_span
    return strips if (x1, x2) == (0, width) else [s.crop(x1, x2) for s in strips]


class RowCompositor(Compositor):
    """Textual's compositor, rendering a widget only over the rows an update draws and a widget
    in front of it has not filled.

    Textual's ``_render_chops`` renders every widget whose *parent* overlaps the updated area,
    each over its whole visible region, then drops the rows the update does not draw and the
    cells a widget in front already gave (front to back, the first one wins): a followed log's
    repaint rendered the screen, the footer and every container behind the log as well. Here
    the same pieces land in the same cells, so the frame is the same.
    """

    _columns: dict[int, tuple[int, int]] | None = None  # a partial update's columns by row

    def render_partial_update(self) -> ChopsUpdate | None:
        """Textual's, telling the chops which columns of each row the update draws (the area
        around all its regions holds columns a row does not draw)."""
        from textual._compositor import ChopsUpdate
        from textual.geometry import Region

        update_regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        if not update_regions:
            return None
        crop = Region.from_union(update_regions).intersection(self.size.region)
        spans = list(self._regions_to_spans(update_regions))
        columns: dict[int, tuple[int, int]] = {}
        for y, x1, x2 in spans:  # (a row's spans come together, left to right)
            columns[y] = (columns[y][0], x2) if y in columns else (x1, x2)
        self._columns = columns
        try:
            chops = self._render_chops(crop, columns.__contains__)
        finally:
            self._columns = None
        return ChopsUpdate(chops, spans, [cut_set[1:] for cut_set in self.cuts])

    def _render_chops(self, crop: Region,
                      is_rendered_line: Callable[[int], bool]) -> Sequence[Mapping[int, Strip]]:
        from textual.geometry import Region

        cuts = self.cuts
        chops: list[dict[int, Strip | None]] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
        drawn = _drawn_cuts(cuts, crop, self._columns)
        intersection = Region.intersection
        for widget, (region, clip) in self.visible_widgets.items():  # front to back
            shown = intersection(region, clip)
            area = intersection(shown, crop)
            if not area:
                continue
            first_cut, last_cut = shown.column_span
            rows = [y for y in area.line_range if is_rendered_line(y) and any(
                chops[y][cut] is None for cut in drawn[y] if first_cut <= cut < last_cut)]
            if not rows:
                continue  # nothing of it shows in this update
            top = rows[0]
            strips = widget.render_lines(Region(shown.x - region.x, top - region.y,
                                                shown.width, rows[-1] + 1 - top))
            for y, strip in zip(range(top, rows[-1] + 1), strips, strict=False):
                if not is_rendered_line(y):
                    continue
                chops_line = chops[y]
                final_cuts = [cut for cut in cuts[y] if last_cut >= cut >= first_cut]
                cut_strips = divide(strip, [cut - first_cut for cut in final_cuts[1:]])
                for cut, piece in zip(final_cuts, cut_strips, strict=False):
                    if chops_line.get(cut) is None:
                        chops_line[cut] = piece
        return chops  # type: ignore[return-value]


def divide(strip: Strip, cuts: list[int]) -> Sequence[Strip]:
    """``strip.divide(cuts)``, but a strip cut only at its end is itself, not cached as such.

    Textual's ``Strip`` caches its derived strips, and one derived as itself (``[self]`` for
    that cut, ``self`` for a crop or extension to its own size) makes it a reference cycle:
    it outlives its last use until the cyclic collector runs, and so do its segments and
    caches. Every row a repaint drew became such garbage (docs/performance.md, "No garbage
    for the collector").
    """
    length = strip.cell_length
    if [cut for cut in cuts if cut <= length] == [length]:
        return [strip]
    return strip.divide(cuts)


def crop_extend(strip: Strip, start: int, end: int, style: RichStyle | None) -> Strip:
    """``strip.crop_extend``, but a strip already of that extent is itself (see :func:`divide`)."""
    if start == 0 and end == strip.cell_length:
        return strip
    return strip.crop_extend(start, end, style)


def _drawn_cuts(cuts: list[list[int]], crop: Region,
                columns: Mapping[int, tuple[int, int]] | None) -> dict[int, list[int]]:
    """For each row of ``crop``, the cuts whose chop overlaps the columns the update draws on
    that row (``columns``, else the crop's): the others are not drawn, so no widget is rendered
    for them (a container's borders beside the log)."""
    span = crop.column_span
    drawn = {}
    for y in crop.line_range:
        x1, x2 = span if columns is None else columns.get(y, span)
        row = cuts[y]
        drawn[y] = [cut for cut, end in pairwise(row) if cut < x2 and end > x1]
    return drawn


def composing_node() -> object:
    """The node whose ``compose`` is running (Textual's own ``data_bind`` binds to it the same
    way): ``ui/binding.bind`` hands it the pane it binds."""
    from textual._context import active_message_pump

    return active_message_pump.get()


ScreenT = TypeVar("ScreenT", bound="Screen[Any]")


def use_row_compositor(screen: ScreenT) -> ScreenT:
    """``screen``, given a :class:`RowCompositor` (before its first layout)."""
    screen._compositor = RowCompositor()
    return screen


def defer_css_refresh(app: App[Any]) -> bool:
    """Before any screen exists, carry only the theme's variables; ``True``: nothing else to do.

    With nothing styled yet, the variables are all a ``refresh_css`` has to carry: the first
    screen's styling parses every stylesheet anyway.
    """
    if app.screen_stack:
        return False
    app.stylesheet.set_variables(app.get_css_variables())
    return True


def screen_text(app: Any) -> str:
    """The app's current screen as plain text (what a user reads), for tests and tools.

    Textual's public ``export_screenshot`` gives SVG; the compositor's last frame rendered to a
    recording console is the plain-text form (``screen._compositor`` is private).
    """
    import io

    from rich.console import Console

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system=None, record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


__all__ = [
    "IDLE_WAIT",
    "EscapeParser",
    "RowCompositor",
    "composing_node",
    "decorated",
    "defer_css_refresh",
    "plain_rows",
    "render_rows",
    "run_input_loop",
    "screen_text",
    "scroll_update",
    "show_or_hide_scrollbars",
    "strip_on_row",
    "use_row_compositor",
]
