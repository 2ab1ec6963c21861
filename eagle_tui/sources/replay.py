"""Replay a ``--record`` JSON-lines file, or parse a finished raw log, as a source.

A record file holds every event in the order the live session reduced it, so replaying it
(through a session with ``tick_interval=None``: the recorded ticks carry the recorded clock)
rebuilds exactly the live state. ``speed`` replays with the recorded pacing (``1.0`` real time,
``10.0`` ten times faster); ``None`` as fast as the session takes it.

A raw log is a tail that ends at the end of the file: its chunks go through the same
:class:`~eagle_tui.model.ingest.logfeed.LogFeed` as the live tail's catch-up, so all but the last
``visible_lines`` lines take the parser's fast path (phases, stats and crashes only), with the
same thinning of old stats, and the end of the file releases the visible tail.

More in docs/architecture.md, "Module notes", ``sources/replay``.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TextIO

from eagle_tui.errors import InputError
from eagle_tui.files import open_log, open_regular, os_error_message
from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.events import Event, LogLine, LogOpened
from eagle_tui.model.events.codec import MAX_RECORD_BYTES, CodecError, from_dict, is_header
from eagle_tui.model.ingest.framing import LineFramer, held_to_contract
from eagle_tui.model.ingest.logfeed import LogFeed

CHUNK = 1 << 20
VISIBLE_LINES = 10_000
MAX_T = 4_102_444_800.0  # 2100-01-01: a later (or negative, or non-finite) event time is junk
HEAD_BYTES = 1 << 16  # what is read of the first line to tell a record file from a log
MAX_PAUSE_S = 60.0  # the longest pause --speed makes between two events (recorded seconds)
REPORTED_RUNS = 3  # runs of damaged record lines reported as they come; the rest at the end


class ReplayError(InputError):
    """A record line that cannot be replayed; ``str()`` names the file and line."""


def bounded_lines(fh: TextIO, cap: int) -> Iterator[str | None]:
    """The lines of ``fh``, each read at most ``cap`` characters at a time; a longer line is
    read past in pieces and given as ``None`` (memory stays bounded by ``cap``)."""
    while line := fh.readline(cap + 1):
        if len(line) <= cap or line.endswith("\n"):
            yield line
            continue
        while (rest := fh.readline(cap)) and not rest.endswith("\n"):
            pass
        yield None


def detect_format(path: Path) -> str:
    """``"record"`` for an eagle-tui record file, ``"log"`` for anything else."""
    with open_regular(path) as fh:
        first = fh.readline(HEAD_BYTES).strip()
    if not first.startswith(b"{"):
        return "log"
    try:
        data = load_json(first, f"{path}:1", max_bytes=HEAD_BYTES)
    except LoadError:  # (a first line nested too deep is not a header either: a log)
        return "log"
    if isinstance(data, dict) and (is_header(data) or "type" in data):
        return "record"
    return "log"


def _counted(seen: tuple[str, int] | None, what: str) -> tuple[str, int]:
    """``(the first damaged line's message, how many)`` with one more, ``what``."""
    return (what, 1) if seen is None else (seen[0], seen[1] + 1)


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
        from_end: int | None = None,
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
        self.from_end = from_end
        self.position = 0  # record: lines consumed; log: bytes consumed
        self._feed: LogFeed | None = None
        self._last_t: float | None = None
        self._unreadable = False  # a read failed: the replay ended there
        self._started = False  # a record line was read (a header or an event)
        # damaged lines: the run being read, and those past REPORTED_RUNS (first, how many)
        self._run: tuple[str, int] | None = None
        self._late: tuple[str, int] | None = None
        self._reported = 0

    async def events(self) -> AsyncIterator[Event]:
        if self._unreadable:
            return
        if not self.path.is_file():
            raise ReplayError(f"{self.path}: no such file")
        try:
            kind = self.kind if self.kind != "auto" else detect_format(self.path)
            async for ev in self._record() if kind == "record" else self._log():
                yield ev
        except OSError as exc:
            self._unreadable = True
            raise ReplayError(f"{os_error_message(str(self.path), exc)} "
                              "(the replay ends here)") from None

    async def _record(self) -> AsyncIterator[Event]:
        with io.TextIOWrapper(open_regular(self.path), encoding="utf-8",
                              errors="replace") as fh:
            for lineno, line in enumerate(bounded_lines(fh, MAX_RECORD_BYTES), 1):
                if lineno <= self.position:
                    continue
                self.position = lineno
                if line is None:
                    self._skip(f"{self.path}:{lineno}: a record line longer than "
                               f"{MAX_RECORD_BYTES:,} characters")
                    continue
                text = line.strip()
                if not text:
                    continue
                try:
                    data = load_json(text, f"{self.path}:{lineno}", max_bytes=MAX_RECORD_BYTES)
                    ev = None if lineno == 1 and is_header(data) else from_dict(data)
                except LoadError as exc:
                    self._skip(str(exc))
                    continue
                except (ValueError, CodecError, OverflowError) as exc:
                    self._skip(f"{self.path}:{lineno}: {exc}")
                    continue
                t = getattr(ev, "t", None)
                if isinstance(t, float) and not (0.0 <= t <= MAX_T):  # (NaN fails it too)
                    self._skip(f"{self.path}:{lineno}: event time {t!r:.40} is out of range "
                               "(0 to 2100-01-01)")
                    continue
                self._started = True
                if self._run is not None:  # the damaged lines before this one, reported now:
                    self.position = lineno - 1  # the retry goes on with this line
                    raise self._report()
                if ev is None:  # (the header)
                    continue
                if type(ev) is LogLine:  # a record file is not the parser: hold it to its word
                    ev = held_to_contract(ev)
                if self.speed is not None and isinstance(t, float) and t > 0:
                    if self._last_t is not None and t > self._last_t:
                        await asyncio.sleep(min(t - self._last_t, MAX_PAUSE_S) / self.speed)
                    self._last_t = t
                elif lineno % 2000 == 0:
                    await asyncio.sleep(0)  # let the session batch while we read
                yield ev
        if self._run is not None or self._late is not None:
            raise self._report()

    def _skip(self, what: str) -> None:
        """Note a line that is no record line. A run of them is reported once, when the next
        record line comes (one session backoff a run, not a line: a damaged block replayed for
        minutes), the runs after ``REPORTED_RUNS`` once at the end, with their count. No record
        line before it: the file is no record (a raw log read as one), and the replay ends."""
        if not self._started:
            self._unreadable = True
            raise ReplayError(f"{what} (not an eagle-tui record: the replay ends here)")
        if self._reported >= REPORTED_RUNS:
            self._late = _counted(self._late, what)
        else:
            self._run = _counted(self._run, what)

    def _report(self) -> ReplayError:
        """The error for the run of damaged lines just read (or, at the end, for those past
        the reported runs)."""
        if self._run is not None:
            (first, n), self._run = self._run, None
            self._reported += 1
            more = f", with {n - 1:,} more after it" if n > 1 else ""
            return ReplayError(f"{first} (skipped{more})")
        assert self._late is not None
        (first, n), self._late = self._late, None
        return ReplayError(f"{first} (skipped, with {n - 1:,} more damaged lines after it)")

    async def _log(self) -> AsyncIterator[Event]:
        if self._feed is None:
            from eagle_tui.model.ingest.parser import LogParser  # only raw logs need the parser

            opened = self._open_at_end()
            at = opened.start if opened is not None else 0
            visible = self.visible_lines
            framer = LineFramer(at, visible_from=at) if visible is None else \
                LineFramer(at, tail_lines=visible)
            self._feed = LogFeed(LogParser(host=self.host), framer)
            if opened is not None:
                yield opened
        feed = self._feed
        feed.rewind()  # a retry reads again from the last line handed to the parser
        fh, _ = open_log(self.path)  # a UTF-16/32 log read as UTF-8 (offsets are the UTF-8's)
        with fh:
            fh.seek(feed.offset)
            while chunk := fh.read(CHUNK):
                for ev in feed.feed(chunk):
                    yield ev
                self.position = feed.offset
                await asyncio.sleep(0)
        for ev in feed.finish():
            yield ev
        self.position = feed.offset

    def _open_at_end(self) -> LogOpened | None:
        """Where the end of a log bigger than ``from_end`` begins (a line start), or ``None``."""
        if self.from_end is None:
            return None
        size = self.path.stat().st_size
        if size <= self.from_end:
            return None
        fh, enc = open_log(self.path)
        with fh:
            if enc is not None:  # the end is found in raw bytes: a decoded log is read whole
                return None
            at = size - self.from_end - 1  # from the byte before: it may end a line
            fh.seek(at)
            while chunk := fh.read(1 << 16):
                nl = chunk.find(b"\n")
                if nl >= 0:
                    start = at + nl + 1
                    return LogOpened(str(self.path), self.host, start, size) \
                        if start < size else None
                at += len(chunk)
        return None


__all__ = ["MAX_PAUSE_S", "MAX_T", "ReplayError", "ReplaySource", "detect_format"]
