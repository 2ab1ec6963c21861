"""Last line of defence before server-originated text reaches a widget.

The parser already sanitizes every log line, but Textual passes ESC straight to the terminal
(MEASURED.md: a log line retitled the tmux pane, cleared the screen, left the alternate screen).
Crash messages, alert texts, model names and GPU process names also come from the server, so
every widget runs them through :func:`inert` anyway: one regex ``search`` on a clean line
(~0.2 µs) is cheap insurance against a source that forgot.

Markup is the other half of "inert": callers must put the result into ``Content``/``Text``
objects (or pass ``markup=False``), never into a markup-parsing ``str`` parameter.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"

# C0 controls except TAB, DEL, and C1 controls (0x80-0x9f include the 8-bit CSI 0x9b).
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
# Whole escape sequences, so that "\x1b]0;title\x07" does not leave "]0;title" behind.
_ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL/ST
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"  # DCS / PM / APC / SOS ... ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b[ -/]*[0-~]"  # two-character escapes
)


def is_inert(text: str) -> bool:
    """True when ``text`` holds no control character a terminal would act on."""
    return _UNSAFE.search(text) is None


def inert(text: str) -> str:
    """``text`` with escape sequences removed and remaining controls replaced by U+FFFD.

    TABs are expanded (a raw TAB would make the rendered width differ from the cell count).
    Clean text is returned unchanged (same object), which keeps the hot path allocation-free.
    """
    if "\t" in text:
        text = text.expandtabs(4)
    if _UNSAFE.search(text) is None:
        return text
    text = _ESCAPES.sub("", text)
    return _UNSAFE.sub(REPLACEMENT, text)


__all__ = ["REPLACEMENT", "inert", "is_inert"]
