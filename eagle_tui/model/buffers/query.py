"""What the model needs of a user's filter/search pattern, and its stdlib-only default.

A pattern the user types is compiled outside the model, by :mod:`eagle_tui.userpattern` (in a
linear-time engine, RE2, which the model may not import: it is pure stdlib). The model only
searches with it, through the small protocol here, and is handed the compiler
(:class:`~eagle_tui.model.buffers.logbuffer.LogBuffer`'s ``compile``). A compiler returns None for
the empty query and raises ``ValueError`` with a one-line reason for a pattern it refuses.

The default, :func:`literal_query`, takes every query as literal text (smart case): a literal
search cannot backtrack, so a buffer built without the real compiler is still safe.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Protocol


class Match(Protocol):
    def start(self) -> int: ...

    def end(self) -> int: ...


class Finder(Protocol):
    """Searches one line: what a highlight rule needs."""

    def search(self, text: str) -> Match | None: ...

    def finditer(self, text: str, pos: int = 0) -> Iterator[Match]: ...


class Matcher(Finder, Protocol):
    """A compiled filter/search query."""

    @property
    def lines(self) -> Finder:
        """The same pattern over a block of lines: ``^`` and ``$`` match at every line's ends."""


QueryCompiler = Callable[[str], Matcher | None]


def smart_case(query: str) -> bool:
    """Case matters only when the query has a capital letter (as in less and vim)."""
    return any(c.isupper() for c in query)


class Literal:
    """A query taken as literal text: ``lines`` is itself (a literal has no ``^`` or ``$``)."""

    __slots__ = ("_compiled", "search")

    def __init__(self, query: str) -> None:
        # an escaped pattern is a plain substring search: linear, whatever the text
        self._compiled = re.compile(re.escape(query), 0 if smart_case(query) else re.IGNORECASE)
        self.search: Callable[[str], re.Match[str] | None] = self._compiled.search  # (per line)

    def finditer(self, text: str, pos: int = 0) -> Iterator[re.Match[str]]:
        return self._compiled.finditer(text, pos)

    @property
    def lines(self) -> Literal:
        return self


def literal_query(query: str) -> Literal | None:
    return Literal(query) if query else None


__all__ = ["Finder", "Literal", "Match", "Matcher", "QueryCompiler", "literal_query", "smart_case"]
