"""One log's bytes → its events: the line framer, the parser and the thinning of a catch-up.

:class:`LogFeed` is what the live tail (``sources/logtail.py``) and the raw-log replay
(``sources/replay.py``) share: they only read bytes and say when the end of the file is
reached. Frames (:mod:`.framing`) go to the parser once each: catch-up frames through its fast
path, their stats thinned by :class:`StatsThinner`; visible frames with their ``LogLine`` s,
after any stats still held. Pure: the parser is given, nothing is read.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from eagle_tui.model.events import (
    DecodeStats,
    Event,
    HiddenStateDims,
    LogLine,
    PrefillStats,
    SpecStats,
)
from eagle_tui.model.ingest.framing import Frame, LineFramer
from eagle_tui.model.series import Series

if TYPE_CHECKING:
    from eagle_tui.model.ingest.parser import LogParser

STATS_KEEP = Series().maxlen  # older catch-up stats cannot be shown by the state anyway
_THINNED = (DecodeStats, PrefillStats, SpecStats)


class StatsThinner:
    """Thins the stats events of a catch-up to what the state can still show.

    Reducing an event costs far more than parsing its line (the state is immutable), and a busy
    server's history is almost all ``Decode batch``/``Engine 000`` stats lines, so a catch-up
    that reduced every one of them stalled for long. The state's series keep their last 600
    points, so of each run of stats events between two other events (a phase, a crash, ...)
    only the first (it marks when serving began) and the last ``keep`` of each type can still
    change what is shown; the rest are dropped here, before they are reduced.
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


class LogFeed:
    """One log's bytes → its events: a :class:`LineFramer`, the parser, a :class:`StatsThinner`.

    What the live tail and the raw-log replay share; they only read bytes and say when the end
    of the file is reached. Catch-up frames take the parser's fast path and their stats are
    thinned (``thin=False``: every event kept); held stats go out before any visible line.
    """

    def __init__(self, parser: LogParser, framer: LineFramer | None = None, *,
                 thin: bool = True) -> None:
        self.parser = parser
        self.framer = framer if framer is not None else LineFramer()
        self.thinner = StatsThinner() if thin else None

    @property
    def offset(self) -> int:
        return self.framer.offset

    def feed(self, data: bytes) -> list[Event]:
        return self._parse(self.framer.feed(data))

    def caught_up(self) -> list[Event]:
        return self._parse(self.framer.caught_up(), flush=True)

    def finish(self) -> list[Event]:
        """The end of a finished log: held lines, the last unterminated line, a pending crash."""
        return [*self._parse(self.framer.finish(), flush=True), *self.parser.finish()]

    def restart(self) -> list[Event]:
        """The file restarted: the held lines' events; then parser and thinner start afresh."""
        out = self._parse(self.framer.restart(), flush=True)
        self.parser.reset()
        if self.thinner is not None:
            self.thinner.reset()
        return out

    def rewind(self) -> None:
        self.framer.rewind()

    def _parse(self, frames: list[Frame], flush: bool = False) -> list[Event]:
        out: list[Event] = []
        thinner = self.thinner
        for frame in frames:
            if frame.single:
                lines = [frame.data] if frame.cut else \
                    self.parser.repair(frame.data + b"\n")[:-1].split(b"\n")
                events = [ev for line in lines
                          for ev in self.parser.feed_line(line, cut=frame.cut)]
                if not frame.visible:
                    events = [ev for ev in events if type(ev) is not LogLine]
            else:
                events = self.parser.feed_lines(self.parser.repair(frame.data),
                                                emit_lines=frame.visible)
            if thinner is None:
                out.extend(events)
            elif frame.visible:
                out.extend(thinner.flush())  # held catch-up stats go before any visible line
                out.extend(events)
            else:
                out.extend(thinner.feed(events))
        if flush and thinner is not None:
            out.extend(thinner.flush())
        return out


__all__ = ["STATS_KEEP", "LogFeed", "StatsThinner"]
