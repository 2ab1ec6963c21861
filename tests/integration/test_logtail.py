"""Following real files: the local transport's tail and the LogTail source on top of it.

Files grow, gain partial lines, are truncated, replaced (new inode), deleted while written,
and a big existing file is caught up on through the parser's fast path.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eagle_tui.model.events import Event, LogLine, LogRestarted, Phase, PhaseEvent
from eagle_tui.session import Session
from eagle_tui.sources.logtail import LogTail
from eagle_tui.transport.base import TailChunk, TransportError
from eagle_tui.transport.local import LocalTransport

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vllm-cpu"
VLLM_LOG = (FIXTURES / "server-eagle3.log").read_bytes()


class Follower:
    """Runs an async iterator in the background and collects what it yields."""

    def __init__(self, it: AsyncIterator[object]) -> None:
        self.items: list[object] = []
        self._it = it
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async for item in self._it:
            if isinstance(item, list):  # the log tail yields each chunk's events as one list
                self.items.extend(item)
            else:
                self.items.append(item)

    async def wait_for(self, pred: object, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not pred():  # type: ignore[operator]
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; got {self.items[-5:]!r}")
            if self.task.done():
                self.task.result()
                raise AssertionError("iterator ended")
            await asyncio.sleep(0.005)

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


def data_of(items: list[object]) -> bytes:
    return b"".join(c.data for c in items if isinstance(c, TailChunk))


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


# --------------------------------------------------------------------------- transport.tail


@pytest.mark.parametrize(("stream", "most", "typical"), [
    (0.02, 0.5, 0.1),  # a fast stream interval: every append at the next 20 ms poll
    (None, 0.5 + 0.1 + 0.15, 0.5 + 0.1),  # the default: at the next point of the 0.5 s grid
])
async def test_waits_for_a_missing_file_then_follows_appends_fast(
        tmp_path: Path, stream: float | None, most: float, typical: float) -> None:
    path = tmp_path / "later.log"
    f = Follower(LocalTransport(stream_interval=stream).tail(str(path)))
    try:
        await asyncio.sleep(0.1)
        assert f.items == []
        append(path, b"first\n")
        await f.wait_for(lambda: data_of(f.items) == b"first\n")
        latencies = []
        for i in range(5):
            t0 = time.monotonic()
            append(path, b"line %d\n" % i)
            await f.wait_for(lambda i=i: data_of(f.items).endswith(b"line %d\n" % i))
            latencies.append(time.monotonic() - t0)
        assert max(latencies) < most and sorted(latencies)[2] < typical
        last = [c for c in f.items if isinstance(c, TailChunk) and c.data][-1]
        assert isinstance(last, TailChunk) and last.offset == path.stat().st_size
        assert last.at_eof is True
    finally:
        await f.close()


async def test_truncation_restarts_at_zero(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    path.write_bytes(b"one\ntwo\nthree\n")
    f = Follower(LocalTransport().tail(str(path)))
    try:
        await f.wait_for(lambda: data_of(f.items) == b"one\ntwo\nthree\n")
        with path.open("r+b") as fh:
            fh.truncate(0)
        await asyncio.sleep(0.1)
        append(path, b"again\n")
        await f.wait_for(lambda: any(isinstance(c, TailChunk) and c.restarted for c in f.items))
        await f.wait_for(lambda: data_of(f.items).endswith(b"again\n"))
        restart = next(c for c in f.items if isinstance(c, TailChunk) and c.restarted)
        assert isinstance(restart, TailChunk) and restart.restarted == "truncated"
        after = f.items[f.items.index(restart):]
        assert data_of(after) == b"again\n"
    finally:
        await f.close()


async def test_replacement_by_a_new_inode_restarts_at_zero(tmp_path: Path) -> None:
    path = tmp_path / "r.log"
    path.write_bytes(b"old run line 1\nold run line 2\n")
    f = Follower(LocalTransport().tail(str(path)))
    try:
        await f.wait_for(lambda: data_of(f.items).endswith(b"line 2\n"))
        new = tmp_path / "r.log.new"
        new.write_bytes(b"new run\n")  # shorter than the old one: size alone would not tell
        os.replace(new, path)
        await f.wait_for(lambda: data_of(f.items).endswith(b"new run\n"))
        restart = next(c for c in f.items if isinstance(c, TailChunk) and c.restarted)
        assert isinstance(restart, TailChunk) and restart.restarted == "replaced"
        assert data_of(f.items[f.items.index(restart):]) == b"new run\n"
    finally:
        await f.close()


async def test_deleted_file_keeps_being_read_until_a_new_one_appears(tmp_path: Path) -> None:
    path = tmp_path / "d.log"
    fh = path.open("ab", buffering=0)
    f = Follower(LocalTransport().tail(str(path)))
    try:
        fh.write(b"a\n")
        await f.wait_for(lambda: data_of(f.items) == b"a\n")
        path.unlink()  # e.g. logrotate without copytruncate: the writer still has the file open
        fh.write(b"b\n")
        await f.wait_for(lambda: data_of(f.items) == b"a\nb\n")
        path.write_bytes(b"fresh\n")
        await f.wait_for(lambda: data_of(f.items).endswith(b"fresh\n"))
        assert any(isinstance(c, TailChunk) and c.restarted == "replaced" for c in f.items)
    finally:
        fh.close()
        await f.close()


async def test_reads_in_bounded_chunks_and_resumes_from_an_offset(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    body = b"".join(b"line %06d\n" % i for i in range(10_000))  # 120 kB
    path.write_bytes(body)
    f = Follower(LocalTransport(chunk_size=4096).tail(str(path), offset=12_000))
    try:
        await f.wait_for(lambda: len(data_of(f.items)) == len(body) - 12_000)
        chunks = [c for c in f.items if isinstance(c, TailChunk) and c.data]
        assert max(len(c.data) for c in chunks) <= 4096
        assert data_of(f.items) == body[12_000:]
        assert [c.at_eof for c in chunks][:-1] == [False] * (len(chunks) - 1)
    finally:
        await f.close()


async def test_offset_past_the_end_means_truncated_while_away(tmp_path: Path) -> None:
    path = tmp_path / "short.log"
    path.write_bytes(b"short\n")
    f = Follower(LocalTransport().tail(str(path), offset=5000))
    try:
        await f.wait_for(lambda: data_of(f.items) == b"short\n")
        first = f.items[0]
        assert isinstance(first, TailChunk) and first.restarted == "truncated"
    finally:
        await f.close()


async def test_a_directory_is_a_transport_error(tmp_path: Path) -> None:
    with pytest.raises(TransportError, match="is a directory"):
        async for _ in LocalTransport().tail(str(tmp_path)):
            pass


# --------------------------------------------------------------------------- LogTail source


def lines_of(events: list[object]) -> list[LogLine]:
    return [e for e in events if isinstance(e, LogLine)]


async def test_logtail_parses_a_growing_real_vllm_log(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    src = LogTail(LocalTransport(), str(path))
    f = Follower(src.events())
    lines = [ln + b"\n" for ln in VLLM_LOG.split(b"\n")[:-1]]  # tqdm's \r is not a newline
    try:
        for i in range(0, len(lines), 25):
            append(path, b"".join(lines[i:i + 25]))
            await asyncio.sleep(0.01)
        await f.wait_for(lambda: len(lines_of(f.items)) == len(lines), timeout=10)
        got = lines_of(f.items)
        assert [ln.lineno for ln in got] == list(range(1, len(lines) + 1))
        assert got[0].text == lines[0].decode().rstrip("\n")
        phases = [e.phase for e in f.items if isinstance(e, PhaseEvent)]
        assert Phase.READY in phases
        assert src.offset == len(VLLM_LOG)
    finally:
        await f.close()


async def test_logtail_holds_a_partial_line_until_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "p.log"
    path.write_bytes(b"complete line\n")
    src = LogTail(LocalTransport(), str(path))
    f = Follower(src.events())
    try:
        await f.wait_for(lambda: len(lines_of(f.items)) == 1)
        append(path, b"half a li")
        await asyncio.sleep(0.15)
        assert len(lines_of(f.items)) == 1
        assert src.offset == len(b"complete line\n")  # the partial line is not consumed yet
        append(path, b"ne\n")
        await f.wait_for(lambda: len(lines_of(f.items)) == 2)
        assert lines_of(f.items)[1].text == "half a line"
        assert lines_of(f.items)[1].lineno == 2
    finally:
        await f.close()


async def test_logtail_restart_events_and_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "restart.log"
    path.write_bytes(b"a\nb\nc\n")
    src = LogTail(LocalTransport(), str(path))
    f = Follower(src.events())
    try:
        await f.wait_for(lambda: len(lines_of(f.items)) == 3)
        with path.open("r+b") as fh:
            fh.truncate(0)
        await asyncio.sleep(0.1)
        append(path, b"x\n")
        await f.wait_for(lambda: any(isinstance(e, LogRestarted) for e in f.items))
        await f.wait_for(lambda: lines_of(f.items)[-1].text == "x")
        restarted = [e for e in f.items if isinstance(e, LogRestarted)]
        assert [r.reason for r in restarted] == ["truncated"]
        assert lines_of(f.items)[-1].lineno == 1
        # replaced
        new = tmp_path / "n"
        new.write_bytes(b"y\nz\n")
        os.replace(new, path)
        await f.wait_for(lambda: lines_of(f.items)[-1].text == "z")
        assert [r.reason for r in f.items if isinstance(r, LogRestarted)] == [
            "truncated", "replaced"]
        assert [ln.lineno for ln in lines_of(f.items)[-2:]] == [1, 2]
        assert src.restarts == 2
    finally:
        await f.close()


async def test_catch_up_on_a_big_log_shows_only_the_tail_as_lines(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    head = VLLM_LOG  # phases, stats and the ready line are in here
    filler = b"".join(b"INFO 11-30 00:10:26 [loggers.py:1] filler %06d\n" % i
                      for i in range(40_000))
    path.write_bytes(head + filler)
    total = head.count(b"\n") + 40_000
    src = LogTail(LocalTransport(), str(path), catchup_lines=1000)
    f = Follower(src.events())
    try:
        await f.wait_for(lambda: src.offset == path.stat().st_size, timeout=30)
        await asyncio.sleep(0.05)
        got = lines_of(f.items)
        assert len(got) == 1000
        assert got[-1].lineno == total and got[0].lineno == total - 999
        # the fast path still found what matters in the head
        assert Phase.READY in [e.phase for e in f.items if isinstance(e, PhaseEvent)]
        # and then it follows live, line by line
        append(path, b"live line\n")
        await f.wait_for(lambda: lines_of(f.items)[-1].text == "live line")
        assert lines_of(f.items)[-1].lineno == total + 1
    finally:
        await f.close()


class FlakyTransport(LocalTransport):
    """A local transport whose tail breaks after a few chunks, like a dropped SSH link."""

    def __init__(self, fail_after: int) -> None:
        super().__init__(chunk_size=64)
        self.fail_after = fail_after
        self.calls: list[int] = []

    async def tail(self, path: str, offset: int = 0) -> AsyncIterator[TailChunk]:
        self.calls.append(offset)
        n = 0
        async for chunk in super().tail(path, offset):
            yield chunk
            n += 1
            if n >= self.fail_after and len(self.calls) < 4:
                raise TransportError("connection lost")


async def test_resume_after_a_transport_failure_loses_and_repeats_nothing(tmp_path: Path
                                                                          ) -> None:
    path = tmp_path / "flaky.log"
    body = b"".join(b"message number %04d with some padding\n" % i for i in range(300))
    path.write_bytes(body)
    transport = FlakyTransport(fail_after=7)
    src = LogTail(transport, str(path), catchup_lines=100_000)
    seen: list[Event] = []
    session = Session([src], tick_interval=None, batch_interval=0.0, backoff_initial=0.01)
    session.subscribe(lambda _s, b: seen.extend(b))
    runner = asyncio.create_task(session.run())
    try:
        deadline = time.monotonic() + 15
        while len(lines_of(seen)) < 300 and time.monotonic() < deadline:  # type: ignore[arg-type]
            await asyncio.sleep(0.02)
    finally:
        session.stop()
        await runner
    got = lines_of(seen)  # type: ignore[arg-type]
    assert [ln.lineno for ln in got] == list(range(1, 301))
    assert [ln.text for ln in got] == [ln.decode() for ln in body.splitlines()]
    assert len(transport.calls) >= 3
    # every reconnect resumed at a line boundary
    assert all(off == 0 or body[off - 1:off] == b"\n" for off in transport.calls)
    assert sum(1 for e in seen if type(e).__name__ == "SourceFailed") == len(transport.calls) - 1


async def test_catch_up_thins_old_stats_without_changing_the_state(tmp_path: Path) -> None:
    """300k stats lines took ~30 s to reduce one by one; the thinned catch-up must end in the
    same state as reducing every line (series, last values, phase, crash, hidden dims)."""
    from eagle_tui.model.fold.reducer import reduce
    from eagle_tui.model.ingest.parser import LogParser
    from eagle_tui.model.state import DashboardState

    decode = ("[2025-11-20 10:15:{:02d}] Decode batch, #running-req: {}, #token: 11584, "
              "token usage: 0.01, accept len: {:.2f}, accept rate: 0.68, cuda graph: True, "
              "gen throughput (token/s): {:.2f}, #queue-req: 1\n")
    body = [
        "[2025-11-20 10:14:38] Init torch distributed begin.\n",
        "[2025-11-20 10:14:40] Load weight begin. avail mem=78.58 GB\n",
        "[2025-11-20 10:15:00] The server is fired up and ready to roll!\n",
    ]
    body += [decode.format(i % 60, i % 7, 1.5 + (i % 13) / 10, 100 + i % 50) for i in range(4000)]
    body += ["[EAGLE3-DEBUG] hidden_states shape=torch.Size([21, 21504])\n"] * 50
    body += [decode.format(i % 60, 3, 2.0 + (i % 5) / 10, 90.0 + i) for i in range(1500)]
    path = tmp_path / "busy.log"
    path.write_text("".join(body))

    src = LogTail(LocalTransport(), str(path), catchup_lines=100)
    session = Session([src], tick_interval=None, batch_interval=0.0)
    runner = asyncio.create_task(session.run())
    deadline = time.monotonic() + 30
    while src.offset < path.stat().st_size and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)
    session.stop()
    thinned = await runner
    assert src.thinner.dropped > 4000  # most of the history was never reduced

    everything = LogParser().feed_lines(path.read_bytes())
    full = reduce(DashboardState(), everything)
    assert session.events_seen < len(everything) / 4
    for rec, name in (("startup", "phase"), ("startup", "phases"), ("startup", "engine"),
                      ("log", "lines"), ("stats", "running"), ("stats", "queued"),
                      ("stats", "kv_usage"), ("startup", "crash"), ("config", "hidden_dims"),
                      ("stats", "last_decode"), ("log", "recent_lines")):
        assert getattr(getattr(thinned, rec), name) == getattr(getattr(full, rec), name), name
    for series in ("accept_len", "gen_tps", "accept_rate"):
        a, b = getattr(thinned.stats, series), getattr(full.stats, series)
        assert a.values() == b.values() and len(a) == 600, series
        assert a.ewma == pytest.approx(b.ewma), series
