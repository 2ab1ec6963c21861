"""Following a log over SSH: exact offsets, truncation, replacement, missing files, cleanup."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from eagle_tui.transport.base import TailChunk
from eagle_tui.transport.ssh.tail import TailFollower

# --------------------------------------------------------------------------- pure bookkeeping


def test_follower_holds_partial_lines_and_counts_bytes() -> None:
    f = TailFollower(offset=0)
    f.start(resumed=False)
    assert f.feed_out(b"0 1") == []  # header not complete yet
    out = f.feed_out(b"23 100\nab")
    assert out == []  # header says: start 0, inode 123, backlog 100; "ab" is a partial line
    out = f.feed_out(b"c\nde")
    assert out == [TailChunk(b"abc\n", 4, "", False)]
    # a carriage return is a boundary too: progress bars redraw with \r and must show up live
    out = f.feed_out(b"f\rgh")
    assert out == [TailChunk(b"def\r", 8, "", False)]
    assert f.offset == 8
    # a reconnect drops the partial "gh": the new tail re-reads from byte 8
    f.start(resumed=True)
    assert f.feed_out(b"8 123 10\ngh\n") == [TailChunk(b"gh\n", 11, "", True)]


def test_follower_header_restarts() -> None:
    f = TailFollower(offset=50, inode=7)
    f.start(resumed=True)
    assert f.feed_out(b"0 7 20\n") == [TailChunk(b"", 0, "reconnected-truncated", False)]
    f = TailFollower(offset=50, inode=7)
    f.start(resumed=True)
    assert f.feed_out(b"0 8 500\n") == [TailChunk(b"", 0, "replaced", False)]
    f = TailFollower(offset=50)
    f.start(resumed=False)
    assert f.feed_out(b"0  0\n") == [TailChunk(b"", 0, "truncated", True)]  # missing file
    assert f.inode is None
    f = TailFollower(offset=0)
    f.start(resumed=False)
    with pytest.raises(ValueError, match="header"):
        f.feed_out(b"garbage\n")


def test_follower_stderr_notices() -> None:
    f = TailFollower(offset=0)
    f.start(resumed=False)
    f.feed_out(b"0 5 0\nabc\n")
    assert f.offset == 4
    assert f.feed_err(b"tail: cannot open 'x' for reading: No such file\n") == []
    assert f.feed_err(b"tail: x: file trunc") == []
    assert f.feed_err(b"ated\n") == [TailChunk(b"", 0, "truncated")]
    f.feed_out(b"new\n")
    assert f.feed_err(b"tail: 'x' has been replaced;  following new file\n") == [
        TailChunk(b"", 0, "replaced")
    ]
    assert f.inode is None
    # "has appeared" means a restart only if something had been read before
    assert f.feed_err(b"tail: 'x' has appeared;  following new file\n") == []
    assert "cannot open" in f.stderr_text()


# --------------------------------------------------------------------------- real sshd


async def next_chunk(it: AsyncIterator[TailChunk], timeout: float = 5.0) -> TailChunk:
    return await asyncio.wait_for(anext(it), timeout)


async def collect_until(it: AsyncIterator[TailChunk], want: bytes, timeout: float = 5.0) -> bytes:
    got = b""
    deadline = time.monotonic() + timeout
    while not got.endswith(want):
        got += (await next_chunk(it, max(0.1, deadline - time.monotonic()))).data
    return got


def remote_tails(path: Path) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["name", "cmdline"]):
        if p.info["name"] == "tail" and str(path) in (p.info["cmdline"] or []):
            found.append(p)
    return found


@pytest.mark.sshd
async def test_resume_from_an_offset_and_beyond_the_end(sshd: Any, tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"one\ntwo\nthree\n")
    async with sshd.transport() as t:
        it = aiter(t.tail(str(log), offset=4))
        chunk = await next_chunk(it)
        assert (chunk.data, chunk.offset, chunk.at_eof) == (b"two\nthree\n", 14, True)
        await it.aclose()  # type: ignore[attr-defined]
        it = aiter(t.tail(str(log), offset=99))  # beyond the end: the file was truncated
        first = await next_chunk(it)
        assert (first.restarted, first.offset) == ("truncated", 0)
        assert (await next_chunk(it)).data == b"one\ntwo\nthree\n"
        await it.aclose()  # type: ignore[attr-defined]


@pytest.mark.sshd
async def test_truncation_replacement_and_late_files(sshd: Any, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    async with sshd.transport() as t:
        it = aiter(t.tail(str(log)))
        first = await next_chunk(it)  # the file does not exist yet: caught up at 0
        assert (first.data, first.at_eof) == (b"", True)
        log.write_bytes(b"hello\n")
        assert await collect_until(it, b"hello\n") == b"hello\n"
        with log.open("ab") as fh:
            fh.write(b"more\n")
        assert await collect_until(it, b"more\n") == b"more\n"
        # truncate in place (copytruncate rotation)
        log.write_bytes(b"")
        restart = await next_chunk(it)
        assert (restart.restarted, restart.offset) == ("truncated", 0)
        with log.open("ab") as fh:
            fh.write(b"after truncate\n")
        assert await collect_until(it, b"after truncate\n") == b"after truncate\n"
        # replace by rename (a new launch writing a new file under the same name)
        new = tmp_path / "server.log.new"
        new.write_bytes(b"second run\n")
        os.replace(new, log)
        # the notice may come before or after the new content: everything after the restart
        # marker is exactly the new file
        restart = await next_chunk(it)
        while not restart.restarted:
            assert restart.data == b"second run\n"  # counted as old before the notice came
            restart = await next_chunk(it)
        assert (restart.restarted, restart.offset) == ("replaced", 0)
        assert await collect_until(it, b"second run\n") == b"second run\n"
        with log.open("ab") as fh:
            fh.write(b"third\n")
        chunk = await next_chunk(it)
        assert (chunk.data, chunk.offset) == (b"third\n", len(b"second run\nthird\n"))
        await it.aclose()  # type: ignore[attr-defined]


@pytest.mark.sshd
async def test_replaced_while_disconnected_restarts_by_inode(
    make_sshd: Any, tmp_path: Path
) -> None:
    srv = make_sshd()
    log = tmp_path / "x.log"
    log.write_bytes(b"old 1\nold 2\n")
    async with srv.transport() as t:
        it = aiter(t.tail(str(log)))
        assert (await next_chunk(it)).data == b"old 1\nold 2\n"
        srv.stop()
        new = tmp_path / "x.new"
        new.write_bytes(b"new file, longer than the old one\n")
        os.replace(new, log)
        srv.start()
        restart = await next_chunk(it, 8)
        assert restart.restarted == "replaced"
        assert (await next_chunk(it)).data == b"new file, longer than the old one\n"
        await it.aclose()  # type: ignore[attr-defined]


@pytest.mark.sshd
async def test_remote_tail_ends_with_its_session(make_sshd: Any, tmp_path: Path) -> None:
    srv = make_sshd()
    log = tmp_path / "y.log"
    log.write_bytes(b"x\n")
    t = srv.transport()
    await t.connect()
    it = aiter(t.tail(str(log)))
    await next_chunk(it)
    assert len(remote_tails(log)) == 1
    srv.kill_sessions()  # the connection dies under the running tail
    with log.open("ab") as fh:
        fh.write(b"y\n")
    assert (await next_chunk(it, 5)).data == b"y\n"  # resumed on a new session
    deadline = time.monotonic() + 3
    while len(remote_tails(log)) > 1 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert len(remote_tails(log)) == 1  # tail --pid=$PPID ended the orphan
    await it.aclose()  # type: ignore[attr-defined]
    await t.close()
    deadline = time.monotonic() + 3
    while remote_tails(log) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert remote_tails(log) == []


@pytest.mark.sshd
async def test_every_remote_command_reads_through_a_noisy_login_shell(
        make_sshd: Any, tmp_path: Path) -> None:
    """A login shell that prints on stdout and stderr before each command and from an exit trap
    after it (``conftest.NOISE_RC``): the tail gets all 4,000 lines byte for byte, a one-shot
    command its exact stdout, stderr and status, a stream its exact lines."""
    srv = make_sshd(noisy=True)
    log = tmp_path / "noisy.log"
    body = b"".join(b"[2025-01-01 00:00:00] line %d\n" % i for i in range(4000))
    log.write_bytes(body)
    async with srv.transport() as t:
        it = aiter(t.tail(str(log)))
        got = b""
        while len(got) < len(body):
            got += (await next_chunk(it)).data
        assert got == body
        with log.open("ab") as fh:
            fh.write(b"one more\n")
        assert (await next_chunk(it)).data == b"one more\n"
        await it.aclose()  # type: ignore[attr-defined]
        res = await t.run(["sh", "-c", 'printf "out\\nno newline"; printf "err" >&2; exit 3'])
        assert (res.exit_code, res.stdout, res.stderr) == (3, b"out\nno newline", b"err")
        res = await t.run(["printf", ""])
        assert (res.exit_code, res.stdout, res.stderr) == (0, b"", b"")
        lines = [line async for line in t.stream_lines(["seq", "1", "500"])]
        assert lines == [str(i).encode() for i in range(1, 501)]
        res = await t.run(["cat", "--", str(log)], 30.0)
        assert res.stdout == body + b"one more\n"


@pytest.mark.sshd
async def test_a_steady_stream_arrives_in_few_chunks_every_byte_in_order(
        sshd: Any, tmp_path: Path) -> None:
    """A line a write at 200 lines/s is not 200 hand-overs a second: the remote tail polls
    (GNU's ``---disable-inotify``) and the reader gathers what arrives together."""
    log = tmp_path / "steady.log"
    log.write_bytes(b"")
    lines = [f"line {i:04d} {'x' * 60}\n".encode() for i in range(300)]
    async with sshd.transport() as t:
        it = aiter(t.tail(str(log)))
        assert (await next_chunk(it)).at_eof

        async def write() -> None:
            with log.open("ab", buffering=0) as fh:
                for line in lines:
                    fh.write(line)
                    await asyncio.sleep(1 / 200)

        writer = asyncio.create_task(write())
        chunks: list[TailChunk] = []
        got = b""
        deadline = time.monotonic() + 15
        while got != b"".join(lines):
            chunk = await next_chunk(it, max(0.1, deadline - time.monotonic()))
            chunks.append(chunk)
            got += chunk.data
        await writer
        await it.aclose()  # type: ignore[attr-defined]
    assert len(chunks) <= len(lines) // 10, len(chunks)
    assert chunks[-1].offset == len(got)
