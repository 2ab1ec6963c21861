"""Follow a server log through the transport and turn it into parsed events.

Three things make this more than ``for line in tail``:

* **Exact resume.** ``offset`` is the byte offset just after the last *complete* line handed to
  the parser. When the transport fails (an SSH connection drops) the session calls ``events()``
  again and reading resumes at exactly that byte: no line is lost or parsed twice, and line
  numbers continue. A partial last line is held back (not counted) until its newline arrives.
* **Catch-up.** Attaching to a server that has already written a million lines must not build a
  million ``LogLine`` events nobody will scroll to. Until the transport says it reached the end
  of the file (``TailChunk.at_eof``; for a transport that cannot tell, until the stream pauses
  for ``caught_up_gap``) chunks are held; then all but the last
  ``catchup_lines`` lines go through the parser's fast path (``emit_lines=False``: only phases,
  stats and crashes) and only the tail becomes visible lines. Held data is bounded by
  ``catchup_lines`` plus one chunk.
* **Restarts.** When the transport reports the file truncated or replaced, a ``LogRestarted``
  event is emitted (the reducer starts a fresh state) and the parser is reset so line numbers
  restart at 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from eagle_tui.model.events import (
    DecodeStats,
    Event,
    HiddenStateDims,
    LogRestarted,
    PrefillStats,
    SpecStats,
)
from eagle_tui.model.series import Series
from eagle_tui.transport.base import TailChunk, Transport

if TYPE_CHECKING:
    from eagle_tui.model.parser import LogParser

CATCHUP_LINES = 10_000
CAUGHT_UP_GAP_S = 0.05  # no new chunk within this long = we are at the end of the file
MAX_LINE_BYTES = 1 << 20  # a "line" longer than this is cut (bounded memory on binary garbage)
STATS_KEEP = Series().maxlen  # older catch-up stats cannot be shown by the state anyway
_THINNED = (DecodeStats, PrefillStats, SpecStats)


class StatsThinner:
    """Thins the stats events of a catch-up to what the state can still show.

    Reducing an event costs far more than parsing its line (the state is immutable), and a busy
    server's history is almost all ``Decode batch``/``Engine 000`` stats lines: catching up on
    300,000 of them took ~30 s. The state's series keep their last 600 points, so of each run of
    stats events between two other events (a phase, a crash, ...) only the first (it marks when
    serving began) and the last ``keep`` of each type can still change what is shown; the rest
    are dropped here, before they are reduced.
    The order of every kept event is preserved, a repeated ``HiddenStateDims`` is dropped (the
    state keeps distinct dimensions only), and nothing else is touched.
    """

    def __init__(self, keep: int = STATS_KEEP) -> None:
        self.keep = keep
        self.dropped = 0
        self._seq = 0
        self._first: dict[type, tuple[int, Event]] = {}
        self._held: dict[type, deque[tuple[int, Event]]] = {}
        self._dims: set[int] = set()

    def feed(self, events: list[Event]) -> list[Event]:
        out: list[Event] = []
        for ev in events:
            if isinstance(ev, _THINNED):
                item = (self._seq, ev)
                self._seq += 1
                if type(ev) not in self._first:
                    # the first of a run is kept too: it marks when serving began
                    self._first[type(ev)] = item
                    continue
                held = self._held.setdefault(type(ev), deque(maxlen=self.keep))
                if len(held) == self.keep:
                    self.dropped += 1
                held.append(item)
            elif isinstance(ev, HiddenStateDims):
                if ev.dim not in self._dims:
                    self._dims.add(ev.dim)
                    out.append(ev)
                else:
                    self.dropped += 1
            else:
                out.extend(self.flush())
                out.append(ev)
        return out

    def flush(self) -> list[Event]:
        """The held stats, in their original order (call before anything that must follow)."""
        if not self._first:
            return []
        items = [*self._first.values(), *(item for held in self._held.values() for item in held)]
        self._first.clear()
        self._held.clear()
        return [ev for _, ev in sorted(items, key=lambda item: item[0])]

    def reset(self) -> None:
        self._first.clear()
        self._held.clear()
        self._dims.clear()


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
        self.offset = offset  # bytes of complete lines consumed
        self.catchup_lines = catchup_lines
        self.caught_up_gap = caught_up_gap
        from eagle_tui.model.parser import LogParser  # loaded only when a log is followed

        self.parser: LogParser = LogParser(host=transport.host)
        self._clock = clock
        self.restarts = 0
        self.thinner = StatsThinner()

    async def events(self) -> AsyncIterator[Event | list[Event]]:
        """Yield the events of each chunk read as one list (one session queue operation)."""
        partial = b""  # bytes after the last newline, not yet part of ``offset``
        held: list[bytes] = []  # complete-line chunks waiting while catching up
        held_lines = 0
        catching_up = True  # every (re)attach starts by catching up on what is already there
        it = aiter(self.transport.tail(self.path, self.offset))
        pending: asyncio.Future[TailChunk] | None = None
        try:
            while True:
                if pending is None:
                    pending = asyncio.ensure_future(_next(it))
                if catching_up and held and self.caught_up_gap > 0:
                    done, _ = await asyncio.wait({pending}, timeout=self.caught_up_gap)
                    if not done:  # the stream paused: everything already written is in
                        if evs := self._flush_held(held):
                            yield evs
                        held, held_lines = [], 0
                        catching_up = False
                        continue
                try:
                    chunk = await pending
                except StopAsyncIteration:
                    break
                finally:
                    if pending.done():
                        pending = None
                if chunk.restarted:
                    if evs := self._flush_held(held):
                        yield evs
                    held, held_lines, partial = [], 0, b""
                    self.offset = 0
                    self.parser.reset()
                    self.thinner.reset()  # (flushed just above)
                    self.restarts += 1
                    catching_up = True
                    yield LogRestarted(chunk.restarted, self.transport.host, self._clock())
                data = partial + chunk.data
                cut = data.rfind(b"\n") + 1
                partial = data[cut:]
                complete = data[:cut]
                if len(partial) > MAX_LINE_BYTES:  # no newline in sight: treat it as a line
                    complete += partial + b"\n"
                    partial = b""
                    self.offset -= 1  # the newline we invented is not in the file
                if catching_up and chunk.at_eof:
                    # the transport knows it reached the end: show the last lines now
                    if complete:
                        held.append(complete)
                        held_lines += complete.count(b"\n")
                    if evs := self._flush_held(held):
                        yield evs
                    held, held_lines = [], 0
                    catching_up = False
                    continue
                if not complete:
                    continue
                if catching_up:
                    held.append(complete)
                    held_lines += complete.count(b"\n")
                    # keep only what may still become visible; older lines take the fast path
                    while len(held) > 1 and held_lines - held[0].count(b"\n") >= self.catchup_lines:
                        old = held.pop(0)
                        held_lines -= old.count(b"\n")
                        if evs := self._feed_fast(old):
                            yield evs
                    continue
                if evs := self._feed_lines(complete):
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
        if evs := self._flush_held(held):
            yield evs

    # ------------------------------------------------------------------ feeding the parser
    def _feed_fast(self, data: bytes) -> list[Event]:
        events = self.parser.feed_chunk(data, emit_lines=False)
        self.offset += len(data)
        return self.thinner.feed(events)

    def _feed_lines(self, data: bytes) -> list[Event]:
        """Visible lines: the parser's chunk path (whole runs of common lines at a time).

        A read that brings more lines than the view keeps (a burst after a stall) makes only
        its last ``catchup_lines`` visible; the older ones take the catch-up path, like the
        lines before an attach.
        """
        events: list[Event] = []
        if data.count(b"\n") > self.catchup_lines:
            cut = len(data) - 1
            for _ in range(self.catchup_lines):
                cut = data.rfind(b"\n", 0, cut)
            events.extend(self._feed_fast(data[: cut + 1]))
            data = data[cut + 1 :]
        events.extend(self.thinner.flush())  # held catch-up stats go before any visible line
        events.extend(self.parser.feed_chunk(data, emit_lines=True))
        self.offset += len(data)
        return events

    def _flush_held(self, held: list[bytes]) -> list[Event]:
        """The held chunks, caught up: all but the last ``catchup_lines`` lines on the fast path
        (``_feed_lines`` applies that rule), and any stats the thinner still holds."""
        return self._feed_lines(b"".join(held)) if held else self.thinner.flush()


__all__ = ["CATCHUP_LINES", "STATS_KEEP", "LogTail", "StatsThinner"]
