"""``eagle-tui launch --ssh`` / ``stop``: the server starts on the "remote" host, detached.

The host's login shell is a noisy one (``conftest.NOISE_RC``), as on GPU boxes with conda.

The loopback sshd's sessions get a stand-in ``sglang`` package on their PYTHONPATH; an
``--env`` secret travels on the exec channel's stdin and must never show in any argv.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from tests.integration.test_launch_stop import SHIM, cli, free_port, group_alive, reap_runs

pytestmark = [pytest.mark.sshd]


@pytest.fixture
def reaped(tmp_path: Path) -> Iterator[None]:
    try:
        yield
    finally:
        reap_runs(tmp_path / "data")


def test_remote_launch_and_stop(tmp_path: Path, make_sshd: Callable[..., object],
                                reaped: None) -> None:
    pkg = tmp_path / "shim" / "sglang"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "launch_server.py").write_text(SHIM)
    # a login shell that prints around every command (conda/module lines, an exit trap): the
    # launch, the discovery, the watch and the stop all read through the framing
    srv = make_sshd({"PYTHONPATH": str(tmp_path / "shim"),
                     "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"},
                    noisy=True)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    env.update(HOME=str(home), EAGLE_TUI_DATA_DIR=str(tmp_path / "data"), MY_SECRET="s3cr3t")
    target = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "target"
    port = free_port()
    ssh = srv.cli_args()  # type: ignore[attr-defined]
    p = cli(["launch", *ssh, "--no-tui", "--timeout", "40", "--env", "MY_SECRET",
             "--cwd", str(tmp_path), "--", "python", "-m", "sglang.launch_server",
             "--model-path", str(target), "--port", str(port)], env, timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    from eagle_tui.history.store import RunStore

    run = RunStore(tmp_path / "data" / "runs.sqlite3").get("last")
    assert run.host.endswith(f"127.0.0.1:{srv.port}")  # type: ignore[attr-defined]
    assert run.log_path and run.log_path.startswith(".cache/eagle-tui/logs/")
    assert run.pgid is not None and len(group_alive(run.pgid)) >= 2
    for proc in psutil.process_iter(["cmdline"]):
        assert "s3cr3t" not in " ".join(proc.info["cmdline"] or [])
    # discovery over SSH finds it, with its log (where its stdout points on the host)
    listed = cli(["attach", *ssh, "--list", "--json"], env, timeout=60)
    assert listed.returncode == 0, listed.stderr
    found = [f for f in json.loads(listed.stdout) if f["pid"] == run.pid]
    assert len(found) == 1 and found[0]["port"] == port and found[0]["log_kind"] == "file"
    assert found[0]["log"].endswith(run.log_path.rsplit("/", 1)[-1])
    pick = json.loads(listed.stdout).index(found[0]) + 1
    w = cli(["watch", *ssh, "--pick", str(pick), "--headless", "--json", "--duration", "4",
             "--gpu", "none"], env, timeout=90)
    assert w.returncode == 0, w.stderr
    assert f"pid {run.pid}" in w.stderr
    # sshd's sessions start in the login folder: the log is relative to root's home there
    p = cli(["stop", "last", "--yes", *ssh[2:]], env, timeout=60)
    assert p.returncode == 0, p.stderr
    deadline = time.monotonic() + 10
    while group_alive(run.pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_alive(run.pgid) == []


def test_remote_stop_finds_a_setsid_daemon(tmp_path: Path, sshd: object) -> None:
    """Over SSH the run's processes are found by the ``sh`` scan: a daemon that left the
    launched session is stopped, a look-alike without the token is left alone."""
    import asyncio
    import signal
    import subprocess

    from eagle_tui.launch.members import scanner_for
    from eagle_tui.launch.process import new_token, start_detached
    from eagle_tui.launch.stopping import StopReport, stop_run
    from tests.integration.test_stop_membership import DAEMON, SLEEPER, alive, kill_carriers, until

    pidfile = tmp_path / "pids"
    earlier = b"an earlier run's line\n" * 3  # the run's own lines begin after these
    (tmp_path / "log").write_bytes(earlier)
    clean = {k: v for k, v in os.environ.items() if k != "EAGLE_TUI_RUN"}
    other = subprocess.Popen([sys.executable, "-c", SLEEPER, str(tmp_path / "o")], env=clean)
    tokens: list[str] = []

    async def go() -> tuple[StopReport, int, int]:
        async with sshd.transport() as tr:  # type: ignore[attr-defined]
            tokens.append(new_token())
            la = await start_detached(tr, [sys.executable, "-c", DAEMON, str(pidfile)],
                                      cwd=str(tmp_path), log_path=str(tmp_path / "log"),
                                      token=tokens[-1])
            assert la.log_offset == len(earlier)
            await asyncio.to_thread(until, pidfile.exists, "the daemon")
            daemon = int(pidfile.read_text())
            await asyncio.to_thread(until, lambda: not alive(la.pid), "the leader to exit")
            assert os.getsid(daemon) != la.pid and os.getpgid(daemon) != la.pid
            scanner = scanner_for(tr)
            assert type(scanner).__name__ == "ShellScanner"
            rep = await stop_run(scanner, la.token, grace=5, leader=la.pid,
                                 leader_start=la.proc_start)
            return rep, daemon, la.pid

    try:
        until((tmp_path / "o").exists, "the look-alike")
        rep, daemon, _leader = asyncio.run(go())
        assert daemon in rep.found and rep.left == () and rep.signal == "TERM"
        assert not alive(daemon) and other.poll() is None
    finally:
        kill_carriers(tokens)
        other.send_signal(signal.SIGKILL)
        other.wait(10)
