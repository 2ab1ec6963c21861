"""Over SSH too, a log or a file that is not regular is refused, never followed (issue 17,
item 4): ``tail -F`` of a FIFO without a writer never ends, of ``/dev/zero`` never stops."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.transport.base import NotRegularFile

pytestmark = pytest.mark.sshd


@pytest.mark.parametrize("kind", ["fifo", "zero", "dir"])
async def test_remote_tail_and_read_refuse_what_is_not_regular(sshd: Any, tmp_path: Path,
                                                               kind: str) -> None:
    path = {"fifo": str(tmp_path / "f.log"), "zero": "/dev/zero", "dir": str(tmp_path)}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    async with sshd.transport() as t:
        async def first() -> None:
            async for _ in t.tail(path):
                break

        with pytest.raises(NotRegularFile, match=r"not a regular file|is a directory") as err:
            await asyncio.wait_for(first(), 10.0)
        assert {"fifo": "fifo", "zero": "character", "dir": "directory"}[kind] in str(err.value)
        with pytest.raises(NotRegularFile):
            await asyncio.wait_for(t.read_file(path), 10.0)
        with pytest.raises(NotRegularFile):  # the scrollback's reader
            await asyncio.wait_for(t.read_range(path, 0, 4096), 10.0)


async def test_remote_tail_again_after_a_replacement_says_replaced(sshd: Any,
                                                                  tmp_path: Path) -> None:
    """Issue 17: a replaced log was announced "truncated" once the tail started again."""
    log = tmp_path / "server.log"
    log.write_bytes(b"old run line 1\nold run line 2\n")
    async with sshd.transport() as t:
        it = aiter(t.tail(str(log)))
        first = await asyncio.wait_for(anext(it), 10.0)
        await it.aclose()  # type: ignore[attr-defined]
        new = tmp_path / "server.log.new"
        new.write_bytes(b"new\n")
        os.replace(new, log)
        it = aiter(t.tail(str(log), first.offset))
        again = await asyncio.wait_for(anext(it), 10.0)
        await it.aclose()  # type: ignore[attr-defined]
    assert again.restarted == "replaced"
