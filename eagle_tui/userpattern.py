"""User patterns: the one place where a regular expression that a user typed is compiled.

The log's filter and search boxes, the whole-file search of the scrollback and the config's
``[[highlight]]`` rules all compile here, in RE2 (PyPI ``google-re2``), whose matching time is
linear in the text for every pattern. Python's ``re`` backtracks: ``(a+)+$`` against 40 ``a`` s
and a ``!`` never returned, and the UI thread with it (``Esc`` and ``q`` dead). RE2 has no
backreferences and no lookaround; a pattern that needs them is *refused*, with a one-line
reason (:class:`PatternRefused`) that the query box shows and the config loader reports.

eagle-tui's own fixed patterns (the log classifiers, ...) stay in ``re``: they are written to be
linear and budgeted by their tests. ``tests/unit/test_user_patterns.py`` checks that no other
module compiles a user's text.

More in docs/architecture.md, "Module notes", ``userpattern``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import re2

from eagle_tui.errors import UsageError
from eagle_tui.model.buffers.query import Literal, Match, smart_case

MAX_PATTERN_CHARS = 1_000  # a pasted page is not a pattern; RE2's program stays small
_METACHARS = frozenset(".^$*+?{}[]\\|()")
_LOOKAROUND = ("(?=", "(?!", "(?<=", "(?<!")
_ENGINE = "user patterns run in RE2, a linear-time engine"


class PatternRefused(UsageError):
    """A pattern eagle-tui will not run; ``str()`` is the one-line reason."""


def _options(case_sensitive: bool) -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would write its parse errors over the terminal
    options.case_sensitive = case_sensitive
    options.never_capture = True  # only the whole match is used: RE2's DFA finds it alone
    return options


def _reason(pattern: str, exc: Exception) -> str:
    raw = exc.args[0] if exc.args else ""
    msg = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    # RE2 quotes the pattern in its message: a typed newline or control stays one visible escape
    msg = "".join(c if c.isprintable() else repr(c)[1:-1] for c in msg)
    if any(op in msg for op in _LOOKAROUND):
        return f"lookaround ({', '.join(_LOOKAROUND)}) is not supported: {_ENGINE}"
    if "(?P=" in pattern or re.search(r"invalid escape sequence: \\[1-9]", msg):
        return f"backreferences are not supported: {_ENGINE}"
    return f"{msg or 'not a pattern'} ({_ENGINE})"


def _compile(pattern: str, case_sensitive: bool) -> Any:
    try:
        return re2.compile(pattern, _options(case_sensitive))
    except re2.error as exc:
        raise PatternRefused(_reason(pattern, exc)) from None


class Regex:
    """A compiled RE2 pattern, with the protocol of :mod:`eagle_tui.model.buffers.query`."""

    __slots__ = ("_block", "_case", "_re", "pattern", "search")

    def __init__(self, pattern: str, case_sensitive: bool) -> None:
        self.pattern = pattern
        self._case = case_sensitive
        self._re = _compile(pattern, case_sensitive)
        self.search: Any = self._re.search  # (bound once: called per line)
        self._block: Regex | None = None

    def finditer(self, text: str, pos: int = 0) -> Iterator[Match]:
        found: Iterator[Match] = self._re.finditer(text, pos)
        return found

    @property
    def lines(self) -> Regex:
        if self._block is None:
            self._block = Regex("(?m)" + self.pattern, self._case)
        return self._block


def _checked_length(pattern: str) -> None:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternRefused(f"pattern longer than {MAX_PATTERN_CHARS:,} characters")


def compile_pattern(pattern: str) -> Regex:
    """A config rule's pattern: a regex (case-sensitive), or :class:`PatternRefused`."""
    if not pattern:
        raise PatternRefused("empty pattern")
    _checked_length(pattern)
    return Regex(pattern, case_sensitive=True)


def _is_python_regex(text: str) -> bool:
    """Whether ``re`` parses ``text``: only compiled, never matched, so it cannot backtrack."""
    try:
        with warnings.catch_warnings():  # a FutureWarning would be printed over the terminal
            warnings.simplefilter("ignore")
            re.compile(text)
    except (re.error, OverflowError, RecursionError, ValueError):
        return False
    return True


@lru_cache(maxsize=64)  # the box re-checks its text on every key
def compile_query(query: str) -> Literal | Regex | None:
    """A filter/search query: None when empty; a literal when it has no metacharacter or is
    no regex at all; else an RE2 regex, smart case. A regex RE2 cannot run (lookaround,
    backreferences, a repeat over 1,000) raises :class:`PatternRefused`."""
    if not query:
        return None
    if _METACHARS.isdisjoint(query):
        return Literal(query)
    _checked_length(query)
    try:
        return Regex(query, smart_case(query))
    except PatternRefused:
        if not _is_python_regex(query):
            return Literal(query)
        raise


def refusal(query: str) -> str:
    """Why the query box's text is refused, "" when it is not."""
    try:
        compile_query(query)
    except PatternRefused as exc:
        return str(exc)
    return ""


__all__ = ["MAX_PATTERN_CHARS", "PatternRefused", "Regex", "compile_pattern", "compile_query",
           "refusal"]
