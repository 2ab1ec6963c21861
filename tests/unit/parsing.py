"""Shared helper for the engine-parser tests: run lines through one LogParser, line by line."""

from __future__ import annotations

from collections.abc import Sequence

from eagle_tui.model.events import Event
from eagle_tui.model.parser import LogParser


def parse(lines: Sequence[str | bytes]) -> list[Event]:
    p = LogParser()
    out: list[Event] = []
    for line in lines:
        out.extend(p.feed_line(line))
    out.extend(p.finish())
    return out
