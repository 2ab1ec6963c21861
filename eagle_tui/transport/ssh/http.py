"""httpx over SSH: an httpcore network backend whose ``connect_tcp`` opens a direct-tcpip channel.

Why not a local forwarding port (``ssh -L``-style): it needs a listening socket on this machine
(other local users could use it), and a closed remote port then shows up as a *reset* after the
local connect succeeded, not as a connection error. Opening one ``direct-tcpip`` channel per
HTTP connection gives the server's real answer: a closed remote port fails the channel open, which
becomes ``httpx.ConnectError`` — exactly what the local transport raises, so the health source
classifies "no listener" the same way in both cases.

Hosts and ports in URLs are as seen *from the remote host*: ``http://localhost:30000`` is the
server's own loopback, opened by the remote sshd.

More in docs/architecture.md, "Module notes", ``transport/ssh/http``.
"""

from __future__ import annotations

import asyncio
import contextlib
import typing
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import Executor
from typing import Any

import httpcore
import httpx

from eagle_tui.transport.base import ConnectionLost, TransportError
from eagle_tui.transport.ssh.link import Link

GetLink = Callable[[float], Awaitable[Link]]


class SshNetworkStream(httpcore.AsyncNetworkStream):
    """One direct-tcpip channel seen as an httpcore stream."""

    def __init__(self, chan: Any, executor: Executor, label: str, link: Link) -> None:
        self._chan = chan
        self._executor = executor
        self._label = label
        self._link = link

    def _check_link(self, exc: BaseException | None = None) -> None:
        if not self._link.is_active():
            raise ConnectionLost(f"SSH connection lost while talking to {self._label}") from exc

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        def blocking_read() -> bytes:
            self._chan.settimeout(timeout)
            try:
                data = bytes(self._chan.recv(max_bytes))
            except TimeoutError as exc:
                self._check_link(exc)
                raise httpcore.ReadTimeout(f"no answer from {self._label} in {timeout} s") from exc
            except (OSError, EOFError) as exc:
                self._check_link(exc)
                raise httpcore.ReadError(f"{self._label}: {exc}") from exc
            if not data:
                self._check_link()  # EOF from the server, or the SSH link went away?
            return data

        return await asyncio.get_running_loop().run_in_executor(self._executor, blocking_read)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return

        def blocking_write() -> None:
            self._chan.settimeout(timeout)
            try:
                self._chan.sendall(buffer)
            except TimeoutError as exc:
                self._check_link(exc)
                raise httpcore.WriteTimeout(f"{self._label}: write timed out") from exc
            except (OSError, EOFError) as exc:
                self._check_link(exc)
                raise httpcore.WriteError(f"{self._label}: {exc}") from exc

        await asyncio.get_running_loop().run_in_executor(self._executor, blocking_write)

    async def aclose(self) -> None:
        with contextlib.suppress(RuntimeError):
            self._executor.submit(self._chan.close)

    async def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError(
            f"https through the SSH connection is not supported ({self._label}); use http:// — "
            "the traffic is already encrypted by SSH"
        )

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # httpcore asks this of an idle pooled connection: "readable" means the server
            # closed it (or sent junk), so it must not be reused.
            chan = self._chan
            return bool(chan.closed or chan.eof_received or chan.recv_ready())
        if info == "server_addr":
            return self._label
        return None


class SshNetworkBackend(httpcore.AsyncNetworkBackend):
    """Opens HTTP connections as direct-tcpip channels on the current SSH link."""

    def __init__(self, get_link: GetLink, executor: Executor, dest: str) -> None:
        self._get_link = get_link
        self._executor = executor
        self._dest = dest

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        wait = 10.0 if timeout is None else timeout
        label = f"{host}:{port} on {self._dest}"
        link = await self._get_link(wait)  # ConnectionLost/HostKeyError pass through as they are

        def open_channel() -> Any:
            try:
                return link.open_direct(host, port, wait)
            except TimeoutError as exc:
                if not link.is_active():
                    raise ConnectionLost(f"SSH connection lost opening {label}") from exc
                raise httpcore.ConnectTimeout(f"cannot connect to {label}: timed out") from exc
            except Exception as exc:  # paramiko ChannelException / SSHException
                if not link.is_active():
                    raise ConnectionLost(f"SSH connection lost opening {label}") from exc
                text = str(exc) or type(exc).__name__
                if "Connect failed" in text or "connect failed" in text:
                    text = "connection refused (nothing listening there?)"
                raise httpcore.ConnectError(f"cannot connect to {label}: {text}") from exc

        chan = await asyncio.get_running_loop().run_in_executor(self._executor, open_channel)
        return SshNetworkStream(chan, self._executor, label, link)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not supported through SSH")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


_EXC_MAP: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    # most specific first
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _mapped() -> typing.Iterator[None]:
    """httpcore exceptions → the httpx ones callers catch (same mapping httpx itself uses)."""
    try:
        yield
    except (httpx.HTTPError, TransportError):
        raise
    except Exception as exc:
        for src, dst in _EXC_MAP:
            if isinstance(exc, src):
                raise dst(str(exc)) from exc
        raise


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: typing.AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _mapped():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        aclose = getattr(self._stream, "aclose", None)
        if aclose is not None:
            await aclose()


class SshHttpTransport(httpx.AsyncBaseTransport):
    """An httpx transport that sends every request through the SSH link."""

    def __init__(self, backend: SshNetworkBackend) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            network_backend=backend, max_connections=4, keepalive_expiry=5.0
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        req = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _mapped():
            resp = await self._pool.handle_async_request(req)
        assert isinstance(resp.stream, typing.AsyncIterable)
        return httpx.Response(
            status_code=resp.status,
            headers=resp.headers,
            stream=_ResponseStream(resp.stream),
            extensions=resp.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


__all__ = ["SshHttpTransport", "SshNetworkBackend", "SshNetworkStream"]
