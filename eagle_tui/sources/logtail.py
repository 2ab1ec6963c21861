"""Follow a server log through the transport and turn it into parsed events.

The bytes read go through the model's one line framer (:class:`~eagle_tui.model.logfeed.LogFeed`:
framer, parser, stats thinning), which decides everything about lines; this source only does the
I/O and says when the end of the file is reached:

* **Exact resume.** ``offset`` (the framer's) is the byte offset just after the last line handed
  to the parser. When the transport fails (an SSH connection drops) the session calls
  ``events()`` again and reading resumes at exactly that byte: no line is lost or parsed twice,
  and line numbers continue. A partial last line is held back (not counted) until its newline.
* **Catch-up.** Until the transport says it reached the end of the file (``TailChunk.at_eof``;
  for a transport that cannot tell, until the stream pauses for ``caught_up_gap``) the framer
  holds the lines read (at most ``catchup_lines`` lines and ``framing.TAIL_BYTES`` bytes); older
  ones take the parser's fast path (only phases, stats and crashes), and then only the tail
  becomes visible lines.
* **Restarts.** When the transport reports the file truncated or replaced, a ``LogRestarted``
  event is emitted (the reducer starts a fresh state) and the parser is reset so line numbers
  restart at 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from eagle_tui.model.events import Event, LogRestarted
from eagle_tui.model.framing import TAIL_LINES, LineFramer
from eagle_tui.model.logfeed import STATS_KEEP, LogFeed, StatsThinner
from eagle_tui.transport.base import TailChunk, Transport

if TYPE_CHECKING:
    from eagle_tui.model.parser import LogParser

CATCHUP_LINES = TAIL_LINES
CAUGHT_UP_GAP_S = 0.05  # no new chunk within this long = we are at the end of the file


async def _next(it: AsyncIterator[TailChunk]) -> TailChunk:
    return await anext(it)


class LogTail:
    """Source of log-derived events for one file (``name`` defaults to ``"log"``)."""

    def __init__(
        self,
        transport: Transport,
        path: str,
        *,
        name: str = "log",
        offset: int = 0,
        catchup_lines: int = CATCHUP_LINES,
        caught_up_gap: float = CAUGHT_UP_GAP_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self.path = path
        self.transport = transport
        self.catchup_lines = catchup_lines
        self.caught_up_gap = caught_up_gap
        from eagle_tui.model.parser import LogParser  # loaded only when a log is followed

        self.feed = LogFeed(LogParser(host=transport.host),
                            LineFramer(offset, tail_lines=catchup_lines))
        self._clock = clock
        self.restarts = 0

    @property
    def offset(self) -> int:
        """Bytes of the file handed to the parser (where a resumed read starts)."""
        return self.feed.offset

    @property
    def parser(self) -> LogParser:
        return self.feed.parser

    @property
    def thinner(self) -> StatsThinner:
        assert self.feed.thinner is not None
        return self.feed.thinner

    async def events(self) -> AsyncIterator[Event | list[Event]]:
        """Yield the events of each chunk read as one list (one session queue operation)."""
        feed = self.feed
        feed.rewind()  # every (re)attach starts by catching up on what is already there
        it = aiter(self.transport.tail(self.path, feed.offset))
        pending: asyncio.Future[TailChunk] | None = None
        try:
            while True:
                if pending is None:
                    pending = asyncio.ensure_future(_next(it))
                if feed.framer.catching_up and feed.framer.held[1] and self.caught_up_gap > 0:
                    done, _ = await asyncio.wait({pending}, timeout=self.caught_up_gap)
                    if not done:  # the stream paused: everything already written is in
                        if evs := feed.caught_up():
                            yield evs
                        continue
                try:
                    chunk = await pending
                except StopAsyncIteration:
                    break
                finally:
                    if pending.done():
                        pending = None
                if chunk.restarted:
                    if evs := feed.restart():
                        yield evs
                    self.restarts += 1
                    yield LogRestarted(chunk.restarted, self.transport.host, self._clock())
                evs = feed.feed(chunk.data)
                if chunk.at_eof and feed.framer.catching_up:
                    # the transport knows it reached the end: show the last lines now
                    evs.extend(feed.caught_up())
                if evs:
                    yield evs
        finally:
            if pending is not None and not pending.done():
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, Exception):
                    await pending
            aclose = getattr(it, "aclose", None)
            if aclose is not None:
                await aclose()
        # the tail ended (transport closed): surface what was held back
        if evs := feed.caught_up():
            yield evs


__all__ = ["CATCHUP_LINES", "STATS_KEEP", "LogTail", "StatsThinner"]
