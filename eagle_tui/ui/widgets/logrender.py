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
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.strip import Strip

from eagle_tui.model.buffers.linewindow import placeholder
from eagle_tui.model.buffers.logbuffer import LogBuffer
from eagle_tui.model.events import LogLine
from eagle_tui.ui.highlight import HighlightRule, highlight
from eagle_tui.ui.safety import inert
from eagle_tui.ui.widgets.logfile import FilePart
from eagle_tui.ui.widgets.logtext import HostTags, wrap_cuts


def row_chars(scroll_x: int, width: int) -> int:
    """The characters of a line a row needs to fill ``scroll_x + width`` cells: every
    character takes at least one cell (the text is sanitized), plus room for a few that take
    none (combining marks)."""
    return scroll_x + width + 64


class RowRenderer:
    """Renders ``buffer``'s rows (and the file part's) as cropped, cached strips.

    ``components`` are the view's component classes and ``component_style`` looks one up (the
    view's CSS); ``console`` gives the console that renders the text.
    """

    def __init__(self, buffer: LogBuffer, rules: Sequence[HighlightRule],
                 components: Collection[str], component_style: Callable[[str], Style],
                 console: Callable[[], Console]) -> None:
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
        self._console_of = console

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

    def line_text(self, seq: int, start: int = 0, end: int | None = None) -> Text:
        """One buffered entry's ``[start:end]``, highlighted (see :meth:`styled`)."""
        b = self.buffer
        return self.styled(b.entry(seq), seq in b.special, seq == b.cursor, start, end)

    def styled(self, entry: LogLine, special: bool, current: bool, start: int = 0,
               end: int | None = None) -> Text:
        """One line's ``[start:end]``, highlighted. Its text was sanitized by the parser;
        :func:`inert` here is the terminal's last guard, paid only per row drawn (a strip is
        cached), never per line appended: one regex search on a clean line, which it returns
        unchanged. Only the piece a row shows is styled: a 1 MiB line costs a row its width,
        not its length (styling whole lines made a screen of such lines megabytes of work)."""
        b = self.buffer
        text_ = entry.text
        shown = inert(text_ if start == 0 and (end is None or end >= len(text_))
                      else text_[start:end])
        text = Text(shown, no_wrap=True, end="")
        if special:
            text.stylize(self.style("log--marker"))
        else:
            for span in highlight(shown, entry.kind, self.rules):
                text.stylize(self.style(span.style), span.start, span.end)
            pattern = b.search or b.filter
            if pattern is not None:
                match_style = self.style("log--match")
                for count, m in enumerate(pattern.finditer(shown)):
                    if count >= 64:
                        break
                    if m.end() > m.start():
                        text.stylize(match_style, m.start(), m.end())
        if current:
            text.stylize_before(self.style("log--current"))
        return text

    def _strip(self, text: Text) -> Strip:
        """``text`` as one strip: an empty line renders to an unstyled empty segment, which
        Textual's colour filters (``NO_COLOR``'s monochrome) cannot take, so none is kept."""
        return Strip([s for s in text.render(self._console_of()) if s.text], text.cell_len)

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
            text = Text(placeholder(line).text, self.style("log--marker"), no_wrap=True, end="")
        else:
            text = self.styled(entry, False, current, 0, row_chars(scroll_x, width))
        text.stylize_before(base)
        full = self._strip(text)
        strip = full.crop_extend(scroll_x, scroll_x + width, base)
        if entry is not None:
            self.cache[key] = strip
        return strip

    def buffer_strip(self, row: int, scroll_x: int, width: int, base: Style) -> Strip:
        """The buffer's ``row``: cached per (line, wrap piece, horizontal scroll, width).

        Following a log scrolls every row on every batch; keying the *cropped* strip by the
        line's sequence number (not its screen row) makes a scroll a cache hit for all rows but
        the new ones. No mouse offsets are attached: the view has no text selection, and
        ``apply_offsets`` would force a new strip per row per frame.
        """
        seq, start, end = self.buffer.row(row)
        key = (seq, start, scroll_x, width)
        strip = self.cache.get(key)
        if strip is None:
            text = self.line_text(seq, start, min(end, start + row_chars(scroll_x, width)))
            if self.tags.width:
                tag = self.tags.tag(self.buffer.entry(seq).host, start == 0)
                text = Text(tag, self.style("log--host"), no_wrap=True, end="").append_text(text)
            text.stylize_before(base)
            full = self._strip(text)
            strip = full.crop_extend(scroll_x, scroll_x + width, base)
            self.cache[key] = strip
        return strip


__all__ = ["RowRenderer", "row_chars"]
