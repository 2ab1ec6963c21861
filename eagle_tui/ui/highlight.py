"""The log highlighter: a pure function from a sanitized line and its kind to styled spans.

It returns *style names*, not colours: built-in names are the log view's component classes
(``log--error`` ...), styled by the theme's ``.tcss``; user rules from the config carry their own
Rich style string (``"bold magenta"``). Keeping this pure makes the exact spans testable without
a terminal (the way Rich tests its highlighters) and keeps the per-line cost visible: the view
calls it only for lines that are about to be drawn.

Spans are ordered; later spans win where they overlap (Rich applies them in order). The order is:
server prefix (timestamp, level, logger) → the line kind's style → numbers in stats lines →
``[EAGLE3-DEBUG]`` tag → user rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from eagle_tui.model.buffers.query import Finder
from eagle_tui.model.events import LineKind
from eagle_tui.userpattern import PatternRefused, compile_pattern

DEBUG_TAG = "[EAGLE3-DEBUG]"
MAX_RULE_MATCHES = 64  # per rule per line: a pathological regex cannot stall a redraw

# Kind → component class applied to the message part of the line.
KIND_STYLES: dict[LineKind, str] = {
    LineKind.DEBUG: "log--debug",
    LineKind.ERROR: "log--error",
    LineKind.TRACEBACK: "log--traceback",
    LineKind.WARNING: "log--warning",
    LineKind.MILESTONE: "log--milestone",
    LineKind.ACCESS: "log--access",
}

COMPONENT_CLASSES = frozenset(
    {
        *KIND_STYLES.values(),
        "log--timestamp",
        "log--number",
        "log--debug-tag",
        "log--match",
        "log--current",
        "log--marker",
    }
)

# Server prefixes: SGLang "[2025-11-20 10:14:31 TP0] ", vLLM "(APIServer pid=1) INFO 11-30
# 00:09:59 [file.py:12] ", uvicorn "INFO:     ". Wrapper prefixes "(Name pid=N) " may repeat.
_PREFIX = re.compile(
    r"(?:\([\w.\-]+ pid=\d+\) )*"
    r"(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\]]*\] "
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[^\]]*\] "
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):\s+)?"
)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?(?![\w])")


@dataclass(frozen=True, slots=True)
class StyledSpan:
    """``text[start:end]`` gets ``style`` (a component class name or a Rich style string)."""

    start: int
    end: int
    style: str


@dataclass(frozen=True, slots=True)
class HighlightRule:
    """A user rule from the config file: every match of ``pattern`` gets ``style``."""

    pattern: Finder
    style: str

    @classmethod
    def compile(cls, pattern: str, style: str) -> HighlightRule:
        """Compile a rule (in RE2, :mod:`eagle_tui.userpattern`); a pattern it refuses is a
        ``ValueError`` that names it and says why."""
        if not pattern:
            raise ValueError("highlight rule has an empty pattern")
        try:
            compiled = compile_pattern(pattern)
        except PatternRefused as exc:
            raise ValueError(f"highlight pattern {pattern!r} is refused: {exc}") from None
        return cls(compiled, style)


def prefix_end(text: str) -> int:
    """Length of the server prefix (timestamp / level / logger) at the start of ``text``."""
    match = _PREFIX.match(text)
    return match.end() if match else 0


def highlight(
    text: str, kind: LineKind, rules: Sequence[HighlightRule] = ()
) -> tuple[StyledSpan, ...]:
    """Styled spans for one sanitized log line. Pure; cost is a few regex scans of the line."""
    spans: list[StyledSpan] = []
    n = len(text)
    if n == 0:
        return ()
    start = prefix_end(text)
    if kind is LineKind.DEBUG:
        spans.append(StyledSpan(0, n, "log--debug"))
    else:
        if start:
            spans.append(StyledSpan(0, start, "log--timestamp"))
        kind_style = KIND_STYLES.get(kind)
        if kind_style is not None and start < n:
            spans.append(StyledSpan(start, n, kind_style))
        if kind is LineKind.STATS:
            spans.extend(
                StyledSpan(m.start(), m.end(), "log--number")
                for m in _NUMBER.finditer(text, start)
            )
    tag_at = text.find(DEBUG_TAG)
    if tag_at >= 0:
        spans.append(StyledSpan(tag_at, tag_at + len(DEBUG_TAG), "log--debug-tag"))
    for rule in rules:
        for count, m in enumerate(rule.pattern.finditer(text)):
            if count >= MAX_RULE_MATCHES:
                break
            if m.end() > m.start():
                spans.append(StyledSpan(m.start(), m.end(), rule.style))
    return tuple(spans)


__all__ = [
    "COMPONENT_CLASSES",
    "DEBUG_TAG",
    "KIND_STYLES",
    "HighlightRule",
    "StyledSpan",
    "highlight",
    "prefix_end",
]
