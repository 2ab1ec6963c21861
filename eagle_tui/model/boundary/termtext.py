"""One text type for the terminal: :data:`Inert`, and :func:`inert`, the one way to make it.

Everything eagle-tui shows comes partly from outside: log lines, server answers, Prometheus
labels and error text, ``/v1/models`` ids, HTTP error bodies, file and host names, exception
messages. A terminal acts on some characters instead of showing them (an OSC sequence retitles
the window, ``ESC [ 2 J`` clears it, ``ESC [ ? 1049 l`` leaves the alternate screen), and neither
Textual nor ``print`` strips them. So every terminal sink (the widget setters of
``ui/sinks.py``, ``console.say`` for stdout/stderr, the headless lines) takes :data:`Inert`, and
the only way to get one from outside text is this module's :func:`inert`.

What :func:`inert` does is a few passes, each linear in the length of the text.

More in docs/architecture.md, "Module notes", ``model/boundary/termtext``.
"""

from __future__ import annotations

import json
import re
from typing import NewType

Inert = NewType("Inert", str)
"""Text that :func:`inert` made safe for a terminal (the only type terminal sinks accept)."""

REPLACEMENT = "\ufffd"

# CSI: ESC [ or U+009B, parameters, intermediates, final byte.
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
# OSC / DCS / SOS / PM / APC (7- and 8-bit) up to BEL or ST; an unterminated one ends at a newline
# or the end of the text (a terminal would swallow the rest; so do we, but never past a line).
_STRING = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
# Any other escape: ESC, intermediates, one final byte (ESC ( B, ESC 7, ESC c), or a lone ESC.
_OTHER = r"\x1b[ -/]*[0-~]?"
ESCAPES = re.compile(f"{_STRING}|{_CSI}|{_OTHER}")
_ESCAPE_START = re.compile("[\x1b\x90\x98\x9b\x9d\x9e\x9f]")

# Surrogates (a byte that was not UTF-8, kept by ``surrogateescape``: an argv, a file name) can
# be encoded for no terminal: a strict stream raised, a ``surrogateescape`` one wrote the raw
# byte (0x9b is the 8-bit CSI), and Textual measured them as cells a terminal never draws.
_SPOOFING = "\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
CONTROLS_SRC = f"[\x00-\x08\x0a-\x1f\x7f-\x9f{_SPOOFING}]"  # one line: LF is a control too
CONTROLS_NL_SRC = f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_SPOOFING}]"  # several lines: LF kept
_CONTROLS = {False: re.compile(CONTROLS_SRC), True: re.compile(CONTROLS_NL_SRC)}
# A run is replaced in one piece: a line of 1 MiB of NUL bytes is one substitution, not a million.
_RUNS = {False: re.compile(CONTROLS_SRC + "{2,}"), True: re.compile(CONTROLS_NL_SRC + "{2,}")}
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_SPOOFING}]")


def strip_escapes(text: str) -> str:
    """``text`` without escape sequences (7- and 8-bit); no ESC survives."""
    if _ESCAPE_START.search(text) is None:
        return text
    return ESCAPES.sub("", text)


def replace_controls(text: str, *, newlines: bool = False) -> str:
    """Each remaining control character → one U+FFFD (runs at once)."""
    runs = _RUNS[newlines]
    if runs.search(text) is not None:
        text = runs.sub(_run_replacement, text)
    return _CONTROLS[newlines].sub(REPLACEMENT, text)


def _run_replacement(m: re.Match[str]) -> str:
    return REPLACEMENT * (m.end() - m.start())


def is_inert(text: str, *, newlines: bool = False) -> bool:
    """True when ``text`` holds nothing a terminal would act on (``inert(text) == text``)."""
    return text.isprintable() or _CONTROLS[newlines].search(text) is None


def inert(text: str, *, newlines: bool = False) -> Inert:
    """``text`` made safe for a terminal (see the module docstring); ``newlines`` keeps LF.

    Clean text is returned unchanged (the same object).
    """
    if text.isprintable():  # (every control below is unprintable: Cc, Cf, Zl, Zp)
        return Inert(text)
    if _CONTROLS[newlines].search(text) is None:  # (ESC and the 8-bit starters are controls)
        return Inert(text)
    return Inert(replace_controls(strip_escapes(text), newlines=newlines))


def inert_lines(text: str) -> Inert:
    """:func:`inert` for a sink that shows several lines (LF and TAB kept)."""
    return inert(text, newlines=True)


def inert_json(value: object) -> Inert:
    """``value`` as one line of JSON that is safe on a terminal and decodes to the same value.

    ``json.dumps`` escapes C0 but not DEL, C1 or the bidi controls with ``ensure_ascii=False``;
    each of those can only sit inside a JSON string, where ``\\uXXXX`` is the same character.
    """
    text = json.dumps(value, ensure_ascii=False)
    return Inert(_JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


__all__ = [
    "CONTROLS_NL_SRC",
    "CONTROLS_SRC",
    "ESCAPES",
    "REPLACEMENT",
    "Inert",
    "inert",
    "inert_json",
    "inert_lines",
    "is_inert",
    "replace_controls",
    "strip_escapes",
]
