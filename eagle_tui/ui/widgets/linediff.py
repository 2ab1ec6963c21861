"""A widget drawn as lines of ``Content`` that repaints only the lines that changed.

Why: the panes change a few numbers at a time (a clock, tok/s), but ``refresh()`` makes Textual
re-render every row of the widget (border, padding, filters) in the next screen update. At idle
the clock's once-a-second update was the dashboard's main cost; while a log streams the metrics
pane's 14 rows were re-rendered twice a second for the two that moved. Here a new frame is
compared line by line with the one on screen and only the changed rows are marked dirty.
"""

from __future__ import annotations

from abc import abstractmethod

from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from eagle_tui.ui.sinks import checked
from eagle_tui.ui.textual_private import render_rows


class LineDiffWidget(Widget):
    """Subclasses implement :meth:`build`; call :meth:`update_lines` when their input changed."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        # no links in a pane: Textual's link pass read every segment's meta on every render
        self.set_reactive(Widget.auto_links, False)
        self._lines: list[Content] = []
        self._width = 0  # content width the lines were built for (0: not laid out yet)
        self._changed: dict[int, Content] = {}  # rows marked dirty since the last render
        self._built: Content | None = None  # what ``build`` gave for the rows on screen

    @abstractmethod
    def build(self, width: int) -> Content:
        """The whole content for ``width`` cells (0 before the first layout).

        Abstract: mypy refuses to instantiate a subclass that lacks it (Textual's metaclass
        cannot be combined with ``ABCMeta``, so the check is static).
        """

    def _split(self, width: int, built: Content | None = None) -> list[Content]:
        """The rows: a line wider than ``width`` is wrapped here, at word breaks, so each entry
        is one row on screen (Textual's own wrap would shift the rows under the diff)."""
        self._built = self.build(width) if built is None else built
        lines = self._built.split("\n", allow_blank=True)
        if not width or all(line.cell_length <= width for line in lines):
            return lines
        return [row for line in lines
                for row in (line.wrap(width) if line.cell_length > width else [line])]

    def update_lines(self) -> None:
        """Rebuild; repaint the rows whose content differs (all of them after a resize)."""
        width = self.content_region.width
        if not width or width != self._width or not self._lines:
            self._lines = []  # render() rebuilds at the current width
            self._changed = {}
            self.refresh()
            return
        built = self.build(width)
        if self._built is not None and built.is_same(self._built):
            return  # (a tick that changed nothing this pane shows: no split, no diff)
        lines = self._split(width, built)
        if len(lines) != len(self._lines):
            self._lines = lines
            self.refresh()
            return
        changed = [y for y, (old, new) in enumerate(zip(self._lines, lines, strict=True))
                   if not old.is_same(new)]
        self._lines = lines
        if changed:
            for y in changed:
                self._changed[y] = lines[y]
            # relative to the content area, as refresh() wants
            self.refresh(*(Region(0, y, width, 1) for y in changed))

    def render_line(self, y: int) -> Strip:
        """Textual's, but a repaint of changed rows renders those rows only."""
        if self._changed:
            changed, self._changed = self._changed, {}
            if self._width == self.content_region.width:
                render_rows(self, changed)  # else (or False): Textual renders every row
        return super().render_line(y)

    def render(self) -> Content:
        width = self.content_region.width
        if not self._lines or width != self._width:
            self._width = width
            self._lines = self._split(width)
        return checked(Content("\n").join(self._lines))


__all__ = ["LineDiffWidget"]
