"""Drawing the log buffer's rows: highlighting, match and cursor styles, host tags, a strip cache.

The middle layer of the log view (:class:`~eagle_tui.ui.widgets.logscroll.LogScroll` scrolls,
this draws, :class:`~eagle_tui.ui.widgets.logview.LogView` feeds and handles keys). Only the
rows on screen are ever highlighted and rendered, and each cropped strip is cached by the line's
sequence number, so following a busy log costs one render per *new* row. The text is trusted
(the parser sanitized it); the drawn rows alone get a cheap :func:`inert` check on the way to
the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Region
from textual.strip import Strip

from eagle_tui.model.buffers.linewindow import placeholder
from eagle_tui.model.buffers.logbuffer import LogBuffer
from eagle_tui.model.events import LogLine
from eagle_tui.ui.frames import FRAME_INTERVAL
from eagle_tui.ui.highlight import COMPONENT_CLASSES, HighlightRule, highlight
from eagle_tui.ui.safety import inert
from eagle_tui.ui.widgets.logscroll import LogScroll
from eagle_tui.ui.widgets.logtext import HostTags, wrap_cuts


def row_chars(scroll_x: int, width: int) -> int:
    """The characters of a line a row needs to fill ``scroll_x + width`` cells: every
    character takes at least one cell (the text is sanitized), plus room for a few that take
    none (combining marks)."""
    return scroll_x + width + 64


class LogRender(LogScroll):
    """Renders ``buffer``'s rows through the Line API (``render_line``)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {*COMPONENT_CLASSES, "log--host"}

    def __init__(self, buffer: LogBuffer, rules: Sequence[HighlightRule] = (), *,
                 frame_interval: float = FRAME_INTERVAL, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(frame_interval=frame_interval, id=id, classes=classes)
        self.buffer = buffer
        buffer.cutter = wrap_cuts
        self.rules = tuple(rules)
        self._max_width = max((cell_len(e.text) for e in buffer.lines), default=0)
        self._cache: LRUCache[tuple[int, int, int, int], Strip] = LRUCache(1024)
        self._styles: dict[str, Style] = {}
        self._base_style: Style | None = None
        self._tags = HostTags()
        self._frame = (0, 0, 0)

    @property
    def row_count(self) -> int:
        return self.file_rows + self.buffer.row_count

    def content_width(self) -> int:
        b = self.buffer
        return (b.wrap_width if b.wrap else self._max_width) + self._tags.width

    # ------------------------------------------------------------------ rendering
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._base_style = None
        self._cache.clear()

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            if name in self.COMPONENT_CLASSES:
                style = self.get_component_rich_style(name, partial=True)
            else:
                try:
                    style = Style.parse(name)
                except Exception:  # validated at config load; a bad one renders unstyled
                    style = Style()
            self._styles[name] = style
        return style

    def _line_text(self, seq: int, start: int = 0, end: int | None = None) -> Text:
        """One buffered entry's ``[start:end]``, highlighted (see :meth:`_styled`)."""
        b = self.buffer
        return self._styled(b.entry(seq), seq in b.special, seq == b.cursor, start, end)

    def _styled(self, entry: LogLine, special: bool, current: bool, start: int = 0,
                end: int | None = None) -> Text:
        """One line's ``[start:end]``, highlighted. Its text was sanitized by the parser;
        :func:`inert` here is the terminal's last guard, paid only per row drawn (a strip is
        cached), never per line appended: one regex search on a clean line, which it returns
        unchanged. Only the piece a row shows is styled: a 1 MiB line costs a row its width,
        not its length (issue 17: every row of a screen of such lines was ~1 MB of work)."""
        b = self.buffer
        text_ = entry.text
        shown = inert(text_ if start == 0 and (end is None or end >= len(text_))
                      else text_[start:end])
        text = Text(shown, no_wrap=True, end="")
        if special:
            text.stylize(self._style("log--marker"))
        else:
            for span in highlight(shown, entry.kind, self.rules):
                text.stylize(self._style(span.style), span.start, span.end)
            pattern = b.search or b.filter
            if pattern is not None:
                match_style = self._style("log--match")
                for count, m in enumerate(pattern.finditer(shown)):
                    if count >= 64:
                        break
                    if m.end() > m.start():
                        text.stylize(match_style, m.start(), m.end())
        if current:
            text.stylize_before(self._style("log--current"))
        return text

    # ------------------------------------------------------------------ the file part
    @property
    def file_rows(self) -> int:
        """Rows of the file part above the buffer's (0: none; see ``logfile.py``)."""
        return 0

    def _file_line(self, line: int) -> LogLine | None:
        """The file's 0-based line ``line``, None while it is being read."""
        return None

    @property
    def _file_target(self) -> int | None:
        """The file line a jump went to (drawn as the current line)."""
        return None

    def _file_strip(self, line: int, scroll_x: int, width: int, base: Style) -> Strip:
        """One row of the file part: cached once read; a placeholder, not cached, before."""
        key = (-1 - line, 0, scroll_x, width)
        strip = self._cache.get(key)
        if strip is not None:
            return strip
        entry = self._file_line(line)
        if entry is None:
            text = Text(placeholder(line).text, self._style("log--marker"), no_wrap=True, end="")
        else:
            text = self._styled(entry, False, line == self._file_target, 0,
                                row_chars(scroll_x, width))
        text.stylize_before(base)
        full = Strip(text.render(self.app.console), text.cell_len)
        strip = full.crop_extend(scroll_x, scroll_x + width, base)
        if entry is not None:
            self._cache[key] = strip
        return strip

    def render_lines(self, crop: Region) -> list[Strip]:
        # scroll offset and width once per frame, not once per row (they are computed props)
        scroll_x, scroll_y = self.scroll_offset
        self._frame = (scroll_x, scroll_y, self.scrollable_content_region.width)
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """One screen row: cached per (line, wrap piece, horizontal scroll, width).

        Following a log scrolls every row on every batch; keying the *cropped* strip by the
        line's sequence number (not its screen row) makes a scroll a cache hit for all rows but
        the new ones. No mouse offsets are attached: the view has no text selection, and
        ``apply_offsets`` would force a new strip per row per frame.
        """
        scroll_x, scroll_y, width = self._frame
        if not width:  # called outside render_lines (tests): compute the frame now
            scroll_x, scroll_y = self.scroll_offset
            width = self.scrollable_content_region.width
        base = self._base_style
        if base is None:
            base = self._base_style = self.rich_style
        idx = scroll_y + y
        if idx >= self.row_count:
            return Strip.blank(width, base)
        file_rows = self.file_rows
        if idx < file_rows:
            return self._file_strip(idx, scroll_x, width, base)
        seq, start, end = self.buffer.row(idx - file_rows)
        key = (seq, start, scroll_x, width)
        strip = self._cache.get(key)
        if strip is None:
            text = self._line_text(seq, start, min(end, start + row_chars(scroll_x, width)))
            if self._tags.width:
                tag = self._tags.tag(self.buffer.entry(seq).host, start == 0)
                text = Text(tag, self._style("log--host"), no_wrap=True, end="").append_text(text)
            text.stylize_before(base)
            full = Strip(text.render(self.app.console), text.cell_len)
            strip = full.crop_extend(scroll_x, scroll_x + width, base)
            self._cache[key] = strip
        return strip


__all__ = ["LogRender"]
