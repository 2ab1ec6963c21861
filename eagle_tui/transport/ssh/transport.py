"""The SSH transport: every source works over one paramiko connection, nothing installed remotely.

One :class:`SshTransport` per host. It holds one SSH connection (a :class:`~.link.Link`) and
multiplexes channels on it: an exec channel per ``tail -F`` / ``nvidia-smi -lms`` / one-shot
command, a ``direct-tcpip`` channel per HTTP connection. paramiko blocks, so it lives in threads
(an executor for short calls, one reader thread per stream, one keepalive thread) and hands data
to asyncio through queues; nothing above this module sees paramiko.

More in docs/architecture.md, "Module notes", ``transport/ssh/transport``.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from eagle_tui.model.events import ConnectionState
from eagle_tui.transport.base import (
    CommandNotFound,
    ConnectionLost,
    NotRegularFile,
    RunResult,
    TailChunk,
    TransportError,
    check_range,
    http_limits,
    not_regular_message,
)
from eagle_tui.transport.ssh.config import SshTarget, resolve
from eagle_tui.transport.ssh.conn import Connection, backoff_delay
from eagle_tui.transport.ssh.frame import frame
from eagle_tui.transport.ssh.link import SshOptions
from eagle_tui.transport.ssh.stream import COALESCE_S, ChannelStream
from eagle_tui.transport.ssh.tail import (
    NOT_REGULAR_EXIT,
    TailFollower,
    not_regular_kind,
    tail_command,
)

if TYPE_CHECKING:
    import httpx

_MAX_STDERR = 64 * 1024
_MAX_LINE = 1 << 20


def range_script(offset: int, length: int) -> str:
    """The ``sh -c`` script of a range read of the file ``$1`` (numbers only are formatted in:
    the path never is). ``tail -c +N`` seeks on a regular file; ``head -c`` caps the output."""
    return (f'if [ -e "$1" ] && [ ! -f "$1" ]; then exit {NOT_REGULAR_EXIT}; fi; '
            f'[ -f "$1" ] && [ -r "$1" ] || {{ echo "$1: no such readable file" >&2; exit 2; }}; '
            f'tail -c +{int(offset) + 1} -- "$1" | head -c {int(length)}')


def _not_found(code: int, stderr: bytes) -> bool:
    return code == 127 or (code == 126 and b"not found" in stderr)


class SshTransport:
    """:class:`~eagle_tui.transport.base.Transport` over one SSH connection to ``dest``."""

    def __init__(
        self,
        dest: str,
        options: SshOptions | None = None,
        *,
        target: SshTarget | None = None,
    ) -> None:
        self._options = options or SshOptions()
        self._target = target or resolve(
            dest, self._options.config_path, use_config=self._options.use_config,
            outside=self._options.outside,
        )
        self._dest = dest
        self._executor = ThreadPoolExecutor(max_workers=16, thread_name_prefix=f"ssh {dest}")
        self._conn = Connection(dest, self._target, self._options, self._executor)
        # path → inode its last tail read: a tail started again at an offset (a source
        # retried) tells a replaced file from a truncated one (bounded: a few paths)
        self._inodes: dict[str, int] = {}

    # ---------------------------------------------------------------- Transport protocol

    @property
    def host(self) -> str:
        return self._dest

    @property
    def target(self) -> SshTarget:
        return self._target

    @property
    def state(self) -> ConnectionState:
        return self._conn.state

    async def run(self, argv: list[str], timeout: float = 10.0, *,
                  stdin: bytes | None = None) -> RunResult:
        if not argv:
            raise TransportError("empty command")
        deadline = time.monotonic() + timeout
        link = await self._conn.live(timeout)
        stream = await ChannelStream.open(
            # the remote command ends soon after this call gives up on it (a ``wc`` of a FIFO)
            link, frame(shlex.join(argv), limit_s=timeout + 2), self._executor,
            self._conn.on_lost, timeout,
        )
        if stdin is not None:  # small (a launch's --env values): written before reading
            data = stdin

            def feed() -> None:
                stream.send(data)
                stream.send_eof()

            await asyncio.get_running_loop().run_in_executor(self._executor, feed)
        out: list[bytes] = []
        err: list[bytes] = []
        try:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a cancellation
            # that arrives as the inner read completes, and a stopped source then polls forever
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                async for chunk in stream:
                    if chunk.kind == "out":
                        out.append(chunk.data)
                    elif chunk.kind == "err":
                        err.append(chunk.data)
                    elif chunk.kind == "lost":
                        raise ConnectionLost(f"connection to {self._dest} lost: {chunk.reason}")
                    else:
                        stderr = b"".join(err)
                        if _not_found(chunk.code, stderr):
                            raise CommandNotFound(
                                f"{argv[0]}: command not found on {self._dest}")
                        return RunResult(chunk.code, b"".join(out), stderr)
            raise TransportError(f"{argv[0]} on {self._dest}: the channel ended without a status")
        except TimeoutError as exc:
            raise TransportError(
                f"{shlex.join(argv)[:200]} on {self._dest} timed out after {timeout:g} s"
            ) from exc
        finally:
            await stream.aclose()

    async def stream_lines(self, argv: list[str], *, stderr: bool = False
                           ) -> AsyncIterator[bytes]:
        if not argv:
            raise TransportError("empty command")
        link = await self._conn.live(self._options.connect_timeout)
        stream = await ChannelStream.open(
            link, frame(shlex.join(argv), replaces_shell=True), self._executor,
            self._conn.on_lost, self._options.connect_timeout, coalesce=COALESCE_S,
        )
        pending = {"out": b"", "err": b""}  # each stream's unfinished line
        err = b""
        try:
            async for chunk in stream:
                if chunk.kind == "err":
                    err = (err + chunk.data)[-_MAX_STDERR:]
                if chunk.kind == "out" or (chunk.kind == "err" and stderr):
                    part = pending[chunk.kind] + chunk.data
                    *lines, part = part.split(b"\n")
                    for line in lines:
                        yield line.removesuffix(b"\r")
                    if len(part) > _MAX_LINE:
                        yield part
                        part = b""
                    pending[chunk.kind] = part
                elif chunk.kind == "lost":
                    raise ConnectionLost(f"connection to {self._dest} lost: {chunk.reason}")
                elif chunk.kind not in ("out", "err"):
                    for part in pending.values():
                        if part:
                            yield part.removesuffix(b"\r")
                    if _not_found(chunk.code, err):
                        raise CommandNotFound(f"{argv[0]}: command not found on {self._dest}")
                    if chunk.code != 0:
                        text = err.decode("utf-8", "replace").strip().splitlines()
                        why = text[-1] if text else "no message"
                        raise TransportError(
                            f"{argv[0]} on {self._dest} exited with {chunk.code}: {why}"
                        )
                    return
        finally:
            await stream.aclose()

    async def tail(self, path: str, offset: int = 0) -> AsyncIterator[TailChunk]:
        follower = TailFollower(offset=offset,
                                inode=self._inodes.get(path) if offset > 0 else None)
        resumed = False
        while True:
            link = await self._conn.live(None)
            follower.start(resumed=resumed)
            try:
                stream = await ChannelStream.open(
                    link,
                    frame(tail_command(path, follower.offset, follower.inode),
                          replaces_shell=True),
                    self._executor,
                    self._conn.on_lost,
                    self._options.connect_timeout,
                    coalesce=COALESCE_S,
                )
            except ConnectionLost:
                resumed = True
                continue
            lost = False
            try:
                async for chunk in stream:
                    if chunk.kind == "out":
                        try:
                            items = follower.feed_out(chunk.data)
                            if follower.inode is not None:
                                self._remember(path, follower.inode)
                            for item in items:
                                yield item
                        except ValueError as exc:
                            raise TransportError(f"tail of {path} on {self._dest}: {exc}") from exc
                    elif chunk.kind == "err":
                        restarts = follower.feed_err(chunk.data)
                        if restarts:
                            # tail's notice and the new content travel on two pipes, so some
                            # of the new file may already have been counted as old: announce
                            # the restart and read the new file again from byte 0 with a fresh
                            # tail, so the new run is complete after the marker.
                            yield restarts[0]
                            break
                    elif chunk.kind == "lost":
                        lost = True
                    else:
                        why = follower.stderr_text() or "no message"
                        if chunk.code == NOT_REGULAR_EXIT:
                            raise NotRegularFile(not_regular_message(
                                f"{path} on {self._dest}", not_regular_kind(why)))
                        if _not_found(chunk.code, why.encode()):
                            raise CommandNotFound(f"tail: command not found on {self._dest}")
                        raise TransportError(
                            f"tail of {path} on {self._dest} stopped (exit {chunk.code}): {why}"
                        )
            finally:
                await stream.aclose()
            resumed = lost

    def _remember(self, path: str, inode: int) -> None:
        if path not in self._inodes and len(self._inodes) >= 64:
            self._inodes.pop(next(iter(self._inodes)))
        self._inodes[path] = inode

    async def read_file(self, path: str, max_bytes: int = 1 << 20) -> bytes:
        # regular files only: ``head`` of a FIFO without a writer would wait for the timeout
        script = ('if [ -e "$1" ] && [ ! -f "$1" ]; then exit 66; fi; '
                  'exec head -c "$2" -- "$1"')
        result = await self.run(["sh", "-c", script, "sh", path, str(max_bytes + 1)])
        if result.exit_code == NOT_REGULAR_EXIT:
            raise NotRegularFile(not_regular_message(f"{path} on {self._dest}",
                                                     "not a regular file"))
        if result.exit_code != 0:
            raise self._read_failed(path, result)
        if len(result.stdout) > max_bytes:
            raise TransportError(f"{path} on {self._dest} is larger than {max_bytes} bytes")
        return result.stdout

    def _read_failed(self, path: str, result: RunResult) -> TransportError:
        """The error of a failed remote read: the command's last stderr line (or its status)."""
        lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else f"exit {result.exit_code}"
        return TransportError(f"cannot read {path} on {self._dest}: {why}")

    async def read_range(self, path: str, offset: int, length: int,
                         timeout: float = 10.0) -> bytes:
        """One exec: ``tail -c +N | head -c M``, the path passed as ``$1`` (never part of the
        script) and the script quoted by :meth:`run`; the deadline is the command's."""
        check_range(offset, length)
        result = await self.run(["sh", "-c", range_script(offset, length), "sh", path], timeout)
        if result.exit_code == NOT_REGULAR_EXIT:  # a scrollback whose log became a FIFO
            raise NotRegularFile(not_regular_message(f"{path} on {self._dest}",
                                                     "not a regular file"))
        if result.exit_code != 0:
            raise self._read_failed(path, result)
        if len(result.stdout) > length:
            raise TransportError(f"{path} on {self._dest}: the range read passed its cap")
        return result.stdout

    def http_client(self, base_url: str, timeout: float) -> httpx.AsyncClient:
        import httpx

        from eagle_tui.transport.ssh.http import SshHttpTransport, SshNetworkBackend

        backend = SshNetworkBackend(self._conn.live, self._executor, self._dest)
        return httpx.AsyncClient(
            base_url=base_url,
            timeout=timeout,
            transport=SshHttpTransport(backend),
            trust_env=False,  # an HTTP(S)_PROXY of *this* machine must not capture remote URLs
            limits=http_limits(),
        )

    async def close(self) -> None:
        await self._conn.close()
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def connect(self, *, retry: bool = False) -> None:
        """Open the connection now; see :meth:`.conn.Connection.connect` (``retry``)."""
        await self._conn.connect(retry=retry)

    def connection_events(self) -> AsyncIterator[ConnectionState]:
        """Current connection state first, then every change; ends when closed."""
        return self._conn.events()

    async def __aenter__(self) -> SshTransport:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

__all__ = ["SshOptions", "SshTransport", "backoff_delay"]
