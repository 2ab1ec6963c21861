"""A remote command ends with its session: none is left on the host by a call that gave up.

sshd neither hangs up a command without a terminal nor kills it when its channel or connection
closes: a ``wc`` of a FIFO outlived eagle-tui, one per try, and a ``logs --follow`` of a quiet
container lived as long as the container. Every framed command now runs as a job that a watcher
ends once the connection is gone (``transport/ssh/frame.guarded``) or, for ``run``, shortly
after its timeout. Each command here blocks for ever on a FIFO of its own, so a process left
behind is found by its argv.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.transport.base import TransportError

pytestmark = pytest.mark.sshd


def _running(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(int(pid))
    return found


def _gone_within(marker: str, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while _running(marker):
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


async def test_a_run_that_timed_out_leaves_nothing(sshd: Any, tmp_path: Path) -> None:
    fifo = tmp_path / "never-written-run"
    os.mkfifo(fifo)
    async with sshd.transport() as t:
        with pytest.raises(TransportError, match="timed out"):
            await t.run(["cat", str(fifo)], timeout=1.0)
        assert _running(str(fifo))  # (the connection is alive: the limit ends it, not its end)
        assert await asyncio.to_thread(_gone_within, str(fifo), 5.0), _running(str(fifo))


async def test_a_stream_ends_with_its_connection(sshd: Any, tmp_path: Path) -> None:
    fifo = tmp_path / "never-written-stream"
    os.mkfifo(fifo)
    async with sshd.transport() as t:
        lines = t.stream_lines(["cat", str(fifo)])
        reader = asyncio.ensure_future(anext(lines))
        for _ in range(100):
            if _running(str(fifo)):
                break
            await asyncio.sleep(0.05)
        assert _running(str(fifo))
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
            await reader
        await lines.aclose()
    assert await asyncio.to_thread(_gone_within, str(fifo), 4.0), _running(str(fifo))
