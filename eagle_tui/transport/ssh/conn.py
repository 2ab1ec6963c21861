"""The one SSH connection behind an :class:`~eagle_tui.transport.ssh.SshTransport`, kept alive.

It owns the current :class:`~.link.Link` and its keepalive thread, notices a dead link (from
the keepalive, or from any reader that saw the connection close), and runs a supervisor task that
reconnects with backoff: first at once, then 0.1 s doubling to 5 s, forever. Every change is
published as a :class:`~eagle_tui.model.events.ConnectionState` (``connecting``, ``connected``,
``reconnecting`` with the attempt and the last error, ``failed``, ``closed``) to every
:meth:`Connection.events` subscriber. Callers get the live link from :meth:`Connection.live`,
which waits for a reconnect (bounded or not). Host-key and authentication errors are final: the
state becomes ``failed`` and every later call raises the same error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from concurrent.futures import Executor

from eagle_tui.model.events import ConnectionState
from eagle_tui.transport.base import ConnectionLost, HostKeyError, TransportError
from eagle_tui.transport.ssh.config import SshTarget
from eagle_tui.transport.ssh.link import (
    Attempt,
    AuthError,
    Keepalive,
    Link,
    SshOptions,
    open_link,
)

log = logging.getLogger(__name__)

_BACKOFF_FIRST_S = 0.1
_BACKOFF_MAX_S = 5.0


def backoff_delay(attempt: int) -> float:
    """Seconds to wait before reconnect ``attempt`` (1-based): 0, 0.1, 0.2, 0.4, ... ≤ 5."""
    if attempt <= 1:
        return 0.0
    return float(min(_BACKOFF_MAX_S, _BACKOFF_FIRST_S * 2 ** (attempt - 2)))


class Connection:
    """The current link to one host, its state, and the reconnect loop."""

    def __init__(
        self, dest: str, target: SshTarget, options: SshOptions, executor: Executor
    ) -> None:
        self._dest = dest
        self._target = target
        self._options = options
        self._executor = executor
        self._link: Link | None = None
        self._keepalive: Keepalive | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._up: asyncio.Event | None = None
        self._dead: asyncio.Event | None = None
        self._connect_lock: asyncio.Lock | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._fatal: TransportError | None = None
        self._closed = False
        self._attempt = 0
        self._last_error = ""
        self._state = ConnectionState(host=dest, state="connecting", t=time.time())
        self._subscribers: list[asyncio.Queue[ConnectionState | None]] = []
        self._attempts: set[Attempt] = set()  # in flight in worker threads; close() aborts them

    @property
    def state(self) -> ConnectionState:
        return self._state

    async def connect(self, *, retry: bool = False) -> None:
        """Open the first connection; raises its error (host key, auth, unreachable) as is.

        With ``retry=True`` an error that may go away (host unreachable, sshd not up yet) still
        raises, but the transport keeps reconnecting in the background and calls wait for it —
        what a command watching a box that is still booting wants. Host-key and authentication
        errors are never retried. Later losses are handled by the supervisor; calling this again
        is a no-op.
        """
        self._bind_loop()
        assert self._connect_lock is not None
        async with self._connect_lock:
            if self._link is not None or self._supervisor is not None:
                return
            if self._closed:
                raise TransportError(f"SSH connection to {self._dest} is closed")
            try:
                link = await asyncio.get_running_loop().run_in_executor(
                    self._executor, self._open_blocking
                )
            except TransportError as exc:
                self._last_error = str(exc)
                fatal = isinstance(exc, HostKeyError | AuthError)
                if fatal:
                    self._fatal = exc
                if retry and not fatal:
                    assert self._dead is not None
                    self._attempt = 1
                    self._publish("reconnecting", attempt=1, error=str(exc))
                    self._dead.set()
                    self._supervisor = asyncio.create_task(
                        self._supervise(), name=f"ssh {self._dest}"
                    )
                else:
                    self._publish("failed", error=str(exc))
                raise
            self._install(link)
            self._supervisor = asyncio.create_task(self._supervise(), name=f"ssh {self._dest}")

    def events(self) -> AsyncIterator[ConnectionState]:
        """Current state first, then every change; ends when the transport is closed."""
        queue: asyncio.Queue[ConnectionState | None] = asyncio.Queue()
        queue.put_nowait(self._state)
        if self._closed:
            queue.put_nowait(None)
        else:
            self._subscribers.append(queue)
        return _drain(queue)

    def _bind_loop(self) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._up = asyncio.Event()
            self._dead = asyncio.Event()
            self._connect_lock = asyncio.Lock()

    def _open_blocking(self) -> Link:
        """Connect + host key + auth, then one exec: sshd sets TCP_NODELAY on the first exec,
        and HTTP through a direct-tcpip channel stalls on Nagle's algorithm until it has. All of
        it within one :class:`~.link.Attempt` (``connect_timeout``)."""
        known = self._options.known_hosts()
        attempt = Attempt(self._options.connect_timeout)
        self._attempts.add(attempt)
        try:
            if self._closed:
                attempt.cancel()
            link = open_link(self._target, self._options, known, attempt)
            try:
                chan = link.open_session(attempt.left("the first channel"))
                chan.exec_command("true")  # (output unread: no framing needed)
                if not chan.status_event.wait(attempt.left("the first command")):
                    raise TransportError(f"no answer within {attempt.seconds:g} s")
                chan.close()
            except Exception as exc:
                link.close()
                raise TransportError(f"{self._dest}: cannot run commands: {exc}") from exc
            return link
        finally:
            self._attempts.discard(attempt)

    def _install(self, link: Link) -> None:
        assert self._up is not None and self._dead is not None
        self._link = link
        self._attempt = 0
        self._dead.clear()
        self._keepalive = Keepalive(
            link,
            self._options.keepalive_interval,
            self._options.keepalive_timeout,
            lambda reason: self.on_lost(link, reason),
        )
        self._keepalive.start()
        self._up.set()
        self._publish("connected")

    def on_lost(self, link: Link, reason: str) -> None:
        """Called from any thread when ``link`` looks dead."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._link_dead, link, reason)

    def _link_dead(self, link: Link, reason: str) -> None:
        if link is not self._link or self._closed:
            return
        assert self._up is not None and self._dead is not None
        log.info("ssh %s: connection lost (%s)", self._dest, reason)
        self._link = None
        self._up.clear()
        self._last_error = reason
        if self._keepalive is not None:
            self._keepalive.stop()
            self._keepalive = None
        with contextlib.suppress(RuntimeError):
            self._executor.submit(link.close)
        self._dead.set()

    async def _supervise(self) -> None:
        assert self._dead is not None
        loop = asyncio.get_running_loop()
        while not self._closed:
            await self._dead.wait()
            while not self._closed and self._link is None:
                self._attempt += 1
                self._publish("reconnecting", attempt=self._attempt, error=self._last_error)
                await asyncio.sleep(backoff_delay(self._attempt))
                try:
                    link = await loop.run_in_executor(self._executor, self._open_blocking)
                except (HostKeyError, AuthError) as exc:
                    self._fatal = exc
                    self._last_error = str(exc)
                    self._publish("failed", attempt=self._attempt, error=str(exc))
                    assert self._up is not None
                    self._up.set()  # wake waiters so they see the fatal error
                    return
                except TransportError as exc:
                    self._last_error = str(exc)
                    continue
                if self._closed:
                    link.close()
                    return
                self._install(link)

    async def live(self, wait: float | None) -> Link:
        """The current link, waiting up to ``wait`` s (``None``: forever) for a reconnect."""
        self._bind_loop()
        if self._link is None and self._supervisor is None and self._fatal is None:
            await self.connect()
        assert self._up is not None
        while True:
            if self._fatal is not None:
                raise self._fatal
            if self._closed:
                raise TransportError(f"SSH connection to {self._dest} is closed")
            link = self._link
            if link is not None and link.is_active():
                return link
            if link is not None:  # died but nobody noticed yet
                self._link_dead(link, "connection closed")
            try:
                async with asyncio.timeout(wait):  # (not wait_for: it can swallow a cancel)
                    await self._up.wait()
            except TimeoutError as exc:
                raise ConnectionLost(
                    f"{self._dest}: reconnecting (attempt {self._attempt}, last error: "
                    f"{self._last_error or 'none'})"
                ) from exc

    def _publish(self, state: str, *, attempt: int = 0, error: str = "") -> None:
        self._state = ConnectionState(
            host=self._dest, state=state, t=time.time(), attempt=attempt, error=error
        )
        for queue in self._subscribers:
            queue.put_nowait(self._state)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for attempt in list(self._attempts):  # a handshake stalled in a worker thread ends now
            attempt.cancel()
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._supervisor
        link, self._link = self._link, None
        if self._keepalive is not None:
            self._keepalive.stop()
        if link is not None:
            await asyncio.get_running_loop().run_in_executor(self._executor, link.close)
        self._publish("closed")
        for queue in self._subscribers:
            queue.put_nowait(None)
        self._subscribers.clear()
        if self._up is not None:
            self._up.set()  # waiters in live() wake up and see that it is closed

async def _drain(queue: asyncio.Queue[ConnectionState | None]) -> AsyncIterator[ConnectionState]:
    while True:
        item = await queue.get()
        if item is None:
            return
        yield item


__all__ = ["Connection", "backoff_delay"]
