"""Hand the output of one SSH exec channel to asyncio: a reader thread and a bounded queue.

paramiko blocks, so each streaming channel gets one daemon thread that waits on the channel's
file descriptor (paramiko's or-pipe over stdout *and* stderr), drains stderr before stdout on each
wake-up (to keep tail's "file truncated" notice as close as possible to the data it concerns) and
posts chunks of up to 64 KiB into an ``asyncio.Queue`` with ``call_soon_threadsafe``. Chunks, not
lines: at 10,000 lines/s that is a few hundred hand-overs a second instead of ten thousand.

Backpressure: the thread takes a slot from a semaphore before each hand-over and the consumer
gives it back, so a consumer that falls behind (catching up on a 2 GB log) stops the thread, which
stops reading the channel, which lets SSH's window close and the remote ``tail`` block. Memory
stays bounded at ``_MAX_QUEUED`` chunks.

More in docs/architecture.md, "Module notes", ``transport/ssh/stream``.
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Literal

from eagle_tui.transport.base import ConnectionLost
from eagle_tui.transport.ssh.frame import Deframer, Framed
from eagle_tui.transport.ssh.link import Link

_CHUNK = 65536
_MAX_QUEUED = 256
_POLL_S = 0.5
# A followed log's remote ``tail`` writes each line as it comes, and sshd sends each as a
# packet: handed over one by one, 200 lines/s were 200 wake-ups and parses a second on the
# session thread. A follow's stream gathers what arrives within this long into one chunk (the
# screen shows it at its next repaint, on a 0.5 s grid, either way).
COALESCE_S = 0.1


@dataclass(frozen=True, slots=True)
class Chunk:
    """``kind`` "out"/"err" carry ``data``; "exit" carries ``code``; "lost" carries ``reason``."""

    kind: Literal["out", "err", "exit", "lost"]
    data: bytes = b""
    code: int = 0
    reason: str = ""


class ChannelStream:
    """Async iterator of :class:`Chunk` read from one exec channel by a dedicated thread."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        link: Link,
        chan: Any,
        executor: Executor,
        on_lost: Callable[[Link, str], None],
        framed: Framed,
        coalesce: float = 0.0,
    ) -> None:
        self._loop = loop
        self._coalesce = coalesce
        self._link = link
        self._chan = chan
        self._executor = executor
        self._on_lost = on_lost
        self._queue: asyncio.Queue[Chunk] = asyncio.Queue()
        self._slots = threading.Semaphore(_MAX_QUEUED)
        self._stop = threading.Event()
        self._done = False
        self._deframer = Deframer(framed)
        self._ready: list[Chunk] = []  # deframed chunks to hand out before the next read
        self._thread = threading.Thread(
            target=self._read, name=f"ssh-read {link.target.dest}", daemon=True
        )

    @classmethod
    async def open(
        cls,
        link: Link,
        command: Framed,
        executor: Executor,
        on_lost: Callable[[Link, str], None],
        timeout: float,
        coalesce: float = 0.0,
    ) -> ChannelStream:
        """Open a session channel, start the framed ``command`` on it and begin reading;
        ``coalesce``: stdout that arrives within that long is handed over as one chunk."""
        loop = asyncio.get_running_loop()

        def start() -> Any:
            chan = link.open_session(timeout)
            try:
                # the bytes the user gave: an argv's undecodable byte is a surrogate in Python,
                # which paramiko's strict UTF-8 refused (an internal error out of launch --ssh)
                chan.exec_command(command.text.encode("utf-8", "surrogateescape"))
            except Exception:
                chan.close()
                raise
            return chan

        try:
            chan = await loop.run_in_executor(executor, start)
        except ConnectionLost:
            raise
        except Exception as exc:
            if not link.is_active():
                on_lost(link, str(exc) or type(exc).__name__)
                raise ConnectionLost(f"connection to {link.target.dest} lost: {exc}") from exc
            raise
        stream = cls(loop, link, chan, executor, on_lost, command, coalesce)
        stream._thread.start()
        return stream

    def __aiter__(self) -> ChannelStream:
        return self

    async def __anext__(self) -> Chunk:
        while not self._ready:
            if self._done:
                raise StopAsyncIteration
            item = await self._queue.get()
            self._slots.release()
            self._ready = self._deframe(item)
        return self._ready.pop(0)

    def _deframe(self, item: Chunk) -> list[Chunk]:
        """``item`` without the framing: noise dropped, the exit carrying the command's status."""
        if item.kind == "out":
            data = self._deframer.out(item.data)
            return [Chunk("out", data)] if data else []
        if item.kind == "err":
            data = self._deframer.err(item.data)
            return [Chunk("err", data)] if data else []
        self._done = True
        if item.kind == "lost":
            return [item]
        out, err, code = self._deframer.finish(item.code, self._link.target.dest)
        return [*([Chunk("out", out)] if out else []), *([Chunk("err", err)] if err else []),
                Chunk("exit", code=code)]

    def send(self, data: bytes) -> None:
        """Write to the command's stdin (blocking; only for small writes)."""
        self._chan.sendall(data)

    def send_eof(self) -> None:
        """Close the command's stdin (it reads to the end of what was sent)."""
        self._chan.shutdown_write()

    async def aclose(self) -> None:
        """Stop reading and close the channel (off the loop: a close can block on a hung link)."""
        self._stop.set()
        self._done = True
        chan = self._chan
        with contextlib.suppress(RuntimeError):  # executor already shut down at exit
            self._executor.submit(chan.close)

    # ---------------------------------------------------------------- reader thread

    def _push(self, item: Chunk) -> bool:
        while not self._slots.acquire(timeout=_POLL_S):
            if self._stop.is_set():
                return False
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self._stop.set()
            return False
        return True

    def _read(self) -> None:
        chan = self._chan
        sel = selectors.DefaultSelector()
        held = bytearray()  # stdout gathered since ``since`` (``coalesce``)
        since = 0.0
        try:
            sel.register(chan, selectors.EVENT_READ)
            while not self._stop.is_set():
                if chan.recv_stderr_ready():
                    # after the stdout held: tail's "file truncated" keeps its place in the data
                    if not self._release(held) or not self._push(
                            Chunk("err", chan.recv_stderr(_CHUNK))):
                        return
                    continue
                if chan.recv_ready():
                    data = chan.recv(_CHUNK)
                    if data:
                        if not held:
                            since = time.monotonic()
                        held += data
                        if (not self._coalesce or len(held) >= _CHUNK) \
                                and not self._release(held):
                            return
                    continue
                ended = chan.eof_received or chan.closed
                if held:
                    wait = since + self._coalesce - time.monotonic()
                    if not ended and wait > 0:
                        sel.select(wait)
                    elif not self._release(held):
                        return
                    continue
                if ended:
                    self._finish()
                    return
                sel.select(_POLL_S)
        except Exception as exc:  # a paramiko error on a dying connection
            self._lost(str(exc) or type(exc).__name__)
        finally:
            sel.close()

    def _release(self, held: bytearray) -> bool:
        """Hand over the stdout ``held`` as one chunk (emptying it); False: stop reading."""
        if not held:
            return True
        data = bytes(held)
        held.clear()
        return self._push(Chunk("out", data))

    def _finish(self) -> None:
        chan = self._chan
        # sshd sends EOF when the pipes close and the exit status when the process is reaped;
        # wait for the status (or for the channel/connection to close).
        while not chan.status_event.wait(_POLL_S):
            if self._stop.is_set():
                return
        # drain anything that raced in between (stderr after stdout's EOF)
        while chan.recv_stderr_ready():
            if not self._push(Chunk("err", chan.recv_stderr(_CHUNK))):
                return
        code = chan.exit_status
        if code == -1 and not self._link.is_active():
            self._lost("connection closed")
            return
        self._push(Chunk("exit", code=code))

    def _lost(self, reason: str) -> None:
        self._on_lost(self._link, reason)
        self._push(Chunk("lost", reason=reason))


__all__ = ["ChannelStream", "Chunk"]
