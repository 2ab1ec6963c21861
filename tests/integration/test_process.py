"""ProcessWatcher with real processes: normal exit, SIGKILL, an unreaped zombie, finding by
port and by log file, and the tree's RSS."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from eagle_tui.model.events import Event, ProcessExited, ProcessSample
from eagle_tui.model.views.ticks import GRID_LEAD_S
from eagle_tui.sources.exitwatch import ExitWatch
from eagle_tui.sources.process import (
    ProcessWatcher,
    decode_wait_status,
    descendant_pids,
    descendants,
    find_listener,
    find_log_holder,
    status_of,
)

PY = sys.executable


async def collect(watcher: ProcessWatcher, limit_s: float = 10.0) -> list[Event]:
    out: list[Event] = []

    async def run() -> None:
        async for ev in watcher.events():
            out.append(ev)

    await asyncio.wait_for(run(), limit_s)
    return out


def exited(events: list[Event]) -> ProcessExited:
    ends = [e for e in events if isinstance(e, ProcessExited)]
    assert len(ends) == 1 and events[-1] is ends[0]
    return ends[0]


async def test_child_exiting_normally_reports_its_exit_code_quickly() -> None:
    child = subprocess.Popen([PY, "-c", "import time; time.sleep(0.6); raise SystemExit(3)"])
    watcher = ProcessWatcher(child.pid, sample_interval=0.2)
    t_start = time.monotonic()
    events = await collect(watcher)
    ex = exited(events)
    detected = time.time() - ex.t
    assert ex.pid == child.pid and ex.exit_code == 3 and ex.signal is None
    assert time.monotonic() - t_start < 3.0
    assert detected < 1.0
    samples = [e for e in events if isinstance(e, ProcessSample)]
    assert samples and samples[0].status in ("running", "sleeping")
    # the first sample may come right after exec, before the interpreter has grown: any RSS
    assert samples[0].rss_bytes and samples[0].rss_bytes > 0
    assert samples[0].name.startswith("python")
    child.wait()


async def killed_while_watched(**options: float) -> tuple[list[Event], float]:
    """A sleeping child watched by a ``ProcessWatcher(**options)``, SIGKILLed 0.4 s in: the
    watch's events and when the kill was sent."""
    child = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"])
    try:
        task = asyncio.create_task(collect(ProcessWatcher(child.pid, **options)))
        await asyncio.sleep(0.4)
        killed_at = time.time()
        os.kill(child.pid, signal.SIGKILL)
        return await task, killed_at
    finally:
        child.kill()
        child.wait()


async def test_sigkill_is_reported_within_a_second() -> None:
    events, killed_at = await killed_while_watched()
    ex = exited(events)
    assert ex.t - killed_at < 1.0
    assert ex.signal == signal.SIGKILL and ex.exit_code == 128 + signal.SIGKILL


def spawn_zombie_parent() -> tuple[subprocess.Popen[bytes], int]:
    """A parent that starts a short-lived child and never reaps it: the child becomes a zombie
    whose parent is not us (so psutil cannot reap it for us)."""
    code = (
        "import os, subprocess, sys, time\n"
        "p = subprocess.Popen(['sh', '-c', 'sleep 0.5; exit 7'])\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(30)\n"
    )
    parent = subprocess.Popen([PY, "-c", code], stdout=subprocess.PIPE)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    return parent, pid


async def test_unreaped_zombie_counts_as_exited_with_its_status() -> None:
    parent, pid = spawn_zombie_parent()
    try:
        watcher = ProcessWatcher(pid)
        events = await collect(watcher)
        # the zombie is still in the process table: is_running() says True, status() zombie
        proc = psutil.Process(pid)
        assert proc.is_running() and proc.status() == psutil.STATUS_ZOMBIE
        statuses = [e.status for e in events if isinstance(e, ProcessSample)]
        assert statuses[-1] == "zombie"
        ex = exited(events)
        assert ex.exit_code == 7 and ex.signal is None  # read from /proc/PID/stat
        assert status_of(pid) == "zombie"
    finally:
        parent.kill()
        parent.wait()


async def test_a_pid_that_does_not_exist() -> None:
    child = subprocess.Popen([PY, "-c", "pass"])
    child.wait()
    events = await collect(ProcessWatcher(child.pid))
    assert isinstance(events[0], ProcessSample) and events[0].status == "not_found"
    assert exited(events).exit_code is None


async def test_tree_rss_and_process_count_include_children() -> None:
    code = (
        "import subprocess, sys, time\n"
        "kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])"
        " for _ in range(2)]\n"
        "time.sleep(30)\n"
    )
    parent = subprocess.Popen([PY, "-c", code])
    try:
        watcher = ProcessWatcher(parent.pid, sample_interval=0.2)
        samples: list[ProcessSample] = []
        async for ev in watcher.events():
            if isinstance(ev, ProcessSample):
                samples.append(ev)
            if (samples and samples[-1].num_procs == 3) or len(samples) > 40:
                break
        assert samples[-1].num_procs == 3
        own = psutil.Process(parent.pid).memory_info().rss
        assert samples[-1].rss_bytes is not None and samples[-1].rss_bytes > own
    finally:
        for kid in psutil.Process(parent.pid).children(recursive=True):
            kid.kill()
        parent.kill()
        parent.wait()


async def test_samples_fall_on_the_sessions_grid() -> None:
    """After the first, a live process is sampled at the points of the grid the log is read on
    (``ticks.grid_due``): its sample joins that read's batch instead of making its own."""
    child = subprocess.Popen([PY, "-c", "import time; time.sleep(30)"])
    interval = 0.2
    try:
        watcher = ProcessWatcher(child.pid, sample_interval=interval)
        watcher_loop = asyncio.get_running_loop()
        # the first sample half way between two points: an off-grid start
        await asyncio.sleep((interval / 2 - watcher_loop.time() - GRID_LEAD_S) % interval)
        times: list[float] = []
        async for ev in watcher.events():
            if isinstance(ev, ProcessSample):
                times.append(watcher_loop.time())
            if len(times) == 6:
                break
    finally:
        child.kill()
        child.wait()
    phases = [(t + GRID_LEAD_S) % interval for t in times[1:]]
    # most on the grid (a busy machine may wake a sleeper late once)
    assert sum(min(p, interval - p) < 0.03 for p in phases) >= 4, phases


def test_descendants_from_the_kernels_children_lists_match_psutils(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tree sample's descendants, read from the tree's own ``/proc`` files: the same pids as
    psutil's scan of every process, parents first; without such files, psutil's answer."""
    root = subprocess.Popen(["bash", "-c", "sleep 30 & (sleep 30 & wait) & wait"])
    try:
        deadline = time.monotonic() + 5
        expected: list[int] = []
        while len(expected) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
            expected = [c.pid for c in psutil.Process(root.pid).children(recursive=True)]
        found = descendant_pids(root.pid)
        assert found is not None and sorted(found) == sorted(expected) and len(found) == 3
        parents = {pid: psutil.Process(pid).ppid() for pid in found}
        assert all(parents[p] == root.pid or found.index(parents[p]) < found.index(p)
                   for p in found)
        assert sorted(c.pid for c in descendants(psutil.Process(root.pid), {})) == sorted(
            expected)
        monkeypatch.setattr("eagle_tui.sources.process.descendant_pids", lambda pid: None)
        assert sorted(c.pid for c in descendants(psutil.Process(root.pid), {})) == sorted(
            expected)
    finally:
        for child in psutil.Process(root.pid).children(recursive=True):
            child.kill()
        root.kill()
        root.wait()
    assert descendant_pids(root.pid) is None  # gone


async def test_found_by_listening_port() -> None:
    code = (
        "import socket, time\n"
        "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
        "print(s.getsockname()[1], flush=True)\n"
        "time.sleep(1.0)\n"
    )
    server = subprocess.Popen([PY, "-c", code], stdout=subprocess.PIPE)
    assert server.stdout is not None
    port = int(server.stdout.readline())
    assert find_listener(port) == server.pid
    events = await collect(ProcessWatcher(port=port))
    assert exited(events).pid == server.pid
    server.wait()


def test_nothing_listening_is_none() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert find_listener(port) is None


async def test_found_as_the_writer_of_the_log(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    # a server started as `nohup ... > log`: it and its child both hold the log for writing
    code = (
        "import subprocess, sys, time\n"
        "k = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
        "print('started', flush=True)\n"
        "time.sleep(1.5)\n"
        "k.kill()\n"
    )
    with log.open("w") as fh:
        server = subprocess.Popen([PY, "-c", code], stdout=fh, stderr=subprocess.STDOUT)
    reader = subprocess.Popen(["tail", "-f", str(log)], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 5
        while "started" not in log.read_text() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert find_log_holder(str(log)) == server.pid  # not the child, not the `tail -f`
        events = await collect(ProcessWatcher(log_path=str(log)))
        assert exited(events).pid == server.pid
    finally:
        reader.kill()
        reader.wait()
        server.wait()


async def test_a_slow_search_scans_again_only_when_the_log_moved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eagle_tui.sources import process

    monkeypatch.setattr(process, "FIND_FAST_FOR_S", 0.0)
    monkeypatch.setattr(process, "FIND_SLOW_S", 0.02)
    monkeypatch.setattr(process, "FIND_UNCHANGED_S", 0.6)
    log = tmp_path / "server.log"
    log.write_text("x\n")
    watcher = ProcessWatcher(log_path=str(log), find_interval=0.02)
    scans: list[float] = []

    def find() -> None:
        scans.append(time.monotonic())

    watcher.find = find  # type: ignore[method-assign]
    task = asyncio.create_task(collect(watcher, 5.0))
    await asyncio.sleep(0.3)
    assert len(scans) <= 2  # the log stayed as it was: no scan every 0.02 s
    with log.open("a") as fh:
        fh.write("a new server's first line\n")
    grew = time.monotonic()
    await asyncio.sleep(0.15)
    assert any(t > grew for t in scans)  # it moved: scanned at the next slow turn
    before = len(scans)
    await asyncio.sleep(0.8)
    assert len(scans) == before + 1  # unchanged again: one scan after FIND_UNCHANGED_S
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def test_no_writer_is_none(tmp_path: Path) -> None:
    log = tmp_path / "quiet.log"
    log.write_text("x\n")
    assert find_log_holder(str(log)) is None


@pytest.mark.parametrize(
    ("status", "expected"),
    [(0, (0, None)), (3 << 8, (3, None)), (signal.SIGKILL, (137, 9)), (signal.SIGSEGV, (139, 11))],
)
def test_decode_wait_status(status: int, expected: tuple[int, int | None]) -> None:
    assert decode_wait_status(status) == expected


def test_needs_something_to_watch() -> None:
    with pytest.raises(ValueError):
        ProcessWatcher()


# ---------------------------------------------------------------------- LocalTransport commands


async def test_local_run_and_its_errors(tmp_path: Path) -> None:
    from eagle_tui.transport.base import CommandNotFound, TransportError
    from eagle_tui.transport.local import LocalTransport

    tr = LocalTransport()
    res = await tr.run(["sh", "-c", "echo out; echo err >&2; exit 4"])
    assert (res.exit_code, res.stdout, res.stderr) == (4, b"out\n", b"err\n")
    with pytest.raises(CommandNotFound, match="no-such-tool-here: command not found"):
        await tr.run(["no-such-tool-here"])
    t0 = time.monotonic()
    with pytest.raises(TransportError, match=r"did not finish within 0\.3 s"):
        await tr.run(["sleep", "30"], timeout=0.3)
    assert time.monotonic() - t0 < 5
    # read_file: small files, with clear errors for the rest
    (tmp_path / "c.json").write_bytes(b'{"a": 1}')
    assert await tr.read_file(str(tmp_path / "c.json")) == b'{"a": 1}'
    with pytest.raises(TransportError, match="larger than 4 bytes"):
        await tr.read_file(str(tmp_path / "c.json"), max_bytes=4)
    with pytest.raises(TransportError, match="no such file"):
        await tr.read_file(str(tmp_path / "missing"))
    with pytest.raises(TransportError, match="is a directory"):
        await tr.read_file(str(tmp_path))


async def test_local_stream_lines_follows_a_command_and_reports_its_failure() -> None:
    from eagle_tui.transport.base import TransportError
    from eagle_tui.transport.local import LocalTransport

    tr = LocalTransport()
    lines = [ln async for ln in tr.stream_lines(["sh", "-c", "printf 'a\\nb\\r\\nc'"])]
    assert lines == [b"a", b"b", b"c"]
    got: list[bytes] = []
    with pytest.raises(TransportError, match="exited with status 9: driver says no"):
        script = "echo one; echo 'driver says no' >&2; exit 9"
        async for ln in tr.stream_lines(["sh", "-c", script]):
            got.append(ln)
    assert got == [b"one"]
    # closing the iterator early kills the command
    gen = tr.stream_lines(["sh", "-c", "while true; do echo tick; sleep 0.01; done"])
    assert await anext(gen) == b"tick"
    await gen.aclose()  # type: ignore[attr-defined]
    # stderr=True: its stderr lines come too (a container's log is on both of the CLI's
    # streams), and still make the failure's message
    script = "echo out1; echo err1 >&2; echo out2; echo err2 >&2; exit 3"
    both: list[bytes] = []
    with pytest.raises(TransportError, match="exited with status 3: err1 err2"):
        async for ln in tr.stream_lines(["sh", "-c", script], stderr=True):
            both.append(ln)
    assert sorted(both) == [b"err1", b"err2", b"out1", b"out2"]
    assert [ln for ln in both if ln.startswith(b"out")] == [b"out1", b"out2"]
    await tr.close()
    assert not tr._procs


def _has_pidfd() -> bool:
    async def probe() -> bool:
        watch = ExitWatch.watch(os.getpid())
        if watch is None:
            return False
        watch.close()
        return True

    return asyncio.run(probe())


@pytest.mark.skipif(not _has_pidfd(), reason="no pidfd here: the watcher polls (tested below)")
async def test_an_exit_wakes_the_watcher_without_a_poll() -> None:
    # poll and sample every 30 s: only the pidfd can report the kill within a second
    events, killed_at = await killed_while_watched(poll_interval=30.0, sample_interval=30.0)
    ex = exited(events)
    assert ex.t - killed_at < 1.0
    assert ex.signal == signal.SIGKILL
    assert len([e for e in events if isinstance(e, ProcessSample)]) == 2  # first, and final


async def test_without_a_pidfd_the_watcher_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ExitWatch, "watch", classmethod(lambda cls, pid: None))
    events, killed_at = await killed_while_watched(sample_interval=30.0)
    ex = exited(events)
    assert ex.t - killed_at < 1.0 and ex.signal == signal.SIGKILL


@pytest.mark.skipif(not _has_pidfd(), reason="no pidfd here")
async def test_exit_watch_waits_for_the_exit_or_the_timeout() -> None:
    child = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"])
    watch = ExitWatch.watch(child.pid)
    assert watch is not None
    try:
        t0 = time.monotonic()
        await watch.wait(0.3)  # alive: the timeout ends the wait
        assert 0.25 < time.monotonic() - t0 < 2.0 and not watch.exited
        child.kill()
        t0 = time.monotonic()
        await watch.wait(30.0)  # the exit ends it
        assert time.monotonic() - t0 < 2.0 and watch.exited
        await watch.wait(30.0)  # and every later wait at once
    finally:
        watch.close()
        watch.close()  # (twice: nothing left to close)
        child.wait()
    assert ExitWatch.watch(child.pid) is None  # reaped: no such process


async def test_a_stopped_server_reads_paused_and_a_continued_one_sleeping_again() -> None:
    child = subprocess.Popen(["sleep", "60"])
    seen: list[ProcessSample] = []

    async def watch() -> None:
        async for ev in ProcessWatcher(child.pid, sample_interval=0.1).events():
            if isinstance(ev, ProcessSample):
                seen.append(ev)

    task = asyncio.create_task(watch())
    try:
        async def until(status: str, limit_s: float = 3.0) -> None:
            end = time.monotonic() + limit_s
            while not (seen and seen[-1].status == status) and time.monotonic() < end:
                await asyncio.sleep(0.05)
            assert seen and seen[-1].status == status, [s.status for s in seen]

        await until("sleeping")
        child.send_signal(signal.SIGSTOP)  # Ctrl-Z, a debugger: the kernel's "T" state
        await until("paused")  # a move: sampled again at the full rate
        child.send_signal(signal.SIGCONT)
        await until("sleeping")
    finally:
        task.cancel()
        child.kill()
        child.wait()
        with contextlib.suppress(asyncio.CancelledError):
            await task
