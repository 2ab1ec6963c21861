"""The one opener of paths that come from outside: regular files only, never blocking.

Every reader of a path a user, a log or a server names (a log, a record file, a config or theme
file, ``--ssh-map``, a results file, a draft's ``config.json``, a known-hosts or key file) opens it
here. A FIFO without a writer blocks ``open`` (and the event loop with it), ``/dev/zero`` never
ends, a socket cannot be opened, a directory is not a file: each is refused with one line naming
what it is. The kind is checked on the open descriptor (``fstat``), so a path swapped between a
check and the open is refused too. A path holding a NUL byte names no file: it is
``FileNotFoundError``, never the ``ValueError`` that ``os.open`` raises. A log in another
encoding (UTF-16/32, a byte-order mark) is read through :func:`open_log`.

Stdlib and the pure model only, no asyncio: ``report`` imports it before its first output.
``tests/unit/structure/test_openers.py`` fails when an
``open``/``os.open``/``read_text``/``read_bytes`` of an outside path appears anywhere else.
"""

from __future__ import annotations

import errno
import io
import os
import stat

from eagle_tui.errors import InputError
from eagle_tui.model.ingest.textenc import SNIFF_BYTES, Encoding, Transcoder, sniff


class NotRegularFileError(InputError):
    """The path names a FIFO, a device, a socket or a directory: eagle-tui reads regular files
    only. (The transports raise their own ``NotRegularFile`` with the same message.)"""


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"))


def file_kind(mode: int) -> str:
    """``""`` for a regular file, else what ``mode`` (``st_mode``) names, for the message."""
    if stat.S_ISREG(mode):
        return ""
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def not_regular_message(path: str, kind: str) -> str:
    """The one message for a path that is not a regular file (``path`` is sanitized by the
    printer)."""
    if kind == "a directory":
        return f"{path}: is a directory"
    return (f"{path}: {kind}, not a regular file; eagle-tui reads regular files only "
            "(save the stream to a file and give that)")


def os_error_message(path: str, exc: OSError) -> str:
    """The one-line reason of a failed read of ``path``, the same for every reader."""
    if isinstance(exc, FileNotFoundError):
        return f"{path}: no such file"
    if isinstance(exc, IsADirectoryError):
        return f"{path}: is a directory"
    if isinstance(exc, PermissionError):
        return f"{path}: permission denied"
    return f"{path}: {exc.strerror or exc}"


def _no_nul(name: str) -> str:
    if "\0" in name:
        raise FileNotFoundError(errno.ENOENT, "no such file (the path holds a NUL byte)", name)
    return name


def check_regular(path: str | os.PathLike[str]) -> None:
    """Raise :class:`NotRegularFileError` when ``path`` exists and is not a regular file. A
    missing path passes (a tail waits for it). ``stat`` never blocks on what it looks at."""
    try:
        st = os.stat(_no_nul(os.fspath(path)))
    except OSError:
        return
    kind = file_kind(st.st_mode)
    if kind:
        raise NotRegularFileError(not_regular_message(os.fspath(path), kind))


def open_regular(path: str | os.PathLike[str]) -> io.BufferedReader:
    """Open ``path`` for reading (binary) only when it is a regular file, without blocking.

    ``O_NONBLOCK`` makes the open of a FIFO return at once; the kind is then checked on the
    descriptor (``fstat``). Raises ``FileNotFoundError``/``PermissionError`` as ``open`` does,
    :class:`NotRegularFileError` for anything that is not a regular file.
    """
    name = _no_nul(os.fspath(path))
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a Unix socket (or a FIFO on some systems)
            raise NotRegularFileError(not_regular_message(name, "a socket")) from None
        raise
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind:
            raise NotRegularFileError(not_regular_message(name, kind))
        os.set_blocking(fd, True)  # (no effect on a regular file's reads; stated for clarity)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


WHOLE_FILE_LIMIT = 16 << 20  # a file read whole (a config, a map, a key list): a few KB each


def read_bytes(path: str | os.PathLike[str], limit: int = WHOLE_FILE_LIMIT) -> bytes:
    """The whole of a regular file, at most ``limit`` bytes (:class:`InputError` past it): no
    file read whole can take more memory than its reader allows, whatever it is given."""
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        size = f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"
        raise InputError(f"{os.fspath(path)}: too large (more than {size})")
    return data


def read_text(path: str | os.PathLike[str], *, encoding: str = "utf-8",
              errors: str = "strict", limit: int = WHOLE_FILE_LIMIT) -> str:
    """:func:`read_bytes` decoded (``UnicodeDecodeError`` is a ``ValueError``)."""
    return read_bytes(path, limit).decode(encoding, errors)


def pread_regular(path: str, offset: int, length: int) -> bytes:
    """Up to ``length`` bytes of the regular file ``path`` from ``offset`` (one ``pread``)."""
    with open_regular(path) as fh:
        return os.pread(fh.fileno(), length, offset)


class DecodedReader:
    """A log in another encoding read as UTF-8 bytes (``read``; ``seek`` by re-reading: a
    replay retried from a line). What :func:`open_log` gives for a UTF-16/32 or BOM'd log."""

    def __init__(self, raw: io.BufferedReader, enc: Encoding) -> None:
        self.raw, self.encoding = raw, enc  # (``raw`` at its start: a pipe is never sought)
        self._restart()

    def _rewind(self) -> None:
        self.raw.seek(0)
        self._restart()

    def _restart(self) -> None:
        self._coder = Transcoder(self.encoding)
        self._out = bytearray()
        self._done = False
        self._pos = 0

    def read(self, n: int = -1) -> bytes:
        while not self._done and (n < 0 or len(self._out) < n):
            data = self.raw.read(1 << 20)
            self._out += self._coder.feed(data) if data else self._coder.finish()
            self._done = not data
        take = len(self._out) if n < 0 else min(n, len(self._out))
        out = bytes(self._out[:take])
        del self._out[:take]
        self._pos += take
        return out

    def readline(self, limit: int = -1) -> bytes:
        while not self._done and b"\n" not in self._out and (limit < 0 or len(self._out) < limit):
            data = self.raw.read(1 << 16)
            self._out += self._coder.feed(data) if data else self._coder.finish()
            self._done = not data
        end = self._out.find(b"\n") + 1 or len(self._out)
        return self.read(end if limit < 0 else min(end, limit))

    def seek(self, offset: int) -> int:
        if offset < self._pos:
            self._rewind()
        while self._pos < offset and self.read(min(1 << 20, offset - self._pos)):
            pass
        return self._pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> DecodedReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def as_utf8(fh: io.BufferedReader) -> tuple[io.BufferedReader | DecodedReader,
                                           Encoding | None]:
    """``fh`` (at its start: a file or a pipe) read as UTF-8: itself when it is UTF-8 without
    a mark, else a :class:`DecodedReader`; and the encoding found in its first bytes."""
    peek = getattr(fh, "peek", None)  # (a stream without it is read as it is)
    enc = sniff(peek(SNIFF_BYTES)[:SNIFF_BYTES]) if peek is not None else None
    if enc is None:
        return fh, None
    return DecodedReader(fh, enc), enc


def open_log(path: str | os.PathLike[str]) -> tuple[io.BufferedReader | DecodedReader,
                                                   Encoding | None]:
    """A log opened with :func:`open_regular`, read as UTF-8 (:func:`as_utf8`)."""
    return as_utf8(open_regular(path))


__all__ = [
    "WHOLE_FILE_LIMIT",
    "DecodedReader",
    "NotRegularFileError",
    "as_utf8",
    "check_regular",
    "file_kind",
    "not_regular_message",
    "open_log",
    "open_regular",
    "os_error_message",
    "pread_regular",
    "read_bytes",
    "read_text",
]
