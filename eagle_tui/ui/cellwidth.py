"""Characters whose width Rich and the terminal disagree on, replaced one for one.

Textual lays a row out by Rich's cell widths and repaints only the cells that changed. A
character that the terminal draws wider or narrower than Rich counted shifts the rest of its row,
and the next partial repaint lands on the wrong cells: a crash message quoting a Hindi prompt
left its letters over the neighbouring pane. Rich counts a spacing mark (Devanagari ``ा``, category
``Mc``) as 0 cells where terminals give it 1, an emoji skin tone as 0 where they give it 2, and
joins an emoji sequence (``U+200D``, ``U+FE0F``) that terminals without grapheme clusters draw
apart; characters newer than a terminal's tables differ too.

:func:`settle` replaces each such character (a width by the terminal convention, ``wcwidth``'s,
that is not Rich's) with U+FFFD, and the joiners and skin tones, which only change how an emoji
looks, with a zero-width space. One character for one, so offsets into the text (search
highlights, wrap cuts) stay valid. East Asian *ambiguous* characters are left: terminals draw
them as one cell, as Rich counts them, outside CJK locales.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from rich.cells import get_character_cell_size

from eagle_tui.model.boundary.termtext import REPLACEMENT

ZERO_WIDTH = "\u200b"
# Emoji presentation only: the joiner, the emoji variation selector, the five skin tones.
PRESENTATION = frozenset("\u200d\ufe0f\U0001f3fb\U0001f3fc\U0001f3fd\U0001f3fe\U0001f3ff")
_ZERO_CATEGORIES = frozenset(("Mn", "Me", "Cf"))
_CACHE = 4096  # distinct characters remembered (a hostile log may hold every code point)


def terminal_width(ch: str) -> int:
    """Cells a terminal gives ``ch`` by the ``wcwidth`` convention: 0 for combining and format
    characters and the Hangul vowel and final jamo, 2 for wide and full-width ones, else 1."""
    if unicodedata.category(ch) in _ZERO_CATEGORIES and ch != "\xad":
        return 0
    if "\u1160" <= ch <= "\u11ff" or "\ud7b0" <= ch <= "\ud7ff":
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


@lru_cache(maxsize=_CACHE)
def substitute(ch: str) -> str:
    """What ``ch`` is shown as: itself when Rich and the terminal agree on its width."""
    if ch in PRESENTATION:
        return ZERO_WIDTH
    return ch if get_character_cell_size(ch) == terminal_width(ch) else REPLACEMENT


def settle(text: str) -> str:
    """``text`` with every character of disputed width replaced (see the module docstring); the
    same object when there is none (always for ASCII)."""
    if text.isascii():
        return text
    table: dict[int, str] | None = None
    for ch in set(text):
        if ch >= "\u0300":  # (Latin-1 and the Latin extensions: one cell everywhere)
            shown = substitute(ch)
            if shown != ch:
                if table is None:
                    table = {}
                table[ord(ch)] = shown
    return text if table is None else text.translate(table)


__all__ = ["PRESENTATION", "ZERO_WIDTH", "settle", "substitute", "terminal_width"]
