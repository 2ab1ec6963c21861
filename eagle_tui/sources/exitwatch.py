"""Wait for a local process to exit without polling it: its pidfd in the event loop.

Why: the process watcher checked liveness every 0.2 s so that a crash shows within a second,
which woke the session thread five times a second for as long as the server ran, busy or idle.
A pidfd (Linux 5.3+) becomes readable the moment its process exits (as a zombie too), so the
watcher sleeps until then or its next tree sample and reports the exit at once. Where there is
no pidfd (another kernel or OS, a loop without readers) :meth:`ExitWatch.watch` gives ``None``
and the watcher polls as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator


class ExitWatch:
    """The exit of one process, as an awaitable: :meth:`wait` returns when it exits or when
    its timeout passes. Open it while the process is known to be alive (see ``watch``)."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self._fd = fd
        self._loop = loop
        self._waiter: asyncio.Future[None] | None = None
        self.exited = False

    @classmethod
    def watch(cls, pid: int) -> ExitWatch | None:
        """A watch on ``pid`` in the running loop, or ``None`` where pidfds are not to be had.

        A pid reused between the caller's last look and this call would be watched instead of
        the process meant: callers confirm the process is still theirs after opening (the
        watcher's liveness check compares its start time), as the pid cannot change hands
        while that process lives.
        """
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is None:
            return None
        try:
            fd = pidfd_open(pid)
        except OSError:  # gone already, or no pidfds here (ENOSYS): the caller polls
            return None
        loop = asyncio.get_running_loop()
        watch = cls(fd, loop)
        try:
            loop.add_reader(fd, watch._ready)
        except (NotImplementedError, OSError, ValueError):  # (a loop that cannot watch fds)
            os.close(fd)
            return None
        return watch

    def _ready(self) -> None:
        # readable stays readable: one call is the exit, later ones would only spin the loop
        self.exited = True
        self._loop.remove_reader(self._fd)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def wait(self, timeout: float) -> None:
        """Until the process exits or ``timeout`` seconds pass, whichever comes first."""
        if self.exited:
            return
        waiter = self._waiter = self._loop.create_future()
        timer = self._loop.call_later(max(0.0, timeout), _settle, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None

    def close(self) -> None:
        if self._fd < 0:
            return
        if not self.exited:
            with contextlib.suppress(RuntimeError, ValueError, OSError):  # (a closed loop)
                self._loop.remove_reader(self._fd)
        os.close(self._fd)
        self._fd = -1


def _settle(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


@contextlib.contextmanager
def watching(pid: int) -> Iterator[ExitWatch | None]:
    """:meth:`ExitWatch.watch` for the block, closed after it (``None``: poll instead)."""
    watch = ExitWatch.watch(pid)
    try:
        yield watch
    finally:
        if watch is not None:
            watch.close()


async def pause(watch: ExitWatch | None, timeout: float, poll: float) -> None:
    """Sleep ``timeout`` seconds, ended early by the exit; without a watch, or once it fired
    while the caller still sees the process (a zombie's status not yet read), ``poll`` at most
    so that the caller's own liveness check runs."""
    if watch is None or watch.exited:
        await asyncio.sleep(max(0.0, min(poll, timeout)))
    else:
        await watch.wait(timeout)


__all__ = ["ExitWatch", "pause", "watching"]
