"""The transports' face of :mod:`eagle_tui.files`: the same opener, raising the transport's
:class:`NotRegularFile` (a :class:`TransportError`, which every source already turns into a
failed-source event and a note) instead of the plain input error.
"""

from __future__ import annotations

import io
import os

from eagle_tui import files

from .base import NotRegularFile


def check_regular(path: str) -> None:
    """:func:`eagle_tui.files.check_regular`, raising :class:`NotRegularFile`."""
    try:
        files.check_regular(path)
    except files.NotRegularFileError as exc:
        raise NotRegularFile(str(exc)) from None


def open_regular(path: str) -> io.BufferedReader:
    """:func:`eagle_tui.files.open_regular`, raising :class:`NotRegularFile`."""
    try:
        return files.open_regular(path)
    except files.NotRegularFileError as exc:
        raise NotRegularFile(str(exc)) from None


def pread_regular(path: str, offset: int, length: int) -> bytes:
    """:func:`eagle_tui.files.pread_regular`, raising :class:`NotRegularFile`."""
    with open_regular(path) as fh:
        return os.pread(fh.fileno(), length, offset)


__all__ = ["check_regular", "open_regular", "pread_regular"]
