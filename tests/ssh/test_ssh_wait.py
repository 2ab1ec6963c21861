"""``eagle-tui wait --ssh`` end to end: the simulator runs "on the remote host" behind sshd.

The sshd's sessions get the simulator's fake ``nvidia-smi`` on their PATH, so the GPU stream
goes over SSH too. ``wait`` runs as a separate process with an empty HOME (no ~/.ssh, no agent):
everything it knows comes from its ``--ssh/--identity/--known-hosts`` options.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.sshd, pytest.mark.slow]

EAGLE_TUI = [sys.executable, "-m", "eagle_tui"]  # the console script's entry point


def cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    env["HOME"] = str(home)
    return env


def start_sim(
    tmp_path: Path, scenario: str, speed: float
) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    workdir = tmp_path / "sim"
    proc = subprocess.Popen(
        [sys.executable, "-m", "eagle_tui.sim", "--engine", "sglang", "--scenario", scenario,
         "--port", "0", "--log", str(tmp_path / "remote logs" / "server.log"), "--gpus", "2",
         "--speed", str(speed), "--workdir", str(workdir)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert proc.stdout is not None
    info = json.loads(proc.stdout.readline())
    return proc, info


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_wait(srv: Any, home: Path, extra: list[str], timeout: float = 90) -> tuple[int, str, str]:
    res = subprocess.run(
        [*EAGLE_TUI, "wait", *srv.cli_args(), *extra],
        capture_output=True, text=True, timeout=timeout, env=cli_env(home),
    )
    return res.returncode, res.stdout, res.stderr


def objects(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


@pytest.fixture
def sim_dir(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    (tmp_path / "remote logs").mkdir()
    return tmp_path


def test_wait_ssh_ready(make_sshd: Any, sim_dir: Path) -> None:
    """Through a login shell that prints around every command (log, GPUs, process, HTTP)."""
    workdir_bin = sim_dir / "sim" / "bin"
    srv = make_sshd(setenv={"PATH": f"{workdir_bin}:/usr/local/bin:/usr/bin:/bin"}, noisy=True)
    sim, info = start_sim(sim_dir, "healthy", speed=10)
    try:
        assert info["bin"] == str(workdir_bin)
        rc, out, err = run_wait(srv, sim_dir / "home", [
            "--log", info["log"], "--url", f"http://localhost:{info['port']}",
            "--timeout", "60", "--json"])
    finally:
        stop(sim)
    objs = objects(out)
    assert rc == 0, (out[-3000:], err[-3000:])
    result = objs[-1]
    assert (result["event"], result["status"]) == ("result", "ready"), result
    assert result["health"] == "ready"
    progress = [o for o in objs if o["event"] == "progress"]
    # the startup was followed through the remote log, phase by phase
    assert len({o["phase"] for o in progress}) >= 3, [o["phase"] for o in progress]
    # the fake nvidia-smi streamed over the same SSH connection
    assert any(o["gpu_state"] == "ok" and len(o["gpus"]) == 2 for o in progress), progress[-1]
    assert all(not o["failing"] for o in progress[-1:]), progress[-1]


def test_wait_ssh_oom_reports_the_crash_within_3_s(make_sshd: Any, sim_dir: Path) -> None:
    srv = make_sshd()
    sim, info = start_sim(sim_dir, "oom", speed=10)
    log = Path(info["log"])
    crash_seen: list[float] = []

    def watch_log() -> None:  # when did the crash reach the remote log?
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not crash_seen:
            if log.exists() and b"out of memory" in log.read_bytes():
                crash_seen.append(time.monotonic())
                return
            time.sleep(0.02)

    watcher = threading.Thread(target=watch_log, daemon=True)
    watcher.start()
    try:
        rc, out, err = run_wait(srv, sim_dir / "home", [
            "--log", info["log"], "--url", f"http://localhost:{info['port']}", "--timeout", "60"])
        exited = time.monotonic()
    finally:
        stop(sim)
    watcher.join(1)
    assert rc == 1, (out[-3000:], err[-3000:])
    assert "CRASHED" in out
    assert "out of memory" in out.lower()
    assert crash_seen
    print(f"\ncrash in the remote log -> wait exited: {exited - crash_seen[0]:.2f} s")
    assert exited - crash_seen[0] <= 3.0, exited - crash_seen[0]


def test_wait_ssh_refuses_an_unknown_host_key(sshd: Any, sim_dir: Path) -> None:
    empty = sim_dir / "empty_known_hosts"
    empty.write_text("")
    args = sshd.cli_args()
    args[args.index("--known-hosts") + 1] = str(empty)
    res = subprocess.run(
        [*EAGLE_TUI, "wait", *args, "--log", "/nonexistent/x.log",
         "--timeout", "20"],
        capture_output=True, text=True, timeout=60, env=cli_env(sim_dir / "home"),
    )
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "host key" in res.stderr
    assert "SHA256:" in res.stderr
    assert "--accept-new-host-key" in res.stderr
    assert empty.read_text() == ""


def test_wait_ssh_by_config_alias_with_the_default_files(sshd: Any, sim_dir: Path) -> None:
    """``--ssh gpu-box`` alone: HostName/Port/User/IdentityFile from ~/.ssh/config and the host
    key from ~/.ssh/known_hosts — what a user who already ssh's into the box has."""
    home = sim_dir / "home"
    ssh_dir = home / ".ssh"
    ssh_dir.mkdir(mode=0o700)
    (ssh_dir / "config").write_text(
        "Host gpu-box\n"
        "    HostName 127.0.0.1\n"
        f"    Port {sshd.port}\n"
        "    User root\n"
        f"    IdentityFile {sshd.client_key}\n"
    )
    (ssh_dir / "known_hosts").write_text(sshd.known_hosts.read_text())
    log = sim_dir / "remote logs" / "server.log"
    log.write_text("[2025-11-20 10:14:31] Load weight begin. avail mem=78.50 GB\n"
                   "[2025-11-20 10:15:02] The server is fired up and ready to roll!\n")
    res = subprocess.run(
        [*EAGLE_TUI, "wait", "--ssh", "gpu-box", "--log", str(log), "--timeout", "30"],
        capture_output=True, text=True, timeout=60, env=cli_env(home),
    )
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-2000:])
    assert "READY" in res.stdout
