"""Drawing the log buffer's rows: highlighting, match and cursor styles, host tags, a strip cache.

A plain object the log view holds (:class:`~eagle_tui.ui.widgets.logview.LogView` scrolls,
feeds and handles keys; this draws a row it is asked for). Only the rows on screen are ever
highlighted and rendered, and each cropped strip is cached by the line's sequence number, so
following a busy log costs one render per *new* row. The text is trusted
(the parser sanitized it); the drawn rows alone get a cheap :func:`inert` check on the way to
the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.strip import Strip

from eagle_tui.model.buffers.linewindow import placeholder
from eagle_tui.model.buffers.logbuffer import LogBuffer
from eagle_tui.model.events import LogLine
from eagle_tui.ui.highlight import HighlightRule, highlight
from eagle_tui.ui.safety import inert
from eagle_tui.ui.textual_private import crop_extend
from eagle_tui.ui.widgets.logfile import FilePart
from eagle_tui.ui.widgets.logtext import HostTags, wrap_cuts
from eagle_tui.ui.widgets.rowspans import Combiner, Span, segments


def row_chars(scroll_x: int, width: int) -> int:
    """The characters of a line a row needs to fill ``scroll_x + width`` cells: every
    character takes at least one cell (the text is sanitized), plus room for a few that take
    none (combining marks)."""
    return scroll_x + width + 64


class RowRenderer:
    """Renders ``buffer``'s rows (and the file part's) as cropped, cached strips.

    ``components`` are the view's component classes and ``component_style`` looks one up (the
    view's CSS).
    """

    def __init__(self, buffer: LogBuffer, rules: Sequence[HighlightRule],
                 components: Collection[str], component_style: Callable[[str], Style]) -> None:
        self.buffer = buffer
        buffer.cutter = wrap_cuts
        self.rules = tuple(rules)
        self.max_width = max((cell_len(e.text) for e in buffer.lines), default=0)
        self.cache: LRUCache[tuple[int, int, int, int], Strip] = LRUCache(1024)
        self.tags = HostTags()
        self.base_style: Style | None = None  # the view's own style, once per style change
        self._styles: dict[str, Style] = {}
        self._components = components
        self._component_style = component_style
        self._combine = Combiner()

    def widen(self, lines: Sequence[LogLine]) -> bool:
        """Take new lines' widths into the widest row's; True if it grew."""
        widest = max(len(t) if t.isascii() else cell_len(t) for t in (e.text for e in lines))
        if widest <= self.max_width:
            return False
        self.max_width = widest
        return True

    def content_width(self) -> int:
        """Cells of the widest row (the view's virtual width)."""
        b = self.buffer
        return (b.wrap_width if b.wrap else self.max_width) + self.tags.width

    def style_changed(self) -> None:
        """The view's CSS changed: every style and strip is stale."""
        self._styles.clear()
        self._combine = Combiner()
        self.base_style = None
        self.cache.clear()

    def style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            if name in self._components:
                style = self._component_style(name)
            else:
                try:
                    style = Style.parse(name)
                except Exception:  # validated at config load; a bad one renders unstyled
                    style = Style()
            self._styles[name] = style
        return style

    def spans(self, entry: LogLine, shown: str, special: bool, current: bool) -> list[Span]:
        """The styled spans of ``shown`` (a piece of ``entry``'s text), in Rich's order: the
        cursor's, then the marker's or the highlighter's, then the search's matches."""
        spans: list[Span] = []
        n = len(shown)
        if current:
            spans.append((0, n, self.style("log--current")))
        if special:
            spans.append((0, n, self.style("log--marker")))
            return spans
        style = self.style
        spans.extend((h.start, h.end, style(h.style))
                     for h in highlight(shown, entry.kind, self.rules))
        pattern = self.buffer.search or self.buffer.filter
        if pattern is not None:
            match_style = style("log--match")
            for count, m in enumerate(pattern.finditer(shown)):
                if count >= 64:
                    break
                if m.end() > m.start():
                    spans.append((m.start(), m.end(), match_style))
        return spans

    def _row_strip(self, shown: str, spans: list[Span], tag: str, scroll_x: int, width: int,
                   base: Style) -> Strip:
        """``tag + shown`` styled, cropped to ``[scroll_x, scroll_x + width)`` and padded with
        ``base``. ASCII text is one cell a character: the crop is a slice of the text, so only
        the cells shown are styled. ``shown`` is already inert: the callers pass a line's piece
        through :func:`inert`, the terminal's last guard, paid per row drawn (a strip is
        cached), never per line appended."""
        if tag:
            host = self.style("log--host")
            spans = [(0, len(tag), host), *((s + len(tag), e + len(tag), st) for s, e, st in spans)]
            shown = tag + shown
        if shown.isascii():
            segs = segments(shown, base, spans, self._combine, scroll_x, scroll_x + width)
            shown_cells = max(0, min(len(shown), scroll_x + width) - scroll_x)
            if shown_cells < width:
                segs.append(Segment(" " * (width - shown_cells), base))
            return Strip(segs, width)
        full = Strip(segments(shown, base, spans, self._combine), cell_len(shown))
        return crop_extend(full, scroll_x, scroll_x + width, base)

    def row(self, idx: int, file: FilePart, scroll_x: int, width: int, base: Style) -> Strip:
        """Row ``idx`` of the view: the file part's rows come first, then the buffer's."""
        file_rows = file.rows
        if idx >= file_rows + self.buffer.row_count:
            return Strip.blank(width, base)
        if idx < file_rows:
            return self.file_strip(idx, file.line, idx == file.cursor, scroll_x, width, base)
        return self.buffer_strip(idx - file_rows, scroll_x, width, base)

    def file_strip(self, line: int, entry_of: Callable[[int], LogLine | None], current: bool,
                   scroll_x: int, width: int, base: Style) -> Strip:
        """One row of the file part (its 0-based ``line``, read through ``entry_of``; None
        while it is being read): cached once read; a placeholder, not cached, before."""
        key = (-1 - line, 0, scroll_x, width)
        strip = self.cache.get(key)
        if strip is not None:
            return strip
        entry = entry_of(line)
        if entry is None:
            shown = placeholder(line).text
            return self._row_strip(shown, [(0, len(shown), self.style("log--marker"))], "",
                                   scroll_x, width, base)
        shown = inert(entry.text[:row_chars(scroll_x, width)])
        strip = self._row_strip(shown, self.spans(entry, shown, False, current), "",
                                scroll_x, width, base)
        self.cache[key] = strip
        return strip

    def buffer_strip(self, row: int, scroll_x: int, width: int, base: Style) -> Strip:
        """The buffer's ``row``: cached per (line, wrap piece, horizontal scroll, width).

        Following a log scrolls every row on every batch; keying the *cropped* strip by the
        line's sequence number (not its screen row) makes a scroll a cache hit for all rows but
        the new ones. No mouse offsets are attached: the view has no text selection, and
        ``apply_offsets`` would force a new strip per row per frame.
        """
        b = self.buffer
        seq, start, end = b.row(row)
        key = (seq, start, scroll_x, width)
        strip = self.cache.get(key)
        if strip is None:
            entry = b.entry(seq)
            text = entry.text
            end = min(end, start + row_chars(scroll_x, width))
            shown = inert(text if start == 0 and end >= len(text) else text[start:end])
            tag = self.tags.tag(entry.host, start == 0) if self.tags.width else ""
            spans = self.spans(entry, shown, seq in b.special, seq == b.cursor)
            strip = self.cache[key] = self._row_strip(shown, spans, tag, scroll_x, width, base)
        return strip


__all__ = ["RowRenderer", "row_chars"]
