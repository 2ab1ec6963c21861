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


@pytest.mark.sshd
async def test_a_reader_of_the_log_is_never_the_server(sshd: Any, tmp_path: Path) -> None:
    """eagle-tui's own remote ``tail -F`` holds the log open for reading: it must not be taken
    for the server (a dropped connection would end the tail and read as a crash)."""
    log = tmp_path / "server.log"
    log.write_text("[2026-12-01 10:00:00] starting\n")
    reader = subprocess.Popen(["tail", "-F", str(log)], stdout=subprocess.DEVNULL)
    writer = None
    try:
        async with sshd.transport() as t:
            time.sleep(0.2)
            watcher = RemoteProcessWatcher(t, log_path=str(log), poll_interval=0.2)
            assert await watcher.find() is None  # only a reader: no server
            writer = subprocess.Popen(["sh", "-c", 'exec 3>>"$1"; exec sleep 60', "sh",
                                       str(log)])
            deadline = time.monotonic() + 5
            found = None
            while found is None and time.monotonic() < deadline:
                found = await watcher.find()
                await asyncio.sleep(0.05)
            assert found == writer.pid
    finally:
        for p in (reader, writer):
            if p is not None:
                p.kill()
                p.wait()


@pytest.mark.sshd
@pytest.mark.slow
def test_dropped_connection_is_never_a_crash(sshd: Any, tmp_path: Path) -> None:
    """``wait --ssh --log`` (no pid, no url) through a dropped SSH session: still waiting, then
    ready when the log says so — never "crashed" (exit 1) because its own tail ended."""
    import os

    log = tmp_path / "remote.log"
    log.write_text("[2026-12-01 10:00:00] server_args=ServerArgs(model_path='m')\n")
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    env["HOME"] = str(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "eagle_tui", "wait", *sshd.cli_args(),
                             "--log", str(log), "--timeout", "40", "--gpu", "none"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(3)
        assert proc.poll() is None
        assert sshd.kill_sessions() >= 1  # the connection drops (tail and all)
        time.sleep(2)
        assert proc.poll() is None, proc.communicate()
        with log.open("a") as fh:
            fh.write("[2026-12-01 10:00:30] The server is fired up and ready to roll!\n")
        out, err = proc.communicate(timeout=40)
        assert proc.returncode == 0, out + err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
