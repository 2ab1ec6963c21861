"""``wait --container NAME`` against a real container (podman, and the docker CLI through its
API socket): ready when the server inside answers, exit 1 with the cause within a second when
the container is killed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.containers.servers import engine_server
from tests.support.containers import ContainerEngine
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


def eagle(containers: ContainerEngine, *args: str) -> subprocess.Popen[str]:
    env = {**containers.envs(), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "eagle_tui", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize("cli", ["podman", "docker"])
def test_wait_container_ready(containers: ContainerEngine, tmp_path: Path, cli: str) -> None:
    name, port = containers.name("wait"), free_port()
    # (slow enough that wait, started at once, reads the log's phases before /ready answers)
    engine_server(containers, name, port, tmp_path, "--scenario", "healthy", "--speed", "8")
    try:
        # the URL comes from the container's command line (--port) and its host network
        ready = eagle(containers, "wait", "--container", name, "--container-cli", cli,
                      "--timeout", "60", "--gpu", "none")
        out, err = ready.communicate(timeout=90)
        assert ready.returncode == 0, out + err
        # (the container's log is followed too: its phases lead to the ready line)
        assert "READY" in out and "/ready answered 200" in out, out + err
        assert re.search(r"phase: (?!none)", out), out
        pid = containers.podman("inspect", "--format", "{{.State.Pid}}", name).stdout.strip()
        assert f"process {pid} running" in out, out  # the container's host PID
    finally:
        containers.remove(name)


def test_wait_container_killed_exits_1_within_a_second(containers: ContainerEngine,
                                                       tmp_path: Path) -> None:
    name, port = containers.name("kill"), free_port()
    # slow-start: the server is still loading while wait waits
    engine_server(containers, name, port, tmp_path, "--scenario", "slow-start",
                  options=("--memory", "512m"))
    try:
        waiting = eagle(containers, "wait", "--container", name, "--container-cli", "podman",
                        "--timeout", "60", "--gpu", "none")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # its first look at the container is done
            top = containers.podman("inspect", "--format", "{{.State.Status}}", name).stdout
            if "running" in top and waiting.poll() is None:
                break
            time.sleep(0.2)
        time.sleep(2.5)
        assert waiting.poll() is None, waiting.communicate()
        assert containers.podman("kill", name).returncode == 0
        killed = time.monotonic()
        out, err = waiting.communicate(timeout=10)
        took = time.monotonic() - killed
        assert waiting.returncode == 1, out + err
        assert f"container {name} exited (exit code 137)" in out + err
        assert "killed, likely OOM at 512 MiB" in out + err
        assert took < 1.0, f"wait ended {took:.2f} s after the kill"
    finally:
        containers.remove(name)


def test_a_crash_looping_container_is_a_crash_naming_its_restarts(containers: ContainerEngine
                                                                 ) -> None:
    """``--restart on-failure:3`` of a command that prints a few lines and exits 1: ``wait``
    exits 1 at its first restart naming the loop; once the policy's restarts are spent the
    headless dashboard's crash says so (a few seconds in all)."""
    name, port = containers.name("loop"), free_port()
    containers.run(name, ["/bin/sh", "-c", "echo starting server; echo loading model; "
                          "echo 'RuntimeError: boom'; sleep 1; exit 1"],
                   options=["--restart", "on-failure:3"])
    try:
        waiting = eagle(containers, "wait", "--container", name, "--container-cli", "podman",
                        "--url", f"http://127.0.0.1:{port}", "--timeout", "30", "--gpu", "none",
                        "--json")
        out, err = waiting.communicate(timeout=60)
        assert waiting.returncode == 1, out + err
        result = json.loads(out.splitlines()[-1])
        assert result["status"] == "crashed" and result["crash"]["kind"] == "crash_loop", result
        assert re.fullmatch(r"crash loop: restarted [123] times? in \d+ s "
                            r"\(--restart on-failure:3\)(; last exit code 1)?",
                            result["reason"]), result["reason"]
        deadline = time.monotonic() + 20
        while containers.podman("inspect", "--format", "{{.State.Status}}",
                                name).stdout.strip() != "exited":
            assert time.monotonic() < deadline, "the restarts did not end within 20 s"
            time.sleep(0.2)
        watching = eagle(containers, "watch", "--container", name, "--container-cli", "podman",
                         "--headless", "--json", "--duration", "3", "--gpu", "none")
        out, err = watching.communicate(timeout=60)
        assert watching.returncode == 0, err
        told = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
        crashed = [t for t in told if t.get("event") == "crashed"]
        assert crashed, told[-2:]
        assert re.fullmatch(r"crash loop: restarted 3 times in \d+ s "
                            r"\(--restart on-failure:3\); last exit code 1; no restarts left, "
                            r"it stays down", crashed[-1]["reason"]), crashed[-1]
        # report --container: the log's lines and the container's end as its crash
        report = eagle(containers, "report", "--container", name, "--container-cli", "podman")
        out, err = report.communicate(timeout=60)
        assert report.returncode == 0, err
        assert re.search(r"crash: crash_loop at line \d+\n  crash loop: restarted 3 times in "
                         r"\d+ s \(--restart on-failure:3\); last exit code 1; no restarts left",
                         out), out
    finally:
        containers.remove(name)
