"""The sinks of stdout and stderr: every command's output goes through :func:`say` or :func:`warn`.

They accept only :data:`~eagle_tui.model.boundary.termtext.Inert` text, so ``mypy --strict`` refuses
a string that did not pass the one sanitizer (:func:`~eagle_tui.model.boundary.termtext.inert`): a
server's model id, an HTTP error body, a file name or an exception message cannot reach the terminal
raw. ``tests/unit/structure/test_terminal_sinks.py`` fails when code outside the sink modules writes
to a standard stream (``print``, ``sys.stdout.write``, a ``TextIO`` parameter's ``write``) instead.
The text is checked once more here (one C-level check when clean): the type is a promise that
mypy keeps, this keeps it at run time too.
"""

from __future__ import annotations

import sys
from typing import TextIO

from eagle_tui.model.boundary.termtext import Inert, inert


def say(text: Inert, file: TextIO | None = None, *, newline: bool = True,
        flush: bool = False) -> None:
    """Write ``text`` (and a newline) to ``file`` (default: the current ``sys.stdout``)."""
    out = sys.stdout if file is None else file
    out.write(inert(text, newlines=True) + "\n" if newline else inert(text, newlines=True))
    if flush:
        out.flush()


def warn(text: Inert, file: TextIO | None = None, *, flush: bool = False) -> None:
    """Write one message line to ``file`` (default: the current ``sys.stderr``): a newline in
    it (a quoted file name may hold one) is shown as U+FFFD, so a message stays one line."""
    out = sys.stderr if file is None else file
    out.write(inert(text) + "\n")
    if flush:
        out.flush()


def fail(command: str | None, message: object, file: TextIO | None = None) -> None:
    """The one line of a refusal, ``eagle-tui COMMAND: error: MESSAGE``, on ``file`` (default
    stderr)."""
    where = f"eagle-tui {command}" if command else "eagle-tui"
    warn(inert(f"{where}: error: {message}"), file)


__all__ = ["fail", "say", "warn"]
