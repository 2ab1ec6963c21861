"""Replay a ``--record`` JSON-lines file, or parse a finished raw log, as a source.

A record file holds every event in the order the live session reduced it, so replaying it
(through a session with ``tick_interval=None``: the recorded ticks carry the recorded clock)
rebuilds exactly the live state. ``speed`` replays with the recorded pacing (``1.0`` real time,
``10.0`` ten times faster); ``None`` as fast as the session takes it.

A raw log is read in chunks and parsed like the live tail does on catch-up: all but the last
``visible_lines`` lines go through the parser's fast path (phases, stats and crashes only), with
the same thinning of old stats (:class:`~eagle_tui.sources.logtail.StatsThinner`).

A malformed record line is reported (the session shows ``SourceFailed`` naming the file and line)
and skipped: the position is kept on the object, so the retry continues after it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from eagle_tui.errors import InputError
from eagle_tui.model.codec import CodecError, from_dict, is_header
from eagle_tui.model.events import Event
from eagle_tui.sources.logtail import StatsThinner

if TYPE_CHECKING:
    from eagle_tui.model.parser import LogParser

CHUNK = 1 << 20
VISIBLE_LINES = 10_000


class ReplayError(InputError):
    """A record line that cannot be replayed; ``str()`` names the file and line."""


def detect_format(path: Path) -> str:
    """``"record"`` for an eagle-tui record file, ``"log"`` for anything else."""
    with path.open("rb") as fh:
        first = fh.readline(1 << 16).strip()
    if not first.startswith(b"{"):
        return "log"
    try:
        data = json.loads(first)
    except ValueError:
        return "log"
    if isinstance(data, dict) and (is_header(data) or "type" in data):
        return "record"
    return "log"


class ReplaySource:
    """Source that plays a record file or a raw log file (``kind="auto"`` detects which)."""

    def __init__(
        self,
        path: Path | str,
        *,
        kind: str = "auto",
        speed: float | None = None,
        visible_lines: int | None = VISIBLE_LINES,
        name: str = "replay",
        host: str = "",
    ) -> None:
        self.path = Path(path)
        if kind not in ("auto", "record", "log"):
            raise ValueError(f"kind must be auto, record or log, not {kind!r}")
        if speed is not None and speed <= 0:
            raise ValueError("speed must be positive")
        self.kind = kind
        self.speed = speed
        self.visible_lines = visible_lines
        self.name = name
        self.host = host
        self.position = 0  # record: lines consumed; log: bytes consumed
        self._parser: LogParser | None = None
        self._last_t: float | None = None

    async def events(self) -> AsyncIterator[Event]:
        if not self.path.is_file():
            raise ReplayError(f"{self.path}: no such file")
        kind = self.kind if self.kind != "auto" else detect_format(self.path)
        if kind == "record":
            async for ev in self._record():
                yield ev
        else:
            async for ev in self._log():
                yield ev

    async def _record(self) -> AsyncIterator[Event]:
        with self.path.open("r", encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                if lineno <= self.position:
                    continue
                self.position = lineno
                text = line.strip()
                if not text:
                    continue
                try:
                    data = json.loads(text)
                    if lineno == 1 and is_header(data):
                        continue
                    ev = from_dict(data)
                except (ValueError, CodecError) as exc:
                    raise ReplayError(f"{self.path}:{lineno}: {exc}") from None
                t = getattr(ev, "t", None)
                if self.speed is not None and isinstance(t, float) and t > 0:
                    if self._last_t is not None and t > self._last_t:
                        await asyncio.sleep((t - self._last_t) / self.speed)
                    self._last_t = t
                elif lineno % 2000 == 0:
                    await asyncio.sleep(0)  # let the session batch while we read
                yield ev

    def _count_lines(self) -> int:
        count = 0
        with self.path.open("rb") as fh:
            while chunk := fh.read(CHUNK):
                count += chunk.count(b"\n")
        return count

    async def _log(self) -> AsyncIterator[Event]:
        if self._parser is None:
            from eagle_tui.model.parser import LogParser  # only raw logs need the parser

            self._parser = LogParser(host=self.host)
        parser = self._parser
        thinner = StatsThinner()  # the same catch-up thinning as the live tail
        total = await asyncio.to_thread(self._count_lines)
        fast_until = total - self.visible_lines if self.visible_lines is not None else 0
        with self.path.open("rb") as fh:
            fh.seek(self.position)
            partial = b""
            while chunk := fh.read(CHUNK):
                data = partial + chunk
                cut = data.rfind(b"\n") + 1
                partial, data = data[cut:], data[:cut]
                # the part of this chunk still before the visible tail takes the fast path
                fast = b""
                if parser.lineno < fast_until:
                    pos = 0
                    for _ in range(fast_until - parser.lineno):
                        nxt = data.find(b"\n", pos)
                        if nxt < 0:
                            break
                        pos = nxt + 1
                    fast, data = data[:pos], data[pos:]
                if fast:
                    for ev in thinner.feed(parser.feed_chunk(fast, emit_lines=False)):
                        yield ev
                    self.position += len(fast)
                if data:
                    for ev in thinner.flush():
                        yield ev
                start = 0
                while (end := data.find(b"\n", start)) >= 0:
                    for ev in parser.feed_line(data[start:end]):
                        yield ev
                    start = end + 1
                self.position += len(data)
                await asyncio.sleep(0)
            if partial:
                for ev in parser.feed_line(partial):
                    yield ev
                self.position += len(partial)
        for ev in [*thinner.flush(), *parser.finish()]:
            yield ev


__all__ = ["ReplayError", "ReplaySource", "detect_format"]
