"""The local transport: files, subprocesses and a plain httpx client on this machine.

``tail`` is a poll loop rather than inotify (stdlib only, the same on every filesystem), which
backs off while the file is quiet and returns to its fast poll with the next byte. It mirrors
``tail -F``: it waits for a missing file, restarts at byte 0 when the file is truncated or
replaced, refuses what is not a regular file, and reads in bounded chunks.

More in docs/architecture.md, "Module notes", ``transport/local``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import IO, TYPE_CHECKING

from eagle_tui.files import os_error_message
from eagle_tui.model.views.ticks import GRID_LEAD_S

from .base import (
    CommandNotFound,
    NotRegularFile,
    RunResult,
    TailChunk,
    TransportError,
    check_range,
    http_limits,
)
from .files import open_regular, pread_regular

if TYPE_CHECKING:  # httpx is imported when a URL is polled, not before the first frame
    import httpx

DEFAULT_POLL_S = 0.05  # a missing file, the first seconds of a quiet one, a flood's next read
# A file that grows steadily is read on a grid of the monotonic clock, a little before each
# point (the session's batch interval and a thread hop): every read then lands just before one of
# the dashboard's repaints (ui/frames.py, on the same clock), and a faster poll only added
# wake-ups, each a read, a batch, a state and a message that no frame showed.
STREAM_POLL_S = 0.5  # the log's repaint interval (FRAME_INTERVAL)
STREAM_LEAD_S = GRID_LEAD_S  # (the session's 1 s ticks come then too: model/views/ticks)
# bytes a stream would bring in one grid step at a rate that is a flood (about a thousand lines
# a second): it is read again after the poll, as fast as before the grid
BURST_BYTES = 1 << 16
IDLE_POLL_S = 0.1  # poll interval once the file has been quiet for IDLE_AFTER_S
IDLE_AFTER_S = 2.0
# ... and once it has been quiet for QUIET_AFTER_S, on the stream grid: a line read between two
# of the log's repaints waited for the next one anyway; past SILENT_AFTER_S (a server with no
# request for a minute), on every SILENT_STEPS-th point of it
QUIET_AFTER_S = 10.0
SILENT_AFTER_S = 60.0
SILENT_STEPS = 2
# A read of fewer bytes than this into a file quiet for IDLE_AFTER_S leaves it quiet: an idle
# server's log grows by the access lines of the dashboard's own polls every few seconds, and
# each began the fast polls again (a poll every 50-100 ms for seconds, for a line or two)
TRICKLE_BYTES = 4096
DEFAULT_CHUNK = 1 << 20
_STDERR_KEEP = 20  # lines of a streamed command's stderr kept for its error message


def _identity(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def file_error(path: str, exc: OSError) -> TransportError:
    """The one-line error of a failed local file read, the same for every reader."""
    return TransportError(os_error_message(path, exc))


class LocalTransport:
    """:class:`~eagle_tui.transport.base.Transport` for the machine eagle-tui runs on."""

    def __init__(self, *, poll_interval: float = DEFAULT_POLL_S, chunk_size: int = DEFAULT_CHUNK,
                 stream_interval: float | None = None):
        if poll_interval <= 0 or chunk_size <= 0:
            raise ValueError("poll_interval and chunk_size must be positive")
        self.poll_interval = poll_interval
        # a headless reader (wait, launch, a report) reads at the poll pace throughout: it prints
        # a line the moment it is read; the dashboard asks for its repaint grid (STREAM_POLL_S)
        self.stream_interval = max(stream_interval or poll_interval, poll_interval)
        self.chunk_size = chunk_size
        self._procs: set[asyncio.subprocess.Process] = set()
        # path → identity of the file its last tail read: a tail started again at an offset
        # (a source retried) tells a replaced file from a truncated or appended one
        self._seen: dict[str, tuple[int, int]] = {}

    @property
    def host(self) -> str:
        return ""

    # ------------------------------------------------------------------ commands
    async def run(self, argv: list[str], timeout: float = 10.0, *,
                  stdin: bytes | None = None) -> RunResult:
        proc = await self._spawn(argv, stdout=asyncio.subprocess.PIPE, stdin=stdin is not None)
        try:
            # asyncio.timeout, not wait_for: a cancelled wait_for waits for the cancelled
            # communicate() to finish, which was seen to never happen (a stopped session hung)
            async with asyncio.timeout(timeout):
                out, err = await proc.communicate(stdin)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise TransportError(f"{argv[0]} did not finish within {timeout:g} s") from None
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()  # the child must not outlive what asked for it
            raise
        finally:
            self._procs.discard(proc)
        return RunResult(proc.returncode if proc.returncode is not None else -1, out, err)

    async def _spawn(self, argv: list[str], stdout: int,
                     stdin: bool = False) -> asyncio.subprocess.Process:
        if not argv:
            raise TransportError("empty command")
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
                stdout=stdout,
                stderr=asyncio.subprocess.PIPE,
                limit=DEFAULT_CHUNK,
            )
        except FileNotFoundError:
            raise CommandNotFound(f"{argv[0]}: command not found") from None
        except PermissionError as exc:
            raise TransportError(f"{argv[0]}: {exc.strerror or exc}") from None
        self._procs.add(proc)
        return proc

    async def stream_lines(self, argv: list[str], *, stderr: bool = False
                           ) -> AsyncIterator[bytes]:
        proc = await self._spawn(argv, stdout=asyncio.subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        stderr_tail: deque[bytes] = deque(maxlen=_STDERR_KEEP)
        # both streams' lines meet here (None: one of them ended)
        lines: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=256)

        async def pump(stream: asyncio.StreamReader, keep: bool) -> None:
            while True:
                try:
                    line = await stream.readline()
                except ValueError:  # a line over the stream limit: skip it, keep streaming
                    await stream.read(DEFAULT_CHUNK)
                    continue
                except OSError:
                    break
                if not line:
                    break
                line = line.rstrip(b"\r\n")
                if keep:
                    stderr_tail.append(line)
                if not keep or stderr:
                    await lines.put(line)
            await lines.put(None)

        # stderr is read concurrently either way: a chatty command must not block on a full pipe
        tasks = [asyncio.create_task(pump(proc.stdout, False)),
                 asyncio.create_task(pump(proc.stderr, True))]
        try:
            ended = 0
            while ended < 2:
                line = await lines.get()
                if line is None:
                    ended += 1
                else:
                    yield line
            code = await proc.wait()
            if code != 0:
                detail = b" ".join(stderr_tail).decode("utf-8", "replace").strip()
                raise TransportError(
                    f"{argv[0]} exited with status {code}" + (f": {detail}" if detail else "")
                )
        finally:
            for task in tasks:
                task.cancel()
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
            self._procs.discard(proc)

    # ------------------------------------------------------------------ files
    async def read_file(self, path: str, max_bytes: int = 1 << 20) -> bytes:
        def read() -> bytes:
            with open_regular(path) as fh:
                data = fh.read(max_bytes + 1)
            if len(data) > max_bytes:
                raise TransportError(f"{path}: larger than {max_bytes} bytes")
            return data

        try:
            return await asyncio.to_thread(read)
        except NotRegularFile:
            raise
        except OSError as exc:
            raise file_error(path, exc) from None

    async def read_range(self, path: str, offset: int, length: int,
                         timeout: float = 10.0) -> bytes:
        """One ``os.pread`` in a worker thread: the event loop never waits on the disk."""
        check_range(offset, length)

        try:
            # the one opener: a scrollback whose log became a FIFO must not block its thread
            # (the app waits for it to exit: ``q`` hung)
            return await asyncio.wait_for(
                asyncio.to_thread(pread_regular, path, offset, length), timeout)
        except TimeoutError:
            raise TransportError(f"{path}: read did not finish within {timeout:g} s") from None
        except NotRegularFile:
            raise
        except OSError as exc:
            raise file_error(path, exc) from None

    async def tail(self, path: str, offset: int = 0) -> AsyncIterator[TailChunk]:
        if offset < 0:
            raise ValueError("offset must be >= 0")
        fh: IO[bytes] | None = None
        ident: tuple[int, int] | None = self._seen.get(path) if offset > 0 else None
        restarted = ""
        announced_eof = False
        burst = 0  # bytes read since the last wait: a flood's reads are chunks and a remainder
        waited_at = time.monotonic()  # when the last wait began
        quiet_since: float | None = None  # monotonic time of the first poll that found nothing
        try:
            while True:
                if fh is None:
                    try:
                        fh = open_regular(path)  # held across yields, closed below
                    except FileNotFoundError:
                        waited_at = time.monotonic()
                        await asyncio.sleep(self.poll_interval)
                        continue
                    except PermissionError:
                        raise TransportError(f"{path}: permission denied") from None
                    except IsADirectoryError:
                        raise TransportError(f"{path}: is a directory") from None
                    st = os.fstat(fh.fileno())
                    if ident is not None and _identity(st) != ident:
                        restarted, offset = "replaced", 0
                    elif st.st_size < offset:
                        restarted, offset = "truncated", 0
                    ident = _identity(st)
                    self._remember(path, ident)
                    fh.seek(offset)
                data = fh.read(self.chunk_size)
                if data:
                    if quiet_since is not None and (len(data) >= TRICKLE_BYTES or
                                                    time.monotonic() - quiet_since < IDLE_AFTER_S):
                        quiet_since = None
                    offset += len(data)
                    burst += len(data)
                    at_eof = len(data) < self.chunk_size
                    read_at = time.monotonic()
                    yield TailChunk(data, offset, restarted, at_eof)
                    restarted = ""
                    announced_eof = at_eof
                    if not at_eof:
                        # a turn for the loop between chunks of a long catch-up: a 2 GB file
                        # must not hold off --duration, a key or Ctrl-C until its end
                        await asyncio.sleep(0)
                        continue
                    # a short read is the end for now: wait before the next read instead of
                    # reading again at once for nothing (the empty read and the stat after it
                    # were half the tail's cost)
                    now = time.monotonic()
                    delay = self._stream_delay(burst, now - waited_at, now, now - read_at)
                    burst, waited_at = 0, now
                    await asyncio.sleep(delay)
                    continue
                if restarted or not announced_eof:
                    # the consumer learns it caught up (or that the file restarted) even when
                    # there is nothing new to hand over
                    yield TailChunk(b"", offset, restarted, True)
                    restarted = ""
                    announced_eof = True
                # at EOF: has the path been truncated or replaced?
                try:
                    st = os.stat(path)
                except FileNotFoundError:
                    # deleted (or mid-rotation): keep the old handle, a writer may still append
                    await asyncio.sleep(self.poll_interval)
                    continue
                if _identity(st) != ident:
                    fh.close()
                    fh = None
                    continue  # reopen: the identity check above reports "replaced"
                if st.st_size < offset:
                    restarted, offset = "truncated", 0
                    fh.seek(0)
                    continue
                now = waited_at = time.monotonic()
                if quiet_since is None:
                    quiet_since = now
                await asyncio.sleep(self._poll_delay(now - quiet_since, now))
        finally:
            if fh is not None:
                fh.close()

    def _remember(self, path: str, ident: tuple[int, int]) -> None:
        if path not in self._seen and len(self._seen) >= 64:
            self._seen.pop(next(iter(self._seen)))
        self._seen[path] = ident

    def _stream_delay(self, read: int, took: float, now: float, used: float = 0.0) -> float:
        """The wait after a short read: the next point of the stream grid (``STREAM_LEAD_S``
        before each multiple of ``stream_interval``), never sooner than the poll interval. A
        flood (``read`` bytes since the last wait began, ``took`` seconds ago, at a rate that
        fills ``BURST_BYTES`` in a grid step) is read again a poll interval after the last read
        began, less the ``used`` seconds its consumer already took: a flood's lines are parsed
        for longer than a poll, and waiting a poll more after each chunk doubled its lag."""
        rate = read / max(took, self.poll_interval)
        if rate * self.stream_interval >= BURST_BYTES or self.stream_interval <= self.poll_interval:
            return max(0.0, self.poll_interval - used)
        return self._grid_delay(now)

    def _grid_delay(self, now: float, steps: int = 1) -> float:
        """The wait until the next point of the stream grid (of every ``steps``-th point) at
        least a poll interval away."""
        step = self.stream_interval * steps
        due = math.ceil((now + self.poll_interval + STREAM_LEAD_S) / step) * step - STREAM_LEAD_S
        return due - now

    def _poll_delay(self, quiet_s: float, now: float) -> float:
        """The wait before the next poll of a file that has had nothing new for ``quiet_s``."""
        if quiet_s >= QUIET_AFTER_S and self.stream_interval > self.poll_interval:
            return self._grid_delay(now, SILENT_STEPS if quiet_s >= SILENT_AFTER_S else 1)
        if quiet_s >= IDLE_AFTER_S:
            return max(IDLE_POLL_S, self.poll_interval)
        return self.poll_interval

    # ------------------------------------------------------------------ http
    def http_client(self, base_url: str, timeout: float) -> httpx.AsyncClient:
        # trust_env=False: an HTTP(S)_PROXY in the environment must not capture 127.0.0.1 traffic
        import httpx

        return httpx.AsyncClient(base_url=base_url, timeout=timeout, trust_env=False,
                                 limits=http_limits())

    async def close(self) -> None:
        for proc in list(self._procs):
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        self._procs.clear()


__all__ = ["LocalTransport"]
