"""Opening files that must be regular, without ever blocking (stdlib only, no asyncio).

Shared by the local transport's tail and reads and by ``report``, which must not import the
event loop (it starts in a fraction of a second): a FIFO without a writer blocks ``open``,
``/dev/zero`` never ends, a socket cannot be opened; all are refused with what they are.
"""

from __future__ import annotations

import errno
import os
from typing import BinaryIO

from .base import NotRegularFile, file_kind, not_regular_message


def check_regular(path: str) -> None:
    """Raise :class:`NotRegularFile` when ``path`` exists and is not a regular file (a FIFO,
    ``/dev/zero``, a socket, a directory). A missing path passes: the tail waits for it.

    ``stat`` never blocks on what it looks at (``open`` of a FIFO without a writer does).
    """
    try:
        st = os.stat(path)
    except OSError:
        return
    kind = file_kind(st.st_mode)
    if kind:
        raise NotRegularFile(not_regular_message(path, kind))


def open_regular(path: str) -> BinaryIO:
    """Open ``path`` for reading only when it is a regular file, without ever blocking.

    ``O_NONBLOCK`` makes the open of a FIFO return at once (a blocking open waits for a writer,
    and the event loop with it); the kind is then checked on the descriptor itself (``fstat``),
    so a path swapped for a FIFO between a check and the open is refused too. Raises
    ``FileNotFoundError``/``PermissionError`` as ``open`` does, :class:`NotRegularFile` else.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a Unix socket (or a FIFO on some systems)
            raise NotRegularFile(not_regular_message(path, "a socket")) from None
        raise
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind:
            raise NotRegularFile(not_regular_message(path, kind))
        os.set_blocking(fd, True)  # (no effect on a regular file's reads; stated for clarity)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


__all__ = ["check_regular", "open_regular"]
