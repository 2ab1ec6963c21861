"""The standard streams, made safe once at the command boundary (``cli.main``).

* **Encoding.** The sanitizer replaces what cannot be shown by U+FFFD; on a stdout whose
  encoding cannot hold it (``LC_ALL=C`` without UTF-8 coercion, ``PYTHONIOENCODING=ascii``, a
  Latin-1 terminal) ``print`` would raise ``UnicodeEncodeError``. Both streams are reconfigured
  with ``errors="replace"``: a character the terminal cannot show becomes ``?``.
* **Echoed names.** A file or host name carrying an OSC sequence would retitle the terminal when
  an error message echoed it. Every text written to ``stdout`` or ``stderr`` (messages,
  warnings, tables, even a traceback) passes :func:`inert`, the one sanitizer with newlines and
  tabs kept: the runtime net under the typed sinks of :mod:`eagle_tui.console`, which also holds
  for argparse's own messages and for a library that prints. ``report --json`` writes JSON with
  every control escaped to ``stdout.buffer``; the dashboard writes to ``sys.__stderr__``, never
  wrapped (its widgets take :data:`~eagle_tui.model.boundary.termtext.Inert` text instead).
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from eagle_tui.model.boundary.termtext import Inert
from eagle_tui.model.boundary.termtext import inert as _inert


def inert(text: str) -> Inert:
    """``text`` without anything a terminal would act on (newlines and tabs kept)."""
    return _inert(text, newlines=True)


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

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._target.errors

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


def _never_raise_on_encode(stream: object) -> None:
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(ValueError, TypeError, io.UnsupportedOperation):
            reconfigure(errors="replace")


@contextlib.contextmanager
def safe_streams() -> Iterator[None]:
    """While the command runs: stdout and stderr never raise on encoding and are inert.

    The previous streams are put back afterwards (tests call ``main`` many times in one
    process, each with its own captured streams).
    """
    _never_raise_on_encode(sys.stdout)
    _never_raise_on_encode(sys.stderr)
    previous = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, InertStream):
        sys.stdout = InertStream(sys.stdout)
    if not isinstance(sys.stderr, InertStream):
        sys.stderr = InertStream(sys.stderr)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # (a reader that went away)
                stream.flush()
        sys.stdout, sys.stderr = previous


__all__ = ["InertStream", "inert", "safe_streams"]
