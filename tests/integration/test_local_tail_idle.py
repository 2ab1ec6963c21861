"""The local tail slows its poll when the file is quiet; an append after idling still arrives."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from eagle_tui.transport import local
from eagle_tui.transport.local import LocalTransport


def paced() -> LocalTransport:
    """The dashboard's transport: a stream read on its repaint grid."""
    return LocalTransport(stream_interval=local.STREAM_POLL_S)


async def append_latency(tmp_path: Path, quiet_s: float,
                         transport: LocalTransport | None = None) -> float:
    """Follow a one-line file, stay quiet ``quiet_s`` s, append a line: seconds until it came."""
    path = tmp_path / "server.log"
    path.write_bytes(b"first\n")
    transport = transport or LocalTransport()
    got: list[tuple[bytes, float]] = []

    async def follow() -> None:
        async for chunk in transport.tail(str(path)):
            if chunk.data:
                got.append((chunk.data, time.monotonic()))
            if len(got) == 2:
                return

    task = asyncio.create_task(follow())
    await asyncio.sleep(quiet_s)
    assert [d for d, _ in got] == [b"first\n"]
    written = time.monotonic()
    with path.open("ab") as fh:
        fh.write(b"second\n")
    await asyncio.wait_for(task, 5.0)
    await transport.close()
    assert got[1][0] == b"second\n"
    return got[1][1] - written


async def test_append_after_idle_arrives_within_the_idle_poll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local, "IDLE_AFTER_S", 0.2)  # go idle quickly for the test
    # well past IDLE_AFTER_S: the tail now polls every IDLE_POLL_S
    latency = await append_latency(tmp_path, 1.0)
    assert latency < local.IDLE_POLL_S + 0.4  # one idle poll plus scheduling slack


def test_poll_slows_down_in_two_steps_and_never_below_the_configured_interval() -> None:
    transport = paced()
    assert transport._poll_delay(0.0, 100.0) == local.DEFAULT_POLL_S
    assert transport._poll_delay(local.IDLE_AFTER_S, 100.0) == local.IDLE_POLL_S
    step, lead = local.STREAM_POLL_S, local.STREAM_LEAD_S
    for now in (100.0, 100.1, 100.0 + step - lead, 100.37):
        # quiet: the next poll falls on the stream grid (just before one of the log's repaints)
        due = now + transport._poll_delay(local.QUIET_AFTER_S + 1, now)
        assert abs((due + lead) / step - round((due + lead) / step)) < 1e-6
        assert due - now <= step + local.DEFAULT_POLL_S
    for now in (100.0, 100.3, 100.93, 101.5):
        # silent: every second point of the grid
        due = now + transport._poll_delay(local.SILENT_AFTER_S + 1, now)
        grid = step * local.SILENT_STEPS
        assert abs((due + lead) / grid - round((due + lead) / grid)) < 1e-6
        assert due - now <= grid + local.DEFAULT_POLL_S
    slow = LocalTransport(poll_interval=0.5)
    assert slow._poll_delay(local.QUIET_AFTER_S + 1, 100.0) == 0.5
    # a headless reader (no grid asked for) stays at the idle poll however long it is quiet
    headless = LocalTransport()
    assert headless._poll_delay(local.SILENT_AFTER_S + 1, 100.0) == local.IDLE_POLL_S


async def test_append_after_a_long_quiet_spell_arrives_by_the_next_repaint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local, "IDLE_AFTER_S", 0.1)
    monkeypatch.setattr(local, "QUIET_AFTER_S", 0.3)
    # past QUIET_AFTER_S: the tail now polls on the stream grid
    latency = await append_latency(tmp_path, 1.0, paced())
    assert latency < local.STREAM_POLL_S + local.DEFAULT_POLL_S + 0.4


def test_a_steady_stream_is_read_on_the_grid_and_a_flood_at_the_poll() -> None:
    transport = paced()
    step, lead = local.STREAM_POLL_S, local.STREAM_LEAD_S
    for now in (100.0, 100.0 + step / 3, 100.0 + step - lead, 100.0 + step - lead - 0.01):
        wait = transport._stream_delay(500, step, now)
        due = now + wait
        # the next read falls just before a point of the grid, never sooner than the poll
        assert abs((due + lead) / step - round((due + lead) / step)) < 1e-6
        assert local.DEFAULT_POLL_S <= wait <= step + local.DEFAULT_POLL_S
    # a grid step's worth of a flood: read again soon
    assert transport._stream_delay(local.BURST_BYTES, step, 100.0) == local.DEFAULT_POLL_S
    # a flood's first writes, caught by a read soon after they began: read again soon too
    first = local.BURST_BYTES // 2
    assert transport._stream_delay(first, 0.1, 100.0) == local.DEFAULT_POLL_S
    assert transport._stream_delay(first, step, 100.0) > local.DEFAULT_POLL_S  # (a steady stream)
    # the poll counts from the read: a consumer that parsed the chunk for longer reads at once
    poll = local.DEFAULT_POLL_S
    assert transport._stream_delay(local.BURST_BYTES, step, 100.0, poll / 4) == 0.75 * poll
    assert transport._stream_delay(local.BURST_BYTES, step, 100.0, 3 * poll) == 0.0
    assert LocalTransport()._stream_delay(500, step, 100.0, 2 * poll) == 0.0
    # a caller polling faster than the default reads at its own pace while streaming too
    fast = LocalTransport(poll_interval=0.01)
    assert fast._stream_delay(500, step, 100.0) == 0.01
    # and a headless reader at the default poll
    assert LocalTransport()._stream_delay(500, step, 100.0) == local.DEFAULT_POLL_S


async def test_lines_streaming_in_arrive_in_grid_sized_reads(tmp_path: Path) -> None:
    """A writer appending every 20 ms: the tail reads about once per grid step, not per line."""
    path = tmp_path / "server.log"
    path.write_bytes(b"first\n")
    transport = paced()
    reads: list[bytes] = []

    async def follow() -> None:
        async for chunk in transport.tail(str(path)):
            if chunk.data:
                reads.append(chunk.data)

    task = asyncio.create_task(follow())
    seconds = 2 * local.STREAM_POLL_S + 0.3
    with path.open("ab", buffering=0) as fh:
        for i in range(int(seconds / 0.02)):
            fh.write(b"line %d\n" % i)
            await asyncio.sleep(0.02)
    await asyncio.sleep(local.STREAM_POLL_S + 0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await transport.close()
    lines = b"".join(reads).splitlines()
    assert lines[0] == b"first" and lines[-1] == b"line %d" % (int(seconds / 0.02) - 1)
    assert len(reads) <= seconds / local.STREAM_POLL_S + 3  # was one read per 50 ms poll


async def test_a_flood_is_read_at_the_poll_even_when_its_last_read_is_small(tmp_path: Path) -> None:
    """A flood's bytes arrive as full chunks and a small remainder: the next read still comes
    after the poll, not at the stream grid (made 1,000 s here, so waiting for it would show)."""
    path = tmp_path / "server.log"
    path.write_bytes(b"")
    transport = LocalTransport(chunk_size=1 << 15, stream_interval=1000.0)
    got: list[bytes] = []
    flood = b"x" * 99 + b"\n"
    big = flood * ((local.BURST_BYTES * 3) // len(flood) + 7)  # chunks, then a short remainder

    async def follow() -> None:
        async for chunk in transport.tail(str(path)):
            got.append(chunk.data)
            if chunk.data.endswith(b"last\n"):
                return

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.2)
    with path.open("ab") as fh:
        fh.write(big)
    while sum(map(len, got)) < len(big):
        await asyncio.sleep(0.01)
    written = time.monotonic()
    with path.open("ab") as fh:
        fh.write(b"last\n")
    await asyncio.wait_for(task, 5.0)
    await transport.close()
    assert time.monotonic() - written < 1.0


def test_the_dashboard_reads_on_its_grid_and_a_headless_command_at_the_poll() -> None:
    from eagle_tui.assembly.remote import make_transports
    from eagle_tui.assembly.spec import SshSpec

    screen, = make_transports(SshSpec(), screen=True)
    headless, = make_transports(SshSpec())
    assert isinstance(screen, LocalTransport) and isinstance(headless, LocalTransport)
    assert screen.stream_interval == local.STREAM_POLL_S
    assert headless.stream_interval == headless.poll_interval == local.DEFAULT_POLL_S


async def test_a_trickle_into_a_quiet_file_leaves_it_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An idle server's log grows by the access lines of the dashboard's own polls every few
    seconds: each such line began the fast polls again (every 50 ms, then 100 ms, for
    seconds). A read of a few lines into a quiet file now leaves it on its quiet cadence (the
    log's repaint grid), and every line still comes."""
    monkeypatch.setattr(local, "IDLE_AFTER_S", 0.1)
    monkeypatch.setattr(local, "QUIET_AFTER_S", 0.3)
    path = tmp_path / "server.log"
    path.write_bytes(b"first\n")
    waits: list[float] = []

    class Clock:  # the tail's asyncio, its sleeps counted
        def __getattr__(self, name: str) -> object:
            return getattr(asyncio, name)

        async def sleep(self, delay: float) -> None:
            waits.append(delay)
            await asyncio.sleep(delay)

    transport = paced()
    got: list[bytes] = []

    async def follow() -> None:
        async for chunk in transport.tail(str(path)):
            got.append(chunk.data)

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.8)  # quiet past QUIET_AFTER_S: on the grid
    monkeypatch.setattr(local, "asyncio", Clock())
    for i in range(4):  # a poll's access line every 0.8 s
        with path.open("ab") as fh:
            fh.write(b'INFO: 127.0.0.1:1 - "GET /metrics?eagle-tui HTTP/1.1" 200 OK %d\n' % i)
        await asyncio.sleep(0.8)
    task.cancel()
    await transport.close()
    assert b"".join(got).count(b"eagle-tui") == 4
    # on the grid: no wait shorter than the idle poll's (after each line, ~4 were)
    assert not [w for w in waits if w < local.IDLE_POLL_S], waits
