"""The one way eagle-tui reads a JSON or TOML document: a size cap and a nesting limit first.

``json`` and ``tomllib`` recurse once per level of nesting, so a document nested a few thousand
deep (a ``--speculative-config`` in a log line, a draft ``config.json``, a Prometheus answer, a
record file's line, a config file) raised ``RecursionError``, which no ``except ValueError``
caught: exit 70, or a log source that died. Here the depth is measured *before* the parser
runs, by a linear scan that removes the strings (one regex each, C speed) and sums the
brackets that are left; a document over :data:`MAX_DEPTH` levels or over its byte cap is
refused with :class:`LoadError`, whose message names the source and the bound. Everything
else the parser refuses (bad syntax, a 5,000-digit integer, text that is not UTF-8) is the
same error, so a caller catches one type.

More in docs/architecture.md, "Module notes", ``model/boundary/loaders``.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from eagle_tui.errors import InputError

MAX_DEPTH = 64  # real documents nest < 10 deep (a Prometheus answer: 5; a config.json: 4)
JSON_MAX_BYTES = 4 << 20  # a default; callers with a larger bound pass their own
TOML_MAX_BYTES = 1 << 20  # a config or theme file is a few KB

# What a JSON text holds besides its brackets: a string (an unterminated one runs to the end,
# never a second try from a later quote) or a run of anything but brackets and quotes.
_JSON_SKIP = re.compile(r'"[^"\\]*(?:\\.?[^"\\]*)*(?:"|\Z)|[^\[\]{}"]+', re.DOTALL)
# TOML's four string forms and its comments, leftmost first: a ``#`` inside a string is text,
# a quote inside a comment is not a string.
_TOML_SKIP = re.compile(
    r'"""[\s\S]*?(?:"""|\Z)|\'\'\'[\s\S]*?(?:\'\'\'|\Z)'
    r'|"[^"\\\n]*(?:\\.?[^"\\\n]*)*(?:"|$)|\'[^\'\n]*(?:\'|$)|#[^\n]*',
    re.MULTILINE)
_INT_DIGITS = 18  # a literal this long (sign included) is always inside the 64-bit range
_INT_MAX = (1 << 63) - 1
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class LoadError(InputError):
    """A document refused: over its size cap or nesting limit, or not its format at all.

    ``str()`` is ``"SOURCE: REASON"`` (``"draft config.json at /m/config.json: nested deeper
    than 64 levels"``); ``source`` and ``reason`` are kept apart for callers that word it."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


def _size(n: int) -> str:
    return f"{n / (1 << 20):g} MB" if n >= 1 << 20 else f"{n:,} bytes"


def nesting_depth(text: str, skip: re.Pattern[str] = _JSON_SKIP) -> int:
    """The deepest bracket nesting of ``text`` outside what ``skip`` matches (strings).

    Linear: a substitution or two and one pass over the brackets left, all in C. An
    unbalanced text gives its deepest prefix."""
    brackets = _NOT_BRACKET.sub("", skip.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def json_int(literal: str) -> int | float:
    """A JSON integer literal: an ``int`` inside the signed 64-bit range, else a float."""
    if len(literal) <= _INT_DIGITS:
        return int(literal)
    digits = literal.lstrip("-")
    if len(digits) <= 19 and int(digits) <= _INT_MAX + literal.startswith("-"):
        return int(literal)
    return float(literal)  # (no digit limit: the str-to-float conversion is linear)


def _may_hold_surrogates(text: str) -> bool:
    """Whether ``text`` may decode to a lone surrogate: a ``\\uD…`` escape, or (only in a
    text that is not ASCII) a surrogate decoded from the bytes. Two substring searches and an
    O(1) flag for the usual ASCII document, not a regex over all of it."""
    if "\\ud" in text or "\\uD" in text:
        return True
    return not text.isascii() and _SURROGATE.search(text) is not None


def _whole(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) read as U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_whole(v) for v in value]
    if isinstance(value, dict):
        return {_whole(k): _whole(v) for k, v in value.items()}
    return value


def _text_of(data: str | bytes | bytearray, source: str, max_bytes: int) -> str:
    if len(data) > max_bytes:
        raise LoadError(source, f"larger than {_size(max_bytes)}")
    if isinstance(data, str):  # a byte-order mark before the document is not part of it
        return data[1:] if data.startswith("\ufeff") else data
    try:  # (json's own choice of UTF-8/16/32 for bytes, a BOM dropped)
        return bytes(data).decode(json.detect_encoding(data), "surrogatepass")
    except UnicodeDecodeError as exc:
        reason = f"not valid JSON: not UTF-8 text ({exc.reason} at byte {exc.start})"
        raise LoadError(source, reason) from None


def _check_depth(text: str, source: str, max_depth: int, skip: re.Pattern[str]) -> None:
    if text.count("[") + text.count("{") <= max_depth:  # (the common case: cannot be deeper)
        return
    if nesting_depth(text, skip) > max_depth:
        raise LoadError(source, f"nested deeper than {max_depth} levels")


def load_json(data: str | bytes | bytearray, source: str, *, max_bytes: int = JSON_MAX_BYTES,
              max_depth: int = MAX_DEPTH, parse_int: Any = None) -> Any:
    """``data`` as JSON, or :class:`LoadError` naming ``source`` (over ``max_bytes`` — bytes,
    or characters for a ``str`` —, nested deeper than ``max_depth``, or not JSON)."""
    text = _text_of(data, source, max_bytes)
    _check_depth(text, source, max_depth, _JSON_SKIP)
    try:
        doc = json.loads(text, parse_int=parse_int or json_int)
    except (ValueError, RecursionError) as exc:  # (RecursionError: cannot happen below 64)
        raise LoadError(source, f"not valid JSON: {exc}") from None
    # (the walk is at most MAX_DEPTH deep, and only for a text that may hold a surrogate)
    return _whole(doc) if _may_hold_surrogates(text) else doc


def load_toml(text: str, source: str, *, max_bytes: int = TOML_MAX_BYTES,
              max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """``text`` as TOML, or :class:`LoadError` naming ``source`` (over ``max_bytes``
    characters, nested deeper than ``max_depth``, or not TOML; the reason keeps tomllib's
    line and column)."""
    import tomllib  # here: it imports datetime and its patterns, which a JSON-only command skips

    text = _text_of(text, source, max_bytes)
    _check_depth(text, source, max_depth, _TOML_SKIP)
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise LoadError(source, f"not valid TOML: {exc}") from None


__all__ = [
    "JSON_MAX_BYTES",
    "MAX_DEPTH",
    "TOML_MAX_BYTES",
    "LoadError",
    "json_int",
    "load_json",
    "load_toml",
    "nesting_depth",
]
