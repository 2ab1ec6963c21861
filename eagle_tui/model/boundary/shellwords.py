"""Shell words that show on a terminal as they are: quoting and splitting, one pair.

``shlex.quote`` keeps control characters as they are inside its single quotes, so a command
line whose words hold an ESC (a model path pasted from a listing, an argv read from a process)
is a terminal sequence once shown: the relaunch editor's input line retitled the terminal and
cleared the screen with it. Dropping the characters would relaunch another command. So a word
that holds anything :func:`~eagle_tui.model.boundary.termtext.inert` would change is quoted in the
ANSI-C form of bash, ksh and zsh (``$'a\\x1bb'``), every such character written as an escape
(``\\xHH`` a byte, ``\\uHHHH`` a character; an undecodable byte of an argv, which Python holds
as a ``surrogateescape`` U+DC80-U+DCFF, is written as that byte), and :func:`split` reads that
form back: ``split(join(words)) == words`` for any words, and ``join(words)`` is always inert
(one line, nothing a terminal acts on).

Text without ``$'`` splits exactly as ``shlex.split`` (POSIX rules, ``#`` comments).
"""

from __future__ import annotations

import re
import shlex

from eagle_tui.model.boundary.termtext import is_inert

_NAMED = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\x1b": "\\e"}
_ANSI_READ = {"n": "\n", "t": "\t", "r": "\r", "e": "\x1b", "E": "\x1b", "a": "\x07",
              "b": "\x08", "f": "\x0c", "v": "\x0b", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_HEX = {"x": 2, "u": 4, "U": 8}


def quote(word: str) -> str:
    """``word`` as one shell word; its controls, if any, written as ANSI-C escapes."""
    if _shows_as_is(word):
        return shlex.quote(word)
    return "$'" + "".join(_ansi_char(c) for c in word) + "'"


def join(words: list[str]) -> str:
    """The words as one command line that :func:`split` returns them from."""
    return " ".join(quote(w) for w in words)


def _shows_as_is(word: str) -> bool:
    # (surrogates from undecodable bytes are not printable either: they cannot be encoded)
    return word.isprintable() or (is_inert(word) and not any(_surrogate(c) for c in word))


def _surrogate(c: str) -> bool:
    return "\ud800" <= c <= "\udfff"


def _ansi_char(c: str) -> str:
    if c in _NAMED:
        return _NAMED[c]
    if c.isprintable() and not _surrogate(c):
        return c
    code = ord(c)
    if code < 0x80:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte (``surrogateescape``): that byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def split(text: str) -> list[str]:
    """Words of ``text`` as a POSIX shell splits them, ``$'...'`` included; ``ValueError`` on
    an unclosed quote (as ``shlex.split``)."""
    if "$'" not in text:
        return shlex.split(text, comments=True)
    words: list[str] = []
    word: list[str] | None = None  # None: between words
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\n\r":
            if word is not None:
                words.append("".join(word))
                word = None
            i += 1
            continue
        if c == "#":  # (shlex ends a word at an unquoted ``#`` too)
            if word is not None:
                words.append("".join(word))
                word = None
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        word = [] if word is None else word
        if c == "\\":
            if i + 1 >= n:
                raise ValueError("No escaped character")
            word.append(text[i + 1])
            i += 2
        elif c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ValueError("No closing quotation")
            word.append(text[i + 1:end])
            i = end + 1
        elif c == '"':
            i = _double(text, i + 1, word)
        elif text.startswith("$'", i):
            i = _ansi(text, i + 2, word)
        else:
            word.append(c)
            i += 1
    if word is not None:
        words.append("".join(word))
    return words


def _double(text: str, i: int, word: list[str]) -> int:
    """A double-quoted part from ``i`` (after the quote), as shlex reads it: ``\\`` escapes
    only ``"`` and ``\\``."""
    while i < len(text):
        c = text[i]
        if c == '"':
            return i + 1
        if c == "\\" and i + 1 < len(text) and text[i + 1] in '"\\':
            word.append(text[i + 1])
            i += 2
        else:
            word.append(c)
            i += 1
    raise ValueError("No closing quotation")


def _ansi(text: str, i: int, word: list[str]) -> int:
    """An ANSI-C quoted part from ``i`` (after ``$'``)."""
    while i < len(text):
        c = text[i]
        if c == "'":
            return i + 1
        if c != "\\":
            word.append(c)
            i += 1
            continue
        nxt = text[i + 1:i + 2]
        if nxt in _HEX:
            digits = re.match(f"[0-9a-fA-F]{{1,{_HEX[nxt]}}}", text[i + 2:i + 2 + _HEX[nxt]])
            if digits is None:
                word.append("\\" + nxt)
                i += 2
                continue
            code = int(digits.group(), 16)
            if nxt == "x" and code >= 0x80:  # a byte, as bash writes it: undecodable alone
                code += 0xDC00
            word.append(chr(code) if code <= 0x10FFFF else "\ufffd")
            i += 2 + len(digits.group())
        elif nxt in _ANSI_READ:
            word.append(_ANSI_READ[nxt])
            i += 2
        else:
            word.append("\\" + nxt)
            i += 2
    raise ValueError("No closing quotation")


__all__ = ["join", "quote", "split"]
