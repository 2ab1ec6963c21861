"""The range read over SSH (file-backed scrollback): exact bytes, hostile paths, errors, and the
line store on top of it, against the loopback sshd."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.model.buffers.linewindow import IndexFile, IndexProgress, LinesRead, ReadLines, Reply
from eagle_tui.sources.linestore import Scrollback
from eagle_tui.transport.base import MAX_RANGE_BYTES, TransportError
from tests.ssh.test_ssh_quoting import HOSTILE, MARK, markers

pytestmark = pytest.mark.sshd


async def test_range_reads_exact_bytes_of_hostile_paths(sshd: Any, tmp_path: Path) -> None:
    base = tmp_path / "dir with 'quotes' and $(x)"
    base.mkdir()
    async with sshd.transport() as t:
        for i, name in enumerate(HOSTILE):
            path = base / name
            data = bytes((i + k) % 256 for k in range(3000))
            path.write_bytes(data)
            assert await t.read_range(str(path), 0, 10) == data[:10], name
            assert await t.read_range(str(path), 2990, 100) == data[2990:], name
            assert await t.read_range(str(path), 5000, 10) == b"", name
    assert markers(tmp_path, Path.cwd(), Path("/tmp")) == [], MARK


async def test_range_read_of_a_big_file_and_its_errors(sshd: Any, tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    data = bytes(range(256)) * (12 << 12)  # 12 MiB
    path.write_bytes(data)
    async with sshd.transport() as t:
        got = await t.read_range(str(path), 5_000_001, 1 << 20)
        assert got == data[5_000_001:5_000_001 + (1 << 20)]
        with pytest.raises(ValueError):
            await t.read_range(str(path), 0, MAX_RANGE_BYTES + 1)
        with pytest.raises(TransportError, match="no such readable file"):
            await t.read_range(str(tmp_path / "missing.log"), 0, 10)


async def test_line_store_over_ssh(sshd: Any, tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    lines = [b"[2026-01-01 00:00:00] INFO line %d" % (i + 1) for i in range(30_000)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    start = sum(len(ln) + 1 for ln in lines[:25_000])
    async with sshd.transport() as t:
        store = Scrollback()
        store.attach([t])
        got: list[Reply] = []
        done = asyncio.Event()

        def reply(r: Reply) -> None:
            got.append(r)
            if isinstance(r, LinesRead) or r.done or r.error:
                done.set()

        store.request(IndexFile(str(path), t.host, start), reply)
        await asyncio.wait_for(done.wait(), 30)
        assert isinstance(got[-1], IndexProgress) and got[-1].done and got[-1].lines == 25_000
        for first in (0, 12_345, 27_000):
            done.clear()
            store.request(ReadLines(str(path), t.host, first, 50), reply)
            await asyncio.wait_for(done.wait(), 30)
            answer = got[-1]
            assert isinstance(answer, LinesRead) and not answer.error
            assert [ln.text.encode() for ln in answer.lines] == lines[first:first + 50]
        await store.close()
