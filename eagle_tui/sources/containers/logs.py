"""A container's log as the log source: ``logs --follow --timestamps`` through its CLI.

The lines of both streams (engines log to stderr) go, stamp and all, to the same line framer and
parser as a followed file's (:class:`~eagle_tui.model.ingest.logfeed.LogFeed`); the log
normalization strips the stamp. Each line's stamp and content feed a
:class:`~eagle_tui.model.ingest.resume.ResumeWindow`, so a dropped connection or a killed CLI
(the source fails, the session retries it) and a container that stops and runs again are
followed on from ``--since`` with nothing handed out twice or lost. A line the CLI says itself
(no stamp) is kept for its error message, never shown as the log. When the container is gone
(a ``--rm`` container that exited) the source ends: what was read stays in the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO

from eagle_tui.model.containers.states import RESTARTED
from eagle_tui.model.events import Event, LogRestarted
from eagle_tui.model.ingest.framing import TAIL_LINES, LineFramer
from eagle_tui.model.ingest.logfeed import LogFeed
from eagle_tui.model.ingest.normalize import split_stamp, stamp_text
from eagle_tui.model.ingest.resume import ResumeWindow, StampOrder
from eagle_tui.sources.containers.cli import CLIS, ContainerCli, NoSuchContainer, locate
from eagle_tui.transport.base import Transport, TransportError

CAUGHT_UP_GAP_S = 0.05  # no line within this long: what the log held so far is in
STATE_POLL_S = 1.0  # how often a stopped container is asked whether it runs again
READ_AHEAD = 8192  # lines read ahead of the parser at most
_NOTES = 20  # the CLI's own lines kept


def started_at(doc: dict[str, Any]) -> str:
    """The container's run, as its ``inspect`` names it (a restart changes it)."""
    state = doc.get("State")
    value = state.get("StartedAt") if isinstance(state, dict) else None
    return value if isinstance(value, str) else ""


def is_running(doc: dict[str, Any]) -> bool:
    state = doc.get("State")
    return isinstance(state, dict) and state.get("Running") is True


class ContainerLog:
    """Source of log-derived events for one container (``name`` defaults to ``"log"``)."""

    def __init__(self, transport: Transport, container: str, *, cli: str = "auto",
                 name: str = "log", catchup_lines: int = TAIL_LINES,
                 caught_up_gap: float = CAUGHT_UP_GAP_S, poll: float = STATE_POLL_S,
                 clock: Callable[[], float] = time.time) -> None:
        from eagle_tui.model.ingest.parser import LogParser  # loaded only when a log is followed

        self.name = name
        self.transport = transport
        self.container = container
        self.choice = cli
        self.caught_up_gap = caught_up_gap
        self.poll = poll
        self._clock = clock
        self.feed = LogFeed(LogParser(host=transport.host),
                            LineFramer(0, tail_lines=catchup_lines))
        self.window = ResumeWindow()
        self.cli: ContainerCli | None = None
        self.run_id: str | None = None  # the StartedAt of the run followed (None: not asked)
        self.first_stamp: int | None = None  # the stamp of the run's first line read
        self.lines = 0  # lines handed to the parser
        self.follows = 0  # ``logs`` commands started (the first, then each resume)
        self.notes: deque[str] = deque(maxlen=_NOTES)

    async def events(self) -> AsyncIterator[Event | list[Event]]:
        feed = self.feed
        feed.rewind()  # every (re)attach starts by catching up on what is already there
        if self.cli is None and self.choice in CLIS:  # known (resolved): no inspect first
            self.cli = ContainerCli(self.transport, self.choice)
        elif self.cli is None:
            self.cli, doc = await locate(self.transport, self.container, self.choice)
            self.run_id = started_at(doc)
        while True:
            try:
                async for evs in self._follow(self.cli):
                    yield evs
            except TransportError:
                if await self._gone(self.cli):
                    break
                raise  # the session retries: the next follow resumes from the window
            if evs := feed.caught_up():
                yield evs
            again = await self._next_run(self.cli)
            if again is None:
                break
            run = started_at(again)
            if self._restarted(run):  # it stopped and runs again: a new run of the server
                self.first_stamp = None
                if evs := feed.restart():
                    yield evs
                yield LogRestarted(RESTARTED, self.transport.host, self._clock())
            else:  # the CLI ended but the run goes on: not again at once
                await asyncio.sleep(self.poll)
            self.run_id = run
            feed.rewind()
        if evs := feed.caught_up():  # gone: what was read stays
            yield evs

    def _restarted(self, run: str) -> bool:
        """Whether the container's run ``run`` (its StartedAt) is another than the one read:
        another StartedAt than the one seen, or (never asked) one after the run's first line."""
        if self.run_id is not None:
            return run != self.run_id
        started = split_stamp(run.encode() + b" ")
        return started is not None and self.first_stamp is not None \
            and started[0] > self.first_stamp

    async def _gone(self, cli: ContainerCli) -> bool:
        try:
            await cli.inspect(self.container)
        except NoSuchContainer:
            return True
        except TransportError:
            return False
        return False

    async def _next_run(self, cli: ContainerCli) -> dict[str, Any] | None:
        """Wait until the container runs again (its inspect), or ``None`` once it is gone."""
        while True:
            try:
                doc = await cli.inspect(self.container)
            except NoSuchContainer:
                return None
            if is_running(doc):
                return doc
            await asyncio.sleep(self.poll)

    async def _follow(self, cli: ContainerCli) -> AsyncIterator[list[Event]]:
        """One ``logs --follow`` from the window's resume point, until the CLI exits."""
        since = self.window.since()
        argv = cli.logs_argv(self.container, since=None if since is None else stamp_text(since))
        self.window.reread()
        self.follows += 1
        feed, framer = self.feed, self.feed.framer
        reader = _Reader(cli.transport.stream_lines(argv, stderr=True))
        task = asyncio.create_task(reader.run())
        try:
            while True:
                if not reader.lines and not reader.ended:
                    reader.more.clear()
                    if framer.catching_up and framer.held[1] and self.caught_up_gap > 0:
                        try:
                            await asyncio.wait_for(reader.more.wait(), self.caught_up_gap)
                        except TimeoutError:  # a pause: the backlog is in
                            if evs := feed.caught_up():
                                yield evs
                            continue
                    else:
                        await reader.more.wait()
                batch = reader.take()
                if evs := feed.feed(self._accepted(batch)):
                    yield evs
                if reader.ended and not reader.lines:
                    break
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await reader.close()
        if reader.failure is not None:  # raised once the lines read are handed out
            # the window counts every line it accepted as handed out, and the next follow
            # skips them: lines held for the backlog's end go out now, not with the rewind
            if evs := feed.caught_up():
                yield evs
            raise reader.failure

    def _accepted(self, batch: list[bytes]) -> bytes:
        """The new lines of a batch, for the framer; the CLI's own lines go to ``notes``."""
        out: list[bytes] = []
        accept = self.window.accept
        for raw in batch:
            split = split_stamp(raw)
            if split is None:
                self.notes.append(raw[:300].decode("utf-8", "replace"))
            elif accept(*split):
                out.append(raw)
                if self.first_stamp is None:
                    self.first_stamp = split[0]
        self.lines += len(out)
        return b"\n".join(out) + b"\n" if out else b""


class _Reader:
    """Reads the CLI's lines into a list on its own task: the source takes them a batch at a
    time (an await per line was most of a catch-up's time)."""

    def __init__(self, lines: AsyncIterator[bytes]) -> None:
        self._it = lines
        self.lines: list[bytes] = []
        self.more = asyncio.Event()
        self._room = asyncio.Event()
        self.ended = False
        self.failure: TransportError | None = None

    async def run(self) -> None:
        try:
            async for raw in self._it:
                self.lines.append(raw)
                self.more.set()
                if len(self.lines) >= READ_AHEAD:
                    self._room.clear()
                    await self._room.wait()
        except TransportError as exc:
            self.failure = exc
        finally:
            self.ended = True
            self.more.set()

    def take(self) -> list[bytes]:
        batch, self.lines = self.lines, []
        self._room.set()
        return batch

    async def close(self) -> None:
        aclose = getattr(self._it, "aclose", None)
        if aclose is not None:
            await aclose()


async def dump_log(cli: ContainerCli, container: str, out: BinaryIO) -> int:
    """The container's log so far (``logs --timestamps``, both streams in stamp order) written
    to ``out`` with its stamps; the number of lines. The CLI's own lines are left out."""
    order = StampOrder()
    n = 0
    async for raw in cli.transport.stream_lines(cli.logs_argv(container, follow=False),
                                                stderr=True):
        split = split_stamp(raw)
        if split is not None:
            ready = order.push(split[0], raw)
            if ready:
                out.write(b"\n".join(ready) + b"\n")
            n += 1
    rest = order.flush()
    if rest:
        out.write(b"\n".join(rest) + b"\n")
    return n


__all__ = ["ContainerLog", "dump_log", "is_running", "started_at"]
