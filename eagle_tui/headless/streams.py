"""The standard streams, made safe once at the command boundary (``cli.main``).

Two failures of issue 17 came from the streams themselves, not from what was printed:

* **Encoding.** The sanitizer replaces what cannot be shown by U+FFFD; on a stdout whose
  encoding cannot hold it (``LC_ALL=C`` without UTF-8 coercion, ``PYTHONIOENCODING=ascii``, a
  Latin-1 terminal) ``print`` raised ``UnicodeEncodeError`` out of ``report``, ``wait`` (exit 1,
  the "crashed" code) and headless ``watch``. Both streams are reconfigured with
  ``errors="replace"``: a character the terminal cannot show becomes ``?``, never an error.
* **Echoed names.** A file or host name carrying an OSC sequence retitled the terminal when an
  error message echoed it. Everything written to ``stderr`` (messages, warnings, even a
  traceback) passes :func:`inert`: escape sequences removed, other control characters but
  newline and tab replaced. stdout is left as it is (``report --json`` writes bytes, the
  progress lines are cleaned where they are made), and the dashboard writes to the original
  ``sys.__stderr__``, which is never wrapped.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

# ESC/CSI/OSC/DCS sequences (7- and 8-bit), then single controls other than \t and \n
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
_CONTROL = dict.fromkeys([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0),
                          0x2028, 0x2029, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066,
                          0x2067, 0x2068, 0x2069], "\ufffd")


def inert(text: str) -> str:
    """``text`` without anything a terminal would act on (newlines and tabs kept)."""
    if text.isascii() and text.isprintable():
        return text
    return _SEQUENCE.sub("", text).translate(_CONTROL)


class InertStream(io.TextIOBase):
    """A text stream that writes :func:`inert` text to ``target`` (everything else delegated)."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self._target = target

    def write(self, text: str) -> int:
        self._target.write(inert(text))
        return len(text)

    def flush(self) -> None:
        self._target.flush()

    def isatty(self) -> bool:
        return self._target.isatty()

    def fileno(self) -> int:
        return self._target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._target.encoding

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


def _never_raise_on_encode(stream: object) -> None:
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(ValueError, TypeError, io.UnsupportedOperation):
            reconfigure(errors="replace")


@contextlib.contextmanager
def safe_streams() -> Iterator[None]:
    """While the command runs: stdout and stderr never raise on encoding, stderr is inert.

    The previous ``sys.stderr`` is put back afterwards (tests call ``main`` many times in one
    process, each with its own captured streams).
    """
    _never_raise_on_encode(sys.stdout)
    _never_raise_on_encode(sys.stderr)
    previous = sys.stderr
    wrapped = isinstance(previous, InertStream)
    if not wrapped:
        sys.stderr = InertStream(previous)
    try:
        yield
    finally:
        if not wrapped:
            with contextlib.suppress(OSError, ValueError):  # (a reader that went away)
                sys.stderr.flush()
            sys.stderr = previous


__all__ = ["InertStream", "inert", "safe_streams"]
