"""``ui/widgets/rowspans`` and the log's row strips against Rich's own ``Text.render``.

The row renderer builds segments from spans without a ``Text``; it must give what Rich gives for
the same text, base and spans (Rich combines a piece's styles in span order), cropped and padded
as ``Strip.crop_extend`` does. Generated texts (ASCII, wide and combining characters), spans
(overlapping, empty, past the end) and crops.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from eagle_tui.model.buffers.logbuffer import LogBuffer
from eagle_tui.model.events import LineKind, LogLine
from eagle_tui.ui.highlight import COMPONENT_CLASSES
from eagle_tui.ui.widgets.logrender import RowRenderer
from eagle_tui.ui.widgets.rowspans import Combiner, segments

STYLES = [Style(color="red"), Style(bold=True), Style(color="blue", bgcolor="white"),
          Style(reverse=True), Style(italic=True, color="green"), Style(bgcolor="yellow")]
BASE = Style(color="white", bgcolor="black")
CONSOLE = Console(width=200, force_terminal=True, color_system="truecolor")


def _key(strip: Strip | list[Segment]) -> list[tuple[str, str]]:
    """Segments as (text, the style's own rendering): a style's hash is per process."""
    return [(s.text, str(s.style)) for s in strip]


def _rich(text: str, base: Style, spans: list[tuple[int, int, Style]]) -> list[Segment]:
    rich_text = Text(text, no_wrap=True, end="")
    for s, e, style in spans:
        rich_text.stylize(style, s, e)
    rich_text.stylize_before(base)
    return [s for s in rich_text.render(CONSOLE) if s.text]


texts = st.text(st.sampled_from("abc xyz:019[]-é漢字\u0301"), max_size=40)


@st.composite
def spanned(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, Style]]]:
    text = draw(texts)
    n = len(text)
    spans = draw(st.lists(st.tuples(st.integers(0, n + 2), st.integers(0, n + 2),
                                    st.sampled_from(STYLES)), max_size=8))
    return text, spans


@settings(max_examples=400, deadline=None)
@given(spanned())
def test_segments_are_what_rich_renders(case: tuple[str, list[tuple[int, int, Style]]]) -> None:
    text, spans = case
    assert _key(segments(text, BASE, spans, Combiner())) == _key(_rich(text, BASE, spans))


@settings(max_examples=300, deadline=None)
@given(spanned(), st.integers(0, 50), st.integers(0, 50))
def test_a_window_of_ascii_is_the_window_of_the_whole(
        case: tuple[str, list[tuple[int, int, Style]]], start: int, width: int) -> None:
    text, spans = case
    text = "".join(c if c.isascii() else "x" for c in text)
    whole = Strip(_rich(text, BASE, spans), len(text)).crop(start, start + width)
    assert _key(segments(text, BASE, spans, Combiner(), start, start + width)) == _key(whole)


def _renderer(lines: list[LogLine]) -> RowRenderer:
    styles = dict(zip(sorted(COMPONENT_CLASSES | {"log--host"}), STYLES * 3, strict=False))
    buffer = LogBuffer(1000)
    buffer.append(lines)
    return RowRenderer(buffer, [], COMPONENT_CLASSES | {"log--host"},
                       lambda name: styles.get(name, Style()))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(texts, st.sampled_from(list(LineKind))), min_size=1, max_size=6),
       st.integers(0, 30), st.integers(1, 60), st.booleans())
def test_a_row_is_rich_text_cropped_and_padded(lines: list[tuple[str, LineKind]], scroll_x: int,
                                               width: int, searching: bool) -> None:
    entries = [LogLine(i, text, kind) for i, (text, kind) in enumerate(lines, 1)]
    draw = _renderer(entries)
    if searching:
        draw.buffer.search = draw.buffer.compile("a|漢")  # type: ignore[misc]
    draw.buffer.cursor = 1
    for row in range(draw.buffer.row_count):
        seq, _, _ = draw.buffer.row(row)
        entry = draw.buffer.entry(seq)
        spans = draw.spans(entry, entry.text, seq in draw.buffer.special, seq == 1)
        whole = Strip(_rich(entry.text, BASE, spans), Text(entry.text).cell_len)
        expected = whole.crop_extend(scroll_x, scroll_x + width, BASE)
        assert _key(draw.buffer_strip(row, scroll_x, width, BASE)) == _key(expected)
