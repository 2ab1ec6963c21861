"""Follow a server log through the transport and turn it into parsed events.

The bytes go through the model's one line framer
(:class:`~eagle_tui.model.ingest.logfeed.LogFeed`), which decides everything about lines; this
source does the I/O and says when the end of the file is reached:

* **Exact resume**: after a transport failure reading resumes at the framer's ``offset``, so no
  line is lost or parsed twice and line numbers continue.
* **Catch-up**: until the end of the file, lines are held and older ones take the parser's fast
  path; only the tail becomes visible lines.
* **End first** (``from_end``): a big file is opened near its end, announced by a ``LogOpened``.
* **Restarts**: a truncated or replaced file gives a ``LogRestarted`` and line numbers restart.

More in docs/architecture.md, "Module notes", ``sources/logtail``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from eagle_tui.model.events import Event, LogOpened, LogRestarted
from eagle_tui.model.ingest.framing import TAIL_LINES, LineFramer
from eagle_tui.model.ingest.logfeed import STATS_KEEP, LogFeed, StatsThinner
from eagle_tui.model.ingest.textenc import SNIFF_BYTES, Encoding, RawOffsets, Transcoder, sniff
from eagle_tui.transport.base import TailChunk, Transport, TransportError

if TYPE_CHECKING:
    from eagle_tui.model.ingest.parser import LogParser

CATCHUP_LINES = TAIL_LINES
CAUGHT_UP_GAP_S = 0.05  # no new chunk within this long = we are at the end of the file
# the end of a big log read first: some ten screenfuls of a busy server's log, small enough that
# parsing it does not delay the first text; everything above is the log view's file part
# (scrollback) and the background summary.
FROM_END = 64 << 10


async def file_size(transport: Transport, path: str) -> int | None:
    """The size of ``path`` on the transport's host (``None``: missing or unreadable)."""
    if transport.host == "":
        import os

        try:
            return os.stat(path).st_size
        except OSError:
            return None
    try:
        # a regular file only: ``wc`` on a FIFO or /dev/zero never ends (its size is no figure)
        res = await transport.run(["sh", "-c", 'test -f "$1" && exec wc -c < "$1"', "sh", path],
                                  timeout=10.0)
    except TransportError:
        return None
    words = res.stdout.split()
    return int(words[0]) if res.exit_code == 0 and words and words[0].isdigit() else None


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
        from_end: int | None = None,
    ) -> None:
        self.name = name
        self.from_end = from_end
        self.opened: LogOpened | None = None  # where the tail began, when opened at the end
        self.path = path
        self.transport = transport
        self.catchup_lines = catchup_lines
        self.caught_up_gap = caught_up_gap
        from eagle_tui.model.ingest.parser import LogParser  # loaded only when a log is followed

        self.feed = LogFeed(LogParser(host=transport.host),
                            LineFramer(offset, tail_lines=catchup_lines))
        self._clock = clock
        self.restarts = 0
        # a log in UTF-16/32 (or with a BOM) is decoded before the framer, whose offsets are
        # then the UTF-8's; ``_raw`` maps them back for a resumed read (model/textenc.py)
        self.encoding: Encoding | None = None
        self._coder: Transcoder | None = None
        self._raw: RawOffsets | None = None
        self._sniffed = offset > 0  # a tail started mid-file cannot see the mark

    @property
    def offset(self) -> int:
        """Bytes of the file handed to the parser (where a resumed read starts)."""
        if self._raw is not None:
            self._raw.advance(self.feed.offset)
            return self._raw.raw
        return self.feed.offset

    def _sniff(self, data: bytes) -> None:
        """The first bytes of the file: decode from here on if it is not plain UTF-8."""
        self._sniffed = True
        self.encoding = sniff(data[:SNIFF_BYTES])
        if self.encoding is not None:
            self._coder = Transcoder(self.encoding)
            self._raw = RawOffsets(self.encoding, raw=self.encoding.bom)

    def _forget_encoding(self) -> None:
        self.encoding, self._coder, self._raw, self._sniffed = None, None, None, False

    async def _encoded_head(self) -> bool:
        """Whether the log begins with another encoding's mark (asked before opening it at
        its end: the end is found in raw bytes, so such a log is read whole instead)."""
        try:
            head = await self.transport.read_range(self.path, 0, SNIFF_BYTES)
        except (TransportError, ValueError):
            return False
        return sniff(head) is not None

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
        skip: int | None = None  # opened at the end: bytes from here up to a newline are dropped
        announce = False  # the LogOpened goes out with the next events
        size: int | None = None
        if self.from_end is not None and self.opened is None and feed.offset == 0:
            size = await file_size(self.transport, self.path)
            if (size is not None and size > self.from_end
                    and not (self._sniffed or await self._encoded_head())):
                skip = size - self.from_end - 1  # from the byte before: it may end a line
        start = feed.offset
        if self._raw is not None and self.encoding is not None:
            # a decoded log: read again from the raw byte after the last line handed out
            self._raw.advance(feed.offset)
            start = self._raw.resume()
            self._coder = Transcoder(self.encoding, mid_file=start > 0)
        it = aiter(self.transport.tail(self.path, start if skip is None else skip))
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
                    skip = None
                    if evs := feed.restart():
                        yield evs
                    self._forget_encoding()  # a new file: its own first bytes say
                    self.restarts += 1
                    yield LogRestarted(chunk.restarted, self.transport.host, self._clock())
                data = chunk.data
                if not self._sniffed and data and skip is None \
                        and chunk.offset == len(data):  # the file's first bytes
                    self._sniff(data)
                if self._coder is not None:
                    assert self._raw is not None
                    data = self._coder.feed(data)
                    self._raw.fed(data)
                if skip is not None:  # the first line start of the end, once it is read
                    nl = data.find(b"\n")
                    if nl < 0:
                        skip += len(data)
                        continue
                    start = skip + nl + 1
                    data, skip = data[nl + 1 :], None
                    assert size is not None
                    self.opened = LogOpened(self.path, self.transport.host, start, size)
                    feed.framer.offset = start
                    announce = True
                evs = feed.feed(data)
                if chunk.at_eof and feed.framer.catching_up:
                    # the transport knows it reached the end: show the last lines now
                    evs.extend(feed.caught_up())
                if announce:
                    # in the same list as the end's first lines: one batch, not a LogOpened
                    # alone that the session's batch wait would keep the lines behind
                    assert self.opened is not None
                    evs.insert(0, self.opened)
                    announce = False
                if self._raw is not None:
                    self._raw.advance(feed.offset)
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
