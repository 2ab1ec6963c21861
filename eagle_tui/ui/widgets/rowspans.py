"""One row's styled text as segments, straight from its spans: Rich's ``Text.render`` without
the ``Text``.

A followed log renders every new row once; building a ``Text`` for it (its constructor strips
control codes the parser already removed), styling it span by span and rendering it was most of
the row's cost. Here a row is its text, a base style and ``(start, end, style)`` spans in
order; each piece between two span edges gets the base combined with the spans over it, in
their order (later ones win where they set the same attribute), as Rich combines them.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style

Span = tuple[int, int, Style]


class Combiner:
    """Combined styles by the tuple of styles combined (a log uses a handful of them)."""

    def __init__(self) -> None:
        self._combined: dict[tuple[Style, ...], Style] = {}

    def __call__(self, styles: tuple[Style, ...]) -> Style:
        style = self._combined.get(styles)
        if style is None:
            if len(self._combined) >= 4096:  # user rules' styles are many at most: a bound
                self._combined.clear()
            style = self._combined[styles] = Style.combine(styles)
        return style


def segments(text: str, base: Style, spans: Sequence[Span], combine: Combiner,
             start: int = 0, end: int | None = None) -> list[Segment]:
    """``text[start:end]`` as segments: ``base`` everywhere, each span over its
    ``[start, end)`` (positions in ``text``), none empty."""
    stop = len(text) if end is None else min(end, len(text))
    if stop <= start:
        return []
    edges: list[tuple[int, int, int]] = []  # (offset, leaving, span index)
    for i, (s, e, _) in enumerate(spans):
        s = max(s, start)
        e = min(e, stop)
        if s < e:
            edges.append((s, 0, i))
            edges.append((e, 1, i))
    if not edges:
        return [Segment(text[start:stop], base)]
    edges.sort()
    out: list[Segment] = []
    if edges[0][0] > start:
        out.append(Segment(text[start:edges[0][0]], base))
    active: list[int] = []
    count = len(edges)
    k = 0
    while k < count:
        offset = edges[k][0]
        while k < count and edges[k][0] == offset:
            _, leaving, i = edges[k]
            if leaving:
                active.remove(i)
            else:
                insort(active, i)
            k += 1
        nxt = edges[k][0] if k < count else stop
        if nxt > offset:
            styles = (base, *(spans[i][2] for i in active)) if active else (base,)
            out.append(Segment(text[offset:nxt], combine(styles) if active else base))
    return out


__all__ = ["Combiner", "Span", "segments"]
