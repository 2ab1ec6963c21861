"""The one transport interface: where the watched server runs is hidden behind it.

Sources (log tail, health, metrics, process, GPUs) only ever talk to a :class:`Transport`. The
local transport uses files, subprocesses and psutil; the SSH transport multiplexes the same
operations over one paramiko connection (exec channels for ``tail -F`` / ``nvidia-smi -lms`` /
``ps``, a direct-tcpip channel for HTTP). Nothing above this layer imports paramiko.

Errors: every operation raises :class:`TransportError` (or a subclass) for anything that went
wrong on the way (connection lost, command missing, permission denied), so sources need exactly
one ``except`` to turn a failure into a ``SourceFailed`` event and a retry.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from eagle_tui.errors import EagleError
from eagle_tui.files import file_kind as file_kind
from eagle_tui.files import not_regular_message as not_regular_message

if TYPE_CHECKING:
    import httpx


MAX_RANGE_BYTES = 8 << 20  # the cap of one read_range: memory and one exec's output stay bounded


# An idle kept-alive HTTP connection is dropped after this, before the server drops it (the
# engines' uvicorn: 5 s; httpx's own default was 5 s too): a request sent on a connection the
# server is closing fails before any answer (``sources/http_budget`` then asks once more).
HTTP_KEEPALIVE_S = 3.0


def http_limits() -> httpx.Limits:
    """The connection limits of every HTTP client of a transport (httpx's, but the expiry)."""
    import httpx

    return httpx.Limits(max_connections=100, max_keepalive_connections=20,
                        keepalive_expiry=HTTP_KEEPALIVE_S)


def check_range(offset: int, length: int) -> None:
    """The one validation of a :meth:`Transport.read_range` request."""
    if offset < 0 or length < 0:
        raise ValueError("offset and length must be >= 0")
    if length > MAX_RANGE_BYTES:
        raise ValueError(f"a range read is at most {MAX_RANGE_BYTES} bytes, not {length}")


class TransportError(EagleError):
    """Base of every error a transport raises. ``str(err)`` is shown to the user as is."""


class ConnectionLost(TransportError):
    """The connection to the host died; the transport is reconnecting (or has given up)."""


class HostKeyError(TransportError):
    """The host key is unknown or changed; never retried automatically."""


class CommandNotFound(TransportError):
    """A remote tool (``nvidia-smi``, ``tail``) is not installed."""


class NotRegularFile(TransportError):
    """The path names a FIFO, a device, a socket or a directory: eagle-tui follows and reads
    regular files only. Opening a FIFO without a writer blocks, ``/dev/zero`` never ends, a
    socket cannot be opened: refused with what it is, never read."""


@dataclass(frozen=True, slots=True)
class RunResult:
    exit_code: int
    stdout: bytes
    stderr: bytes


@dataclass(frozen=True, slots=True)
class TailChunk:
    """Bytes appended to a followed file, or a notice that it restarted.

    ``offset`` is the byte offset in the file *after* ``data``. ``restarted`` is set (with a
    reason: "truncated", "replaced", "reconnected-truncated") when the file was truncated or
    replaced and reading restarted at byte 0; ``data`` then holds bytes from offset 0 onwards.
    ``at_eof`` is True when ``data`` reaches what was the end of the file when it was read (the
    reader has caught up; the log source then stops using its catch-up fast path), False when
    more was already there, ``None`` when the transport cannot tell (a pause in the stream is
    then taken as the end).
    """

    data: bytes
    offset: int
    restarted: str = ""
    at_eof: bool | None = None


@runtime_checkable
class Transport(Protocol):
    """Operations every source needs, locally or remotely."""

    @property
    def host(self) -> str:
        """``""`` for local, the SSH destination otherwise (shown in the UI)."""
        ...

    async def run(self, argv: list[str], timeout: float = 10.0, *,
                  stdin: bytes | None = None) -> RunResult:
        """Run a command to completion (argv is quoted for the remote shell by the transport)."""
        ...

    def stream_lines(self, argv: list[str], *, stderr: bool = False) -> AsyncIterator[bytes]:
        """Start a long-running command and yield its stdout lines (without the newline).

        ``stderr=True``: its stderr lines are yielded too, as they come (a container's log
        arrives on both of the CLI's streams). Ends when the command exits; raises
        :class:`CommandNotFound` if it does not exist, :class:`TransportError` with the end
        of its stderr when it exits with another status than 0.
        """
        ...

    def tail(self, path: str, offset: int = 0) -> AsyncIterator[TailChunk]:
        """Follow ``path`` from byte ``offset``: waits for a missing file, survives truncation
        and replacement, and (SSH) reconnects resuming exactly at the last complete line."""
        ...

    async def read_file(self, path: str, max_bytes: int = 1 << 20) -> bytes:
        """Read a small file (e.g. the draft's ``config.json``)."""
        ...

    async def read_range(self, path: str, offset: int, length: int,
                         timeout: float = 10.0) -> bytes:
        """Up to ``length`` bytes of ``path`` from byte ``offset`` (fewer at its end), within
        ``timeout`` seconds; ``length`` is at most :data:`MAX_RANGE_BYTES`. The file-backed
        scrollback reads its lines and builds its index with it, a range at a time."""
        ...

    def http_client(self, base_url: str, timeout: float) -> httpx.AsyncClient:
        """An httpx client that reaches ``base_url`` as seen *from the host*."""
        ...

    async def close(self) -> None:
        ...
