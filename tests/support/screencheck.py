"""Checks on a rendered screen's text that no label was cut to fit: the dashboard's layout tests.

Two ways a text is cut: with the truncation ellipsis (``spec EAGLE3 · steps 3 · 4 d…``) or
cropped at a widget's edge (the footer's ``s S▏``). :func:`width_cuts` finds the first kind by
comparing a screen with the same state drawn on a very wide terminal, where nothing needs
cutting: an ellipsis only the narrower screen has is a cut made for the width (a message the
model cut to a fixed length is cut at every width and is not reported). :func:`partial_labels`
finds the second kind for labels whose full text is known (the footer's keys).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

ELLIPSIS_WORD = re.compile(r"\S*…")


def ellipsis_words(screen: str) -> Counter[str]:
    """Each word that ends in (or holds) ``…``, with how often it appears."""
    return Counter(ELLIPSIS_WORD.findall(screen))


def width_cuts(screen: str, wide_screen: str) -> list[str]:
    """The words cut with ``…`` on ``screen`` that the wide rendering of the same state does not
    cut (more often): the cuts the screen's width made."""
    wide = ellipsis_words(wide_screen)
    return sorted((ellipsis_words(screen) - wide).elements())


def partial_labels(line: str, labels: Iterable[str]) -> list[str]:
    """The ``labels`` drawn on ``line`` only in part: absent whole, but a beginning of one (two
    characters or more, from a word's start) runs into the line's end or a border/bar."""
    text = line.rstrip()
    out = []
    for label in labels:
        if label in text:
            continue
        for n in range(len(label) - 1, 1, -1):
            if re.search(r"(?:^|\s)" + re.escape(label[:n]) + r" *(?:[▏│┃]|$)", text):
                out.append(label)
                break
    return out


__all__ = ["ellipsis_words", "partial_labels", "width_cuts"]
