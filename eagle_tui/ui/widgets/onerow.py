"""A one-row widget drawn straight from its ``Content``: the row's segments, its padding, done.

Why: the log's status row changes with every streamed batch (its line count), and Textual's
path for a widget's text (the visual's strips, the link styles, then the styles cache's
padding and background) cost more than the log's own new rows for one row of a few words
(docs/performance.md, "The dashboard"). Here the content's spans become segments over the
widget's style, cut or padded to the row, with the padding columns around them; the last row
drawn is kept until its content, width or style change. A widget whose styles add more than
padding (``textual_private.decorated``), align its text or give it more rows is drawn by Textual.
"""

from __future__ import annotations

from abc import abstractmethod

from rich.segment import Segment
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget

from eagle_tui.ui.sinks import checked
from eagle_tui.ui.textual_private import crop_extend, decorated


class OneRow(Widget):
    """Subclasses implement :meth:`row` (the content for a width) and call ``refresh()`` when
    it changed; text selection is off (a status row is read, not copied)."""

    ALLOW_SELECT = False

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.set_reactive(Widget.auto_links, False)  # (Textual's path, drawing a box: no links)
        self._drawn: tuple[Content, int, Style, Strip] | None = None

    @abstractmethod
    def row(self, width: int) -> Content:
        """The row's content for ``width`` cells (the padding excluded).

        Abstract: mypy refuses a subclass that lacks it (Textual's metaclass cannot be combined
        with ``ABCMeta``, so the check is static, as for ``LineDiffWidget.build``).
        """

    def render(self) -> Content:
        return checked(self.row(self.content_size.width))

    def render_lines(self, crop: Region) -> list[Strip]:
        st = self.styles
        if (self.outer_size.height != 1 or st.padding.top or st.padding.bottom
                or st.content_align != ("left", "top") or st.text_align != "start"
                or decorated(self)):
            return super().render_lines(crop)
        strip = self._strip()
        x1, x2 = crop.column_span
        return [strip if (x1, x2) == (0, strip.cell_length) else strip.crop(x1, x2)
                for _ in crop.line_range]

    def _strip(self) -> Strip:
        width = self.outer_size.width
        left, right = self.styles.padding.left, self.styles.padding.right
        inner = max(0, width - left - right)
        content = checked(self.row(inner))
        style = self.visual_style
        drawn = self._drawn
        if drawn is not None and drawn[1:3] == (width, style) and drawn[0].is_same(content):
            return drawn[3]
        base = style.rich_style
        parse = self.app.stylesheet.parse_style
        text = Strip([Segment(part, span.rich_style)
                      for part, span in content.render(style, "", parse)])
        strip = Strip.join([Strip([Segment(" " * left, base)]),
                            crop_extend(text, 0, inner, base),
                            Strip([Segment(" " * right, base)])])
        background = self.background_colors[1]
        for line_filter in self.get_line_filters():
            strip = strip.apply_filter(line_filter, background)
        self._drawn = (content, width, style, strip)
        return strip


__all__ = ["OneRow"]
