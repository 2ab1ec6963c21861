"""Files that are not regular (issue 17, item 4): a FIFO without a writer, ``/dev/zero``, a
socket, a directory as the log of watch/wait/report/replay. Before: ``open`` of the FIFO blocked
the event loop (Ctrl-C ignored for minutes, ``wait`` needed SIGKILL); ``/dev/zero`` ran until the
memory was gone. Now each is refused at once with one clear line and exit 2."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eagle_tui.transport.base import NotRegularFile
from eagle_tui.transport.files import check_regular, open_regular
from eagle_tui.transport.local import LocalTransport
from tests.support.procs import sigint_as_at_a_terminal

ROOT = Path(__file__).resolve().parents[2]
LIMIT_S = 8.0  # process start on a loaded 2-core machine, and then nothing to wait for


@pytest.fixture
def kinds(tmp_path: Path) -> Iterator[dict[str, str]]:
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    sock_path = tmp_path / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    (tmp_path / "dir.log").mkdir()
    yield {"fifo": str(fifo), "zero": "/dev/zero", "socket": str(sock_path),
           "dir": str(tmp_path / "dir.log")}
    sock.close()


KIND_WORD = {"fifo": "FIFO", "zero": "character device", "socket": "socket", "dir": "directory"}


def _eagle(*args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "eagle_tui", *args], cwd=ROOT, env=env,
                          capture_output=True, timeout=LIMIT_S * 3, check=False)


@pytest.mark.parametrize("kind", list(KIND_WORD))
def test_open_regular_refuses_without_blocking(kinds: dict[str, str], kind: str) -> None:
    t0 = time.monotonic()
    with pytest.raises(NotRegularFile, match=KIND_WORD[kind]):
        open_regular(kinds[kind])
    with pytest.raises(NotRegularFile, match=KIND_WORD[kind]):
        check_regular(kinds[kind])
    assert time.monotonic() - t0 < 1.0


async def test_tail_of_a_fifo_fails_fast_and_never_blocks_the_loop(kinds: dict[str, str]) -> None:
    async def first() -> None:
        async for _ in LocalTransport().tail(kinds["fifo"]):
            break

    with pytest.raises(NotRegularFile):
        await asyncio.wait_for(first(), 2.0)
    with pytest.raises(NotRegularFile):
        await asyncio.wait_for(LocalTransport().read_file(kinds["zero"]), 2.0)


async def test_a_path_that_becomes_a_fifo_is_refused(tmp_path: Path) -> None:
    """The log does not exist yet (the tail waits), then appears as a FIFO."""
    path = tmp_path / "later.log"

    async def follow() -> None:
        async for _ in LocalTransport(poll_interval=0.01).tail(str(path)):
            pass

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.1)
    os.mkfifo(path)
    with pytest.raises(NotRegularFile):
        await asyncio.wait_for(task, 2.0)


COMMANDS = {
    "report": lambda p: ["report", p],
    "wait": lambda p: ["wait", "--log", p, "--timeout", "30"],
    "watch": lambda p: ["watch", "--headless", "--log", p, "--duration", "30"],
    "replay": lambda p: ["replay", p, "--headless"],
}


@pytest.mark.parametrize("kind", list(KIND_WORD))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_commands_refuse_with_exit_2(kinds: dict[str, str], kind: str, command: str) -> None:
    t0 = time.monotonic()
    proc = _eagle(*COMMANDS[command](kinds[kind]))
    took = time.monotonic() - t0
    err = proc.stderr.decode()
    assert proc.returncode == 2, (proc.stdout, err)
    assert took < LIMIT_S, err
    assert "not a regular file" in err or "is a directory" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_ctrl_c_ends_wait_on_a_missing_log(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "eagle_tui", "wait", "--log",
                             str(tmp_path / "none.log"), "--timeout", "60"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=sigint_as_at_a_terminal)
    try:
        # Ctrl-C once it waits (its first progress line), not while a loaded machine still
        # imports it: the test is about the wait's own handling
        assert proc.stdout is not None
        ready = select.select([proc.stdout], [], [], 60.0)[0]
        assert ready and proc.stdout.readline().startswith(b"["), "no progress line"
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(10.0)
    finally:
        proc.kill()
        proc.communicate()
    assert time.monotonic() - t0 < 10.0
    assert rc == 130


# The child's interpreter is up (its own start is not eagle-tui's to handle: it says so with a
# byte) and waits for a byte on stdin before it runs ``python -m eagle_tui``: from 30 ms on
# (runpy's own look-up of ``eagle_tui.__main__`` takes ~1 ms) the delays land in the entry
# point's imports, the command's, the parser's and the command's start.
_RUN_AFTER_A_BYTE = ("import runpy, sys; sys.stdout.buffer.write(b'r'); sys.stdout.flush(); "
                     "sys.stdin.buffer.read(1); "
                     "sys.argv = ['eagle_tui', *sys.argv[1:]]; "
                     "runpy.run_module('eagle_tui', run_name='__main__', alter_sys=True)")


@pytest.mark.parametrize("delay", [0.03, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3, 0.45])
def test_ctrl_c_at_any_moment_of_the_start_is_130_without_a_traceback(
        tmp_path: Path, delay: float) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", _RUN_AFTER_A_BYTE, "wait", "--log",
                             str(tmp_path / "none.log"), "--timeout", "60"], cwd=ROOT, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=sigint_as_at_a_terminal)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        assert proc.stdout.read(1) == b"r"
        proc.stdin.write(b"x")
        proc.stdin.flush()
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30.0)
    finally:
        proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err, err[-2000:]


@pytest.mark.parametrize("command", ["watch", "wait"])
def test_a_2gb_sparse_log_honours_duration_and_timeout(tmp_path: Path, command: str) -> None:
    """A 2 GB sparse file (one "line" of zeros): ``--duration`` was ignored while the catch-up
    held the loop; now the tail gives the loop a turn between chunks."""
    log = tmp_path / "sparse.log"
    with log.open("wb") as fh:
        fh.truncate(2 << 30)
    args = (["watch", "--headless", "--log", str(log), "--duration", "3"] if command == "watch"
            else ["wait", "--log", str(log), "--timeout", "3"])
    t0 = time.monotonic()
    proc = _eagle(*args)
    assert time.monotonic() - t0 < 3 + LIMIT_S / 2, proc.stderr.decode()
    assert proc.returncode == (0 if command == "watch" else 3), proc.stderr.decode()


# A Ctrl-C that leaves an ``exec`` of a string: what a record's or a dataclass's ``__init__``
# being built by an import (a command's lazy one included) does when the signal lands there
_EXEC_INTERRUPTED = """import sys
from eagle_tui import cli

def interrupted(argv, quick=None):
    exec("raise KeyboardInterrupt")

cli._run = interrupted
raise SystemExit(cli.main([]))
"""


def test_ctrl_c_inside_an_exec_during_an_import_is_130_not_a_sigint_death(tmp_path: Path
                                                                           ) -> None:
    """CPython marks such a Ctrl-C "unhandled" and, under ``python -m``, kills itself with
    SIGINT at exit whatever ``main`` returned (``report`` died so, -2, when the signal landed in
    its fold's imports after the workers' fork)."""
    (tmp_path / "ctrl_c_in_exec.py").write_text(_EXEC_INTERRUPTED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    done = subprocess.run([sys.executable, "-m", "ctrl_c_in_exec"], cwd=tmp_path, env=env,
                          capture_output=True, timeout=LIMIT_S * 3, check=False)
    assert done.returncode == 130, done.stderr[-2000:]
