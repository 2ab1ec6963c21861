"""Shared helper for the engine-parser tests: run lines through one LogParser, line by line."""

from __future__ import annotations

from collections.abc import Sequence

from eagle_tui.model.events import Event
from eagle_tui.model.ingest.framing import LineFramer
from eagle_tui.model.ingest.logfeed import LogFeed
from eagle_tui.model.ingest.parser import LogParser


def parse(lines: Sequence[str | bytes]) -> list[Event]:
    p = LogParser()
    out: list[Event] = []
    for line in lines:
        out.extend(p.feed_line(line))
    out.extend(p.finish())
    return out


def framed(parser: LogParser, visible: bool = True) -> LogFeed:
    """Bytes cut anywhere → ``parser`` through the line framer, every event kept (no thinning):
    every line visible, or (``visible=False``) every line on the catch-up path."""
    framer = LineFramer(visible_from=0) if visible else LineFramer(tail_lines=0)
    return LogFeed(parser, framer, thin=False)
