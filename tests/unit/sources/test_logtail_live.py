"""LogTail while following live: reads go through the parser's chunk path, and a burst larger
than the view keeps only makes its last ``catchup_lines`` visible."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

from eagle_tui.model.events import DecodeStats, Event, LogLine
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.sources.logtail import LogTail
from eagle_tui.transport.base import TailChunk, Transport
from tests.support.bench import bench_module


def line_pool(n: int) -> list[bytes]:
    """The benchmark's line mix (``benchmarks/bench_tui.py``)."""
    return bench_module("bench_tui").line_pool(n)  # type: ignore[no-any-return]



class Scripted:
    """A transport whose tail yields the given reads (the first one reaches the end of file)."""

    host = "node-1"

    def __init__(self, reads: list[bytes]) -> None:
        self.reads = reads

    async def tail(self, path: str, offset: int = 0) -> AsyncIterator[TailChunk]:
        total = 0
        for i, data in enumerate(self.reads):
            total += len(data)
            yield TailChunk(data, total, at_eof=True if i == 0 else None)


async def follow(reads: list[bytes], catchup_lines: int) -> tuple[list[Event], LogTail]:
    src = LogTail(cast(Transport, cast(Any, Scripted(reads))), "x.log",
                  catchup_lines=catchup_lines, caught_up_gap=0)
    out: list[Event] = []
    async for item in src.events():
        assert isinstance(item, list) and item  # one non-empty list per chunk read
        out.extend(item)
    return out, src


def by_line(data: bytes) -> list[Event]:
    p = LogParser("node-1")
    return [e for line in data.splitlines() for e in p.feed_line(line)] + p.finish()


async def test_live_reads_give_the_events_of_feed_line() -> None:
    pool = line_pool(3000)
    first, live = b"".join(pool[:10]), [b"".join(pool[i : i + 997]) for i in range(10, 3000, 997)]
    events, src = await follow([first, *live], catchup_lines=5000)
    assert events == by_line(first + b"".join(live))
    assert src.offset == len(first) + sum(map(len, live))


async def test_a_burst_read_shows_only_its_last_catchup_lines() -> None:
    pool = line_pool(3000)
    first, burst = b"".join(pool[:10]), b"".join(pool[10:])
    events, src = await follow([first, burst], catchup_lines=500)
    lines = [e for e in events if isinstance(e, LogLine)]
    assert [ln.lineno for ln in lines] == [*range(1, 11), *range(2501, 3001)]
    assert src.offset == len(first) + len(burst)
    assert src.parser.lineno == 3000
    # the older lines' stats still arrive (thinned to what the state can show), in order
    stats = [e.lineno for e in events if isinstance(e, DecodeStats)]
    assert stats == sorted(stats) and stats[-1] > 2980 and any(n < 2500 for n in stats)
    # and the visible tail is exactly what feed_line gives for those lines
    assert [e for e in events if isinstance(e, LogLine) and e.lineno > 10] == \
        [e for e in by_line(first + burst) if isinstance(e, LogLine) and e.lineno > 2500]
