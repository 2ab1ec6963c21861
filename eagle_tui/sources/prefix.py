"""The background summary of the lines before a log's in-memory tail, started by the session.

When the log tail opens a big file at its end (``LogOpened``), the session runs
:meth:`PrefixSummarizer.summarize` for it: an async iterator of ``LogPrefixCounted`` (how many
lines lie before the tail: the line numbers' base), ``SummaryProgress`` events (bytes done, ETA)
and, last, the summary's :class:`~eagle_tui.model.state.DashboardState`, which the session
merges with what it reduced since (:func:`eagle_tui.model.fold.prefix.merged`).

The work runs in a child process (``python -m eagle_tui.report.prefix``): the report's parallel
fold with its default number of workers, none of them forked from this threaded process, and
the dashboard's interpreter lock stays free for keys. Over SSH nothing is installed on the host:
the newlines are counted there (``head -c START | wc -l``), the bytes before the tail are
streamed through the transport into the child's stdin (one process: no parallel reads remote).
The child's state comes back pickled in a temporary file this process made (our own child:
trusted as our own memory).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable

from eagle_tui.model.events import Event, LogOpened, LogPrefixCounted, SummaryProgress
from eagle_tui.model.fold.prefix import PrefixSummary
from eagle_tui.transport.base import Transport, TransportError

MODULE = "eagle_tui.report.prefix"
_ERR_KEEP = 2000  # characters of the child's stderr kept for the error shown


def eta(done: int, total: int, elapsed: float) -> float | None:
    """Seconds left at the rate so far (``None`` before there is a rate)."""
    if done <= 0 or elapsed <= 0 or total <= done:
        return None if done <= 0 else 0.0
    return (total - done) * elapsed / done


class PrefixSummarizer:
    """Summarizes ``[0, start)`` of an opened log on ``transport``'s host (see the module)."""

    def __init__(self, transport: Transport, *, workers: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.transport = transport
        self.workers = workers
        self._clock = clock

    async def summarize(self, opened: LogOpened) -> AsyncIterator[Event | PrefixSummary]:
        remote = self.transport.host != ""
        fd, out = tempfile.mkstemp(prefix="eagle-tui-prefix-", suffix=".pickle")
        os.close(fd)
        argv = [sys.executable, "-m", MODULE, "-" if remote else opened.path,
                str(opened.start), out]
        if self.workers is not None and not remote:
            argv += ["--workers", str(self.workers)]
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE if remote else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        feeder: asyncio.Task[None] | None = None
        began = self._clock()
        try:
            if remote:
                lines = await self._remote_count(opened)
                if lines is not None:
                    yield LogPrefixCounted(opened.path, opened.host, lines)
                feeder = asyncio.create_task(self._stream(opened, proc))
            assert proc.stdout is not None and proc.stderr is not None
            err_task = asyncio.create_task(proc.stderr.read())
            done = False
            while line := await proc.stdout.readline():
                words = line.split()
                if words[:1] == [b"count"] and len(words) == 2 and not remote:
                    yield LogPrefixCounted(opened.path, opened.host, int(words[1]))
                elif words[:1] == [b"progress"] and len(words) == 3:
                    got = int(words[1])
                    yield SummaryProgress(opened.path, opened.host, got, opened.start,
                                          int(words[2]), eta(got, opened.start,
                                                             self._clock() - began))
                elif words == [b"done"]:
                    done = True
            code = await proc.wait()
            err = (await err_task).decode("utf-8", "replace").strip()[-_ERR_KEEP:]
            if feeder is not None:
                await feeder
            if code != 0 or not done:
                yield self._failed(opened, err or f"the summary exited with status {code}")
                return
            with open(out, "rb") as fh:
                state = pickle.load(fh)  # written by our own child, just now
            if not isinstance(state, PrefixSummary):
                yield self._failed(opened, "the summary returned no state")
                return
            yield state
        finally:
            if feeder is not None and not feeder.done():
                feeder.cancel()
                with contextlib.suppress(asyncio.CancelledError, TransportError, OSError):
                    await feeder
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
            with contextlib.suppress(OSError):
                os.unlink(out)

    @staticmethod
    def _failed(opened: LogOpened, why: str) -> SummaryProgress:
        return SummaryProgress(opened.path, opened.host, 0, opened.start, 0, None, True,
                               why.splitlines()[-1] if why else "failed")

    async def _remote_count(self, opened: LogOpened) -> int | None:
        """The newlines before the tail, counted on the host (no bytes cross the link)."""
        script = 'head -c "$1" -- "$2" | wc -l'
        try:
            res = await self.transport.run(["sh", "-c", script, "sh", str(opened.start),
                                            opened.path], timeout=120.0)
        except TransportError:
            return None
        words = res.stdout.split()
        return int(words[0]) if res.exit_code == 0 and words and words[0].isdigit() else None

    async def _stream(self, opened: LogOpened, proc: asyncio.subprocess.Process) -> None:
        """The bytes ``[0, start)`` through the transport into the child's stdin."""
        assert proc.stdin is not None
        left = opened.start
        it = aiter(self.transport.tail(opened.path, 0))
        try:
            async for chunk in it:
                if chunk.restarted:
                    break  # the file was replaced: the session drops this summary anyway
                data = chunk.data[:left]
                left -= len(data)
                proc.stdin.write(data)
                await proc.stdin.drain()
                if left <= 0:
                    break
        except (BrokenPipeError, ConnectionResetError):
            return  # the child failed: its status says why
        finally:
            aclose = getattr(it, "aclose", None)
            if aclose is not None:
                await aclose()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.close()


__all__ = ["MODULE", "PrefixSummarizer", "eta"]
