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

        with pytest.raises(NotRegularFile, match="not a regular file") as err:
            await asyncio.wait_for(first(), 10.0)
        assert {"fifo": "fifo", "zero": "character", "dir": "directory"}[kind] in str(err.value)
        with pytest.raises(NotRegularFile):
            await asyncio.wait_for(t.read_file(path), 10.0)
