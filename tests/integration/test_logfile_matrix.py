"""The log-file matrix of docs/reliability.md: the cases ``test_logtail.py`` does not cover.

Rotated (renamed away, a new file at the path), permissions changed while followed, a symlink
swapped to another file, NUL-filled and newline-less, and lines of 1 MB growing while read:
what the local tail and the ``LogTail`` source do in each, and that nothing blocks or grows.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from eagle_tui.model.events import LogLine
from eagle_tui.model.ingest.framing import is_cut
from eagle_tui.sources.logtail import LogTail
from eagle_tui.transport.base import TailChunk
from eagle_tui.transport.local import LocalTransport
from tests.integration.test_logtail import Follower, append, data_of


async def test_rotated_log_restarts_on_the_new_file(tmp_path: Path) -> None:
    """logrotate without copytruncate: the old file is renamed, a new one created."""
    path = tmp_path / "server.log"
    path.write_bytes(b"old 1\nold 2\n")
    f = Follower(LocalTransport().tail(str(path)))
    try:
        await f.wait_for(lambda: data_of(f.items).endswith(b"old 2\n"))
        path.rename(tmp_path / "server.log.1")
        path.write_bytes(b"new 1\n")
        await f.wait_for(lambda: data_of(f.items).endswith(b"new 1\n"))
        restart = next(c for c in f.items if isinstance(c, TailChunk) and c.restarted)
        assert isinstance(restart, TailChunk) and restart.restarted == "replaced"
        assert data_of(f.items[f.items.index(restart):]) == b"new 1\n"
    finally:
        await f.close()


async def test_permissions_removed_while_followed_keep_the_open_file(tmp_path: Path) -> None:
    """chmod on a followed file (write-only): the open descriptor keeps reading what is
    appended (as root the mode never stops a read, so this holds there too)."""
    path = tmp_path / "perm.log"
    path.write_bytes(b"a\n")
    f = Follower(LocalTransport().tail(str(path)))
    try:
        await f.wait_for(lambda: data_of(f.items) == b"a\n")
        os.chmod(path, 0o200)  # the writer may still write; nobody may open it for reading
        append(path, b"b\n")
        await f.wait_for(lambda: data_of(f.items) == b"a\nb\n")
    finally:
        path.chmod(0o600)
        await f.close()


async def test_symlink_swapped_to_another_file_restarts_on_it(tmp_path: Path) -> None:
    a, b = tmp_path / "run-a.log", tmp_path / "run-b.log"
    a.write_bytes(b"run a\n")
    b.write_bytes(b"run b\n")
    link = tmp_path / "latest.log"
    link.symlink_to(a)
    f = Follower(LocalTransport().tail(str(link)))
    try:
        await f.wait_for(lambda: data_of(f.items).endswith(b"run a\n"))
        tmp = tmp_path / "latest.tmp"
        tmp.symlink_to(b)
        os.replace(tmp, link)  # ln -sfn run-b.log latest.log, atomically
        await f.wait_for(lambda: data_of(f.items).endswith(b"run b\n"))
        assert any(isinstance(c, TailChunk) and c.restarted == "replaced" for c in f.items)
    finally:
        await f.close()


def _lines(items: list[object]) -> list[LogLine]:
    return [e for e in items if isinstance(e, LogLine)]


async def test_nul_filled_newline_less_file_gives_cut_lines(tmp_path: Path) -> None:
    """A NUL-filled (sparse) file growing: lines cut at 1 MiB, shown as cut, no NUL shown."""
    path = tmp_path / "zeros.log"
    path.write_bytes(b"")
    f = Follower(LogTail(LocalTransport(), str(path)).events())
    try:
        for _ in range(3):
            append(path, bytes(1 << 20))
            await asyncio.sleep(0.2)
        append(path, b"\n")
        await f.wait_for(lambda: len(_lines(f.items)) >= 3, timeout=20)
        lines = _lines(f.items)
        assert [is_cut(e) for e in lines] == [True, True, False], len(lines)  # (3 MiB: 2 cuts)
        assert not any("\x00" in e.text for e in lines)
    finally:
        await f.close()


async def test_growing_1_mb_lines_arrive_cut_and_in_order(tmp_path: Path) -> None:
    path = tmp_path / "long.log"
    path.write_bytes(b"")
    f = Follower(LogTail(LocalTransport(), str(path)).events())
    try:
        for i in range(3):
            append(path, (f"{i} ".encode() + b"w" * (3 << 20)) + b"\n")
            await asyncio.sleep(0.3)
        await f.wait_for(lambda: any(e.lineno == 12 for e in _lines(f.items)), timeout=20)
        lines = _lines(f.items)
        assert [e.lineno for e in lines] == list(range(1, 13)), [e.lineno for e in lines]
        assert [e.text[:2] for e in lines if not e.text.startswith("w")] == ["0 ", "1 ", "2 "]
        assert [is_cut(e) for e in lines] == [True, True, True, False] * 3
    finally:
        await f.close()
