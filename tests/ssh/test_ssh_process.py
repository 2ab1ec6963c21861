"""The server process on the remote host, found and watched with ps and /proc over SSH."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.model.events import ProcessExited, ProcessSample
from eagle_tui.sources.remote_process import (
    RemoteProcessWatcher,
    glob_escape,
    parse_ps,
    root_of,
    tree,
)

LISTENER = (
    "import socket, subprocess, sys, time\n"
    "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
    "child = subprocess.Popen(['sleep', '60'])\n"  # a worker: counted in the tree
    "print(s.getsockname()[1], flush=True)\n"
    "time.sleep(60)\n"
)


def test_parse_ps_and_tree() -> None:
    rows = parse_ps(
        "    1     0 Ss    1000  500 systemd\n"
        "  100     1 Sl  2048    60 python3 -m sglang\n"
        "  101   100 R   1024    59 sglang::scheduler\n"
        "  102   101 Z      0    58 defunct\n"
        "garbage line\n"
    )
    assert rows[100].comm == "python3 -m sglang"
    assert rows[101].stat == "R"
    assert [r.pid for r in tree(100, rows)] == [100, 101, 102]
    assert root_of({100, 101, 102}, rows) == 100
    assert glob_escape("/a*b?[c]\\d") == "/a\\*b\\?\\[c\\]\\\\d"


@pytest.mark.sshd
async def test_found_by_port_sampled_and_exit_reported(sshd: Any) -> None:
    proc = subprocess.Popen([sys.executable, "-c", LISTENER], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        async with sshd.transport() as t:
            watcher = RemoteProcessWatcher(t, port=port, poll_interval=0.2)
            it = aiter(watcher.events())
            sample = await asyncio.wait_for(anext(it), 10)
            assert isinstance(sample, ProcessSample)
            assert (sample.pid, sample.status) == (proc.pid, "sleeping")
            assert sample.num_procs == 2
            assert sample.rss_bytes is not None and sample.rss_bytes > 1 << 20
            proc.kill()
            proc.wait()
            t0 = time.monotonic()
            ev = None
            while not isinstance(ev, ProcessExited):
                ev = await asyncio.wait_for(anext(it), 5)
            assert ev.pid == proc.pid
            assert time.monotonic() - t0 < 2
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.sshd
async def test_found_by_log_holder_with_a_hostile_path(sshd: Any, tmp_path: Path) -> None:
    log = tmp_path / "run [1] *$(x).log"
    holder = subprocess.Popen(
        ["sh", "-c", 'exec 3>>"$1"; sleep 1 & exec sleep 60', "sh", str(log)],
    )
    try:
        deadline = time.monotonic() + 5
        while not log.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        async with sshd.transport() as t:
            watcher = RemoteProcessWatcher(t, log_path=str(log), poll_interval=0.2)
            assert await watcher.find() == holder.pid
            other = RemoteProcessWatcher(t, log_path=str(tmp_path / "other.log"))
            assert await other.find() is None
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.sshd
async def test_unknown_pid_is_not_found_then_exited(sshd: Any) -> None:
    async with sshd.transport() as t:
        events = [ev async for ev in RemoteProcessWatcher(t, 4_000_000).events()]
    assert [type(e) for e in events] == [ProcessSample, ProcessExited]
    assert isinstance(events[0], ProcessSample) and events[0].status == "not_found"
