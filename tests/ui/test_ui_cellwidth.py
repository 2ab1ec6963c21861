"""Characters of disputed width (``ui/cellwidth``): what the sinks and the log rows show.

A character that Rich measures otherwise than the terminal draws it shifted the rest of its row
and left pieces of a crash message over the next pane. The generated cases draw from every code
point and check the mechanism's promises: one character for one, nothing left whose width Rich
and the ``wcwidth`` convention dispute, the same text twice in a row; against the C library's own
``wcwidth`` (what tmux measures with) where it answers, Rich's count of the settled text is the
terminal's.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import locale
import unicodedata
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len, get_character_cell_size
from rich.text import Text
from textual.content import Content

from eagle_tui.model.boundary.termtext import Inert
from eagle_tui.ui.cellwidth import PRESENTATION, ZERO_WIDTH, settle, terminal_width
from eagle_tui.ui.safety import inert
from eagle_tui.ui.sinks import checked, checked_text
from eagle_tui.ui.widgets.logtext import wrap_cuts

HINDI = "नमस्ते दुनिया, कृपया मेरा सवाल पढ़ें और जवाब दें, धन्यवाद"
SKIN = "\U0001f9d1\U0001f3fd" * 5
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
HEART = "\u2764\ufe0f"
# what reaches ``settle``: text the model's sanitizer left (no control characters, no surrogates)
TEXTS = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)
RAW = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


def _wcwidth() -> Callable[[str], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        locale.setlocale(locale.LC_CTYPE, "C.UTF-8")
    except locale.Error:
        return None
    libc = ctypes.CDLL(name)
    return lambda ch: int(libc.wcwidth(ctypes.c_wchar(ch)))


WCWIDTH = _wcwidth()


@pytest.mark.parametrize("text", [HINDI, SKIN, FAMILY, HEART, "ಕೃಷ್ಣ", "\u3164x", "\u2630"])
def test_named_texts_measure_as_the_terminal_draws_them(text: str) -> None:
    shown = settle(text)
    assert len(shown) == len(text)
    assert all(get_character_cell_size(c) == terminal_width(c) for c in shown)
    assert not PRESENTATION & set(shown)
    assert cell_len(shown) == sum(map(terminal_width, shown))


def test_what_each_kind_becomes() -> None:
    assert settle("का") == "क\ufffd"  # a spacing mark: Rich 0 cells, terminals 1
    assert settle(SKIN) == ("\U0001f9d1" + ZERO_WIDTH) * 5  # the tone goes, the person stays
    assert settle(FAMILY) == FAMILY.replace("\u200d", ZERO_WIDTH)
    assert settle(HEART) == "\u2764" + ZERO_WIDTH
    for same in ("plain ascii", "é → ✓ 中文 ─┃", "a\u0301"):  # agreed widths: untouched
        assert settle(same) is same


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_settled_text_has_no_disputed_width(text: str) -> None:
    shown = settle(text)
    assert len(shown) == len(text)
    assert settle(shown) == shown
    for c, s in zip(text, shown, strict=True):
        assert s == c or s in ("\ufffd", ZERO_WIDTH)
        assert get_character_cell_size(s) == terminal_width(s), (hex(ord(c)), hex(ord(s)))
    assert "\u200d" not in shown and "\ufe0f" not in shown  # (Rich joins on these)
    assert cell_len(shown) == sum(map(terminal_width, shown))


@pytest.mark.skipif(WCWIDTH is None, reason="no C library wcwidth")
@settings(max_examples=400, deadline=None)
@given(RAW)
def test_rich_counts_what_the_c_library_counts(text: str) -> None:
    assert WCWIDTH is not None
    # the UI's sanitizer, as the rows and panes get it; characters the C library does not
    # know, and the East Asian ambiguous ones (one cell or two by the locale), have no answer
    # to hold Rich to
    known = "".join(c for c in inert(text) if WCWIDTH(c) >= 0
                    and unicodedata.east_asian_width(c) != "A")
    assert cell_len(known) == sum(map(WCWIDTH, known)), [hex(ord(c)) for c in known]


def test_the_ui_sanitizer_and_the_sinks_settle_widths() -> None:
    assert inert(HINDI) == settle(HINDI)
    content = Content.assemble(("crash: ", "bold"), (HINDI, "red"))
    shown = checked(content)
    assert shown.plain == settle(content.plain)
    assert shown.spans == content.spans  # one for one: the styles stay on their characters
    assert checked(Content("clean")).plain == "clean"
    text = Text.assemble(("host ", "bold"), SKIN)
    cell = checked_text(text)
    assert cell.plain == settle(text.plain) and cell.spans == text.spans
    assert text.plain != cell.plain  # the caller's Text is not changed
    assert checked(Inert(FAMILY)).plain == settle(FAMILY)


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.integers(1, 12))
def test_wrap_cuts_fit_the_settled_row(text: str, width: int) -> None:
    cuts = wrap_cuts(text, width)
    assert cuts[0][0] == 0 and cuts[-1][1] == len(text)
    for a, b in cuts:
        piece = settle(text[a:b])
        assert cell_len(piece) <= width or b - a == 1
