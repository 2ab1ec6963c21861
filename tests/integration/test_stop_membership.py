"""``stop`` finds a run's processes by their launch token, wherever they moved; real processes.

Each shape runs with the local scanner (``/proc`` read here, pidfd signals) and with the remote
one's ``sh`` script through the local transport (the SSH tests run it on the loopback sshd).
Every process a test starts is killed at its end, pass or fail: the members by their token, the
foreign ones by their Popen handle.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from eagle_tui.launch.members import LocalScanner, Proc, Scanner, ShellScanner
from eagle_tui.launch.process import new_token, start_detached
from eagle_tui.launch.stopping import stop_run
from eagle_tui.transport.local import LocalTransport

# a daemon: fork, setsid, fork again (a new session and group, reparented); the leader exits
DAEMON = r'''
import os, sys, time
r = os.fork()
if r == 0:
    os.setsid()
    if os.fork() == 0:
        open(sys.argv[1] + ".tmp", "w").write(str(os.getpid()))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        time.sleep(600)
    os._exit(0)
os.waitpid(r, 0)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.02)
'''
# a leader that starts two workers (its group) and exits: they are reparented
LEADER_EXITS = r'''
import os, subprocess, sys, time
ws = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]) for _ in (1, 2)]
open(sys.argv[1] + ".tmp", "w").write(" ".join(str(w.pid) for w in ws))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(0.2)
os._exit(0)
'''
# on TERM: fork a child (that would outlive it) and exit
LATE_FORK = r'''
import os, signal, sys, time
def on_term(*_):
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        open(sys.argv[1] + ".late", "w").write(str(os.getpid()))
        time.sleep(600)
    os._exit(0)
signal.signal(signal.SIGTERM, on_term)
open(sys.argv[1], "w").write(str(os.getpid()))
while True:
    time.sleep(1)
'''
IGNORES_TERM = r'''
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
open(sys.argv[1], "w").write("ready")
time.sleep(600)
'''
SLEEPER = "import sys, time; open(sys.argv[1], 'w').write('ready'); time.sleep(600)"


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def until(ok: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def kill_carriers(tokens: list[str]) -> None:
    """SIGKILL every process with one of ``tokens`` until none is left (the cleanup)."""
    scanner = LocalScanner()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = [p for t in tokens for p in scanner._scan(t, 0).members]
        if not left:
            return
        for p in left:
            with contextlib.suppress(OSError):
                os.kill(p.pid, signal.SIGKILL)
        time.sleep(0.05)


@pytest.fixture
def tokens() -> Iterator[list[str]]:
    made: list[str] = []
    try:
        yield made
    finally:
        kill_carriers(made)


@pytest.fixture
def foreign() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    try:
        yield procs
    finally:
        for p in procs:
            with contextlib.suppress(OSError):
                p.kill()
            p.wait(10)


@pytest.fixture(params=["local", "shell"])
def scanner(request: pytest.FixtureRequest) -> Scanner:
    return LocalScanner() if request.param == "local" else ShellScanner(LocalTransport())


def launch(script: str, tmp: Path, tokens: list[str]) -> tuple[str, int, str]:
    """Start ``script`` as ``launch`` does: ``(token, leader pid, leader start)``."""
    pidfile = tmp / "pids"
    tokens.append(new_token())  # known before the start: the cleanup finds what it started
    la = asyncio.run(start_detached(LocalTransport(), [sys.executable, "-c", script,
                                                       str(pidfile)],
                                    cwd=str(tmp), log_path=str(tmp / "server.log"),
                                    token=tokens[-1]))
    until(pidfile.exists, "the script's pid file")
    return la.token, la.pid, la.proc_start


def members(token: str) -> list[Proc]:
    return list(LocalScanner()._scan(token, 0).members)


def test_a_setsid_daemon_is_found_and_stopped(tmp_path: Path, tokens: list[str],
                                              scanner: Scanner) -> None:
    token, leader, start = launch(DAEMON, tmp_path, tokens)
    daemon = int((tmp_path / "pids").read_text())
    until(lambda: not alive(leader), "the leader to exit")
    assert alive(daemon) and os.getsid(daemon) not in (leader, os.getsid(0))
    rep = asyncio.run(stop_run(scanner, token, grace=5, leader=leader, leader_start=start))
    assert daemon in rep.found and daemon in rep.termed and rep.left == ()
    assert rep.killed == () and rep.signal == "TERM"
    assert not alive(daemon) and members(token) == []


def test_workers_left_by_an_exited_leader_are_stopped(tmp_path: Path, tokens: list[str],
                                                      scanner: Scanner) -> None:
    token, leader, start = launch(LEADER_EXITS, tmp_path, tokens)
    workers = [int(w) for w in (tmp_path / "pids").read_text().split()]
    until(lambda: not alive(leader), "the leader to exit")
    assert all(alive(w) and os.getpgid(w) == leader for w in workers)
    rep = asyncio.run(stop_run(scanner, token, grace=5, leader=leader, leader_start=start))
    assert set(workers) <= set(rep.found) and rep.left == () and rep.note == ""
    assert not any(alive(w) for w in workers) and members(token) == []


def test_a_child_forked_during_the_grace_is_found_and_stopped(
        tmp_path: Path, tokens: list[str], scanner: Scanner) -> None:
    token = new_token()
    tokens.append(token)
    pidfile = tmp_path / "pid"
    proc = subprocess.Popen([sys.executable, "-c", LATE_FORK, str(pidfile)],
                            env={**os.environ, "EAGLE_TUI_RUN": token}, start_new_session=True)
    try:
        until(pidfile.exists, "the worker")
        rep = asyncio.run(stop_run(scanner, token, grace=10))
        late = int(Path(f"{pidfile}.late").read_text())
        assert rep.late == (late,) and late in rep.termed and rep.left == ()
        assert rep.killed == () and not alive(late)
    finally:
        proc.kill()
        proc.wait(10)


def test_a_process_that_ignores_term_is_killed_after_the_grace(
        tmp_path: Path, tokens: list[str], scanner: Scanner) -> None:
    token = new_token()
    tokens.append(token)
    pidfile = tmp_path / "pid"
    proc = subprocess.Popen([sys.executable, "-c", IGNORES_TERM, str(pidfile)],
                            env={**os.environ, "EAGLE_TUI_RUN": token})
    try:
        until(pidfile.exists, "the process")
        rep = asyncio.run(stop_run(scanner, token, grace=0.5))
        assert rep.killed == (proc.pid,) and rep.signal == "KILL" and rep.left == ()
        assert rep.seconds >= 0.5
        assert proc.wait(10) == -signal.SIGKILL
    finally:
        proc.kill()
        proc.wait(10)


def test_foreign_processes_that_look_alike_are_left_alone(
        tmp_path: Path, tokens: list[str], foreign: list[subprocess.Popen[bytes]],
        scanner: Scanner) -> None:
    token = new_token()
    tokens.append(token)
    argv = [sys.executable, "-c", SLEEPER]
    member = subprocess.Popen([*argv, str(tmp_path / "m")],
                              env={**os.environ, "EAGLE_TUI_RUN": token})
    foreign.append(member)
    near = [{"EAGLE_TUI_RUN": token + "0"}, {"EAGLE_TUI_RUN": token[:-1]},
            {"XEAGLE_TUI_RUN": token}, {"NOTE": f"x\nEAGLE_TUI_RUN={token}"},
            {"EAGLE_TUI_RUN": token.upper()}, {}]
    clean = {k: v for k, v in os.environ.items() if k != "EAGLE_TUI_RUN"}
    for i, extra in enumerate(near):
        # the same command line (and the token in its argv for the last one)
        words = [*argv, str(tmp_path / f"f{i}")] + ([f"EAGLE_TUI_RUN={token}"] if not extra
                                                    else [])
        foreign.append(subprocess.Popen(words, env={**clean, **extra}))
    for i in range(len(near)):
        until((tmp_path / f"f{i}").exists, "the foreign processes")
    until((tmp_path / "m").exists, "the member")
    rep = asyncio.run(stop_run(scanner, token, grace=5))
    assert rep.found == (member.pid,) and rep.left == ()
    assert member.wait(10) == -signal.SIGTERM
    assert all(p.poll() is None for p in foreign[1:])


def test_a_reused_pid_or_a_process_without_the_token_is_never_signalled(
        tmp_path: Path, tokens: list[str], foreign: list[subprocess.Popen[bytes]],
        scanner: Scanner) -> None:
    token = new_token()
    tokens.append(token)
    clean = {k: v for k, v in os.environ.items() if k != "EAGLE_TUI_RUN"}
    other = subprocess.Popen([sys.executable, "-c", SLEEPER, str(tmp_path / "o")], env=clean)
    member = subprocess.Popen([sys.executable, "-c", SLEEPER, str(tmp_path / "m")],
                              env={**clean, "EAGLE_TUI_RUN": token})
    foreign += [other, member]
    until(lambda: (tmp_path / "o").exists() and (tmp_path / "m").exists(), "both")
    [seen] = members(token)
    other_start = _start(other.pid)
    stale = [Proc(other.pid, other_start), Proc(other.pid, seen.start),
             Proc(member.pid, str(int(seen.start) + 1))]
    assert asyncio.run(scanner.send(stale, "KILL", token)) == []
    assert other.poll() is None and member.poll() is None
    assert asyncio.run(scanner.send([seen], "KILL", token)) == [member.pid]
    assert member.wait(10) == -signal.SIGKILL and other.poll() is None


def _start(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def test_a_shell_script_that_setsids_a_child_and_exits_at_once(
        tmp_path: Path, tokens: list[str], scanner: Scanner) -> None:
    tokens.append(new_token())
    la = asyncio.run(start_detached(
        LocalTransport(), ["sh", "-c", 'setsid sleep 600 & echo "$!" > pid.tmp; '
                           'mv pid.tmp pid; exit 0'],
        cwd=str(tmp_path), log_path=str(tmp_path / "server.log"), token=tokens[-1]))
    until((tmp_path / "pid").exists, "the child's pid")
    child = int((tmp_path / "pid").read_text())
    until(lambda: not alive(la.pid), "the script to exit")
    assert alive(child) and os.getsid(child) == child
    rep = asyncio.run(stop_run(scanner, la.token, grace=5, leader=la.pid,
                               leader_start=la.proc_start))
    assert rep.found == (child,) and rep.left == () and not alive(child)
