"""A tail started again at an offset (the log source retried) tells a replaced file from a
truncated one (issue 17, item 6): it said "log restarted (truncated)" for a replaced log, or
nothing at all when the new file was longer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eagle_tui.transport.base import TailChunk
from eagle_tui.transport.local import LocalTransport


async def _first(t: LocalTransport, path: Path, offset: int) -> TailChunk:
    it = aiter(t.tail(str(path), offset))
    try:
        return await anext(it)
    finally:
        await it.aclose()  # type: ignore[attr-defined]


@pytest.mark.parametrize("new_size", ["shorter", "longer"])
async def test_replaced_between_two_tails_is_replaced(tmp_path: Path, new_size: str) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"old run line 1\nold run line 2\n")
    t = LocalTransport(poll_interval=0.01)
    first = await _first(t, log, 0)
    assert first.offset == 30
    new = tmp_path / "server.log.new"
    new.write_bytes(b"new\n" if new_size == "shorter" else b"new run line\n" * 10)
    os.replace(new, log)  # another inode at the same path: a new nohup run
    again = await _first(t, log, first.offset)
    assert again.restarted == "replaced"
    assert again.data.startswith(b"new")


async def test_truncated_between_two_tails_is_truncated(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"old run line 1\nold run line 2\n")
    t = LocalTransport(poll_interval=0.01)
    first = await _first(t, log, 0)
    log.write_bytes(b"new\n")  # same inode, shorter
    again = await _first(t, log, first.offset)
    assert again.restarted == "truncated"
