"""The line store (file-backed scrollback's I/O half) over the local transport."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from eagle_tui.model.buffers.linewindow import IndexFile, IndexProgress, LinesRead, ReadLines, Reply
from eagle_tui.sources.linestore import Scrollback
from eagle_tui.transport.base import MAX_RANGE_BYTES, TransportError
from eagle_tui.transport.local import LocalTransport


def _write(path: Path, n: int) -> list[bytes]:
    lines = [b"[2026-01-01 00:00:00] INFO line %d" % (i + 1) for i in range(n)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return lines


async def _ask(store: Scrollback, intent: IndexFile | ReadLines,
               until: type = LinesRead) -> list[Reply]:
    got: list[Reply] = []
    done = asyncio.Event()

    def reply(r: Reply) -> None:
        got.append(r)
        if isinstance(r, LinesRead) or r.done or r.error:  # type: ignore[union-attr]
            done.set()

    store.request(intent, reply)
    await asyncio.wait_for(done.wait(), 20)
    return got


async def test_index_then_read_any_line(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    lines = _write(log, 50_000)
    start = sum(len(ln) + 1 for ln in lines[:40_000])
    store = Scrollback()
    store.attach([LocalTransport()])
    progress = await _ask(store, IndexFile(str(log), "", start))
    last = progress[-1]
    assert isinstance(last, IndexProgress) and last.done and last.lines == 40_000
    for first in (0, 255, 256, 39_990, 45_000):  # 45,000: past the start, indexed on demand
        (answer,) = await _ask(store, ReadLines(str(log), "", first, 20))
        assert isinstance(answer, LinesRead) and not answer.error
        assert [ln.text.encode() for ln in answer.lines] == lines[first:first + 20]
        assert answer.lines[0].lineno == first + 1
    # past the end: fewer lines, no error
    (answer,) = await _ask(store, ReadLines(str(log), "", 49_995, 20))
    assert isinstance(answer, LinesRead) and len(answer.lines) == 5
    await store.close()


async def test_unknown_file_and_unattached_store_answer_with_an_error(tmp_path: Path) -> None:
    store = Scrollback()
    (answer,) = await _ask(store, ReadLines("x", "", 0, 1))
    assert isinstance(answer, LinesRead) and answer.error
    store.attach([LocalTransport()])
    (answer,) = await _ask(store, ReadLines("x", "", 0, 1))
    assert answer.error == "the file has no index"  # type: ignore[union-attr]
    progress = await _ask(store, IndexFile(str(tmp_path / "missing.log"), "", 100))
    assert progress[-1].error  # type: ignore[union-attr]
    (answer,) = await _ask(store, IndexFile("x", "elsewhere", 100))
    assert "no connection" in answer.error  # type: ignore[union-attr]


async def test_local_read_range(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(bytes(range(256)) * 4)
    tr = LocalTransport()
    assert await tr.read_range(str(path), 10, 5) == bytes(range(10, 15))
    assert await tr.read_range(str(path), 1020, 100) == bytes(range(252, 256))
    assert await tr.read_range(str(path), 5000, 100) == b""
    with pytest.raises(ValueError):
        await tr.read_range(str(path), 0, MAX_RANGE_BYTES + 1)
    with pytest.raises(TransportError, match="no such file"):
        await tr.read_range(str(tmp_path / "nope"), 0, 1)


async def test_search_the_file_both_ways_and_a_newer_search_cancels(tmp_path: Path) -> None:
    from eagle_tui.model.buffers.linewindow import FileMatch, SearchFile

    log = tmp_path / "server.log"
    lines = _write(log, 50_000)
    store = Scrollback()
    store.attach([LocalTransport()])
    await _ask(store, IndexFile(str(log), "", log.stat().st_size))
    got: list[Reply] = []
    done = asyncio.Event()

    def reply(r: Reply) -> None:
        got.append(r)
        if isinstance(r, FileMatch) and r.done and r.token == 2:
            done.set()

    query = r"line (123|45678)$"
    store.request(SearchFile(str(log), "", "line", 0, 50_000, False, 1), reply)  # cancelled
    store.request(SearchFile(str(log), "", query, 200, 50_000, False, 2), reply)
    await asyncio.wait_for(done.wait(), 20)
    assert [r.line for r in got if isinstance(r, FileMatch) and r.token == 2 and r.done] == [45_677]
    assert lines[45_677].endswith(b"line 45678")
    done.clear()
    got.clear()
    store.request(SearchFile(str(log), "", query, 0, 45_677, True, 2), reply)
    await asyncio.wait_for(done.wait(), 20)
    assert got[-1].line == 122  # type: ignore[union-attr]
    done.clear()
    store.request(SearchFile(str(log), "", "nowhere", 0, 50_000, True, 2), reply)
    await asyncio.wait_for(done.wait(), 20)
    assert got[-1].line is None and got[-1].searched == 50_000  # type: ignore[union-attr]
    await store.close()
