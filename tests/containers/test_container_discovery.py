"""``attach --list --json`` lists a containerized server (through the docker CLI and through
podman) once, as the container, with its URL and log; ``--pick`` watches it by container; no
container engine installed adds no rows and no error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.containers.servers import engine_server
from tests.support.containers import ContainerEngine
from tests.support.fleet_helpers import wait_serving
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


def attach(env: dict[str, str], *args: str, timeout: float = 60
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eagle_tui", "attach", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def rows(env: dict[str, str]) -> list[dict[str, Any]]:
    p = attach(env, "--list", "--json")
    assert p.returncode == 0, p.stderr
    return list(json.loads(p.stdout))


@pytest.fixture
def server(containers: ContainerEngine, tmp_path: Path) -> tuple[str, int]:
    name, port = containers.name("found"), free_port()
    engine_server(containers, name, port, tmp_path, "--scenario", "healthy", "--speed", "20",
                  options=("-l", "com.docker.compose.service=sglang"))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and "server_args=" not in containers.podman(
            "logs", name).stdout:
        time.sleep(0.2)
    yield name, port
    containers.remove(name)


def test_listed_through_docker_then_picked(containers: ContainerEngine,
                                           server: tuple[str, int]) -> None:
    name, port = server
    env = {**containers.envs(), "PYTHONPATH": str(ROOT)}
    found = rows(env)
    mine = [r for r in found if r.get("container") == name]
    assert len(mine) == 1, found
    row = mine[0]
    pid = int(containers.podman("inspect", "--format", "{{.State.Pid}}", name).stdout)
    assert row["cli"] == "docker" and row["engine"] == "sglang" and row["state"] == "running"
    assert row["url"] == f"http://127.0.0.1:{port}" and row["url_via"] == "host network"
    assert row["log"] == f"docker logs {name}" and row["pid"] == pid
    assert row["compose"] == "/sglang"  # (a compose service label, no project)
    # the container's server is not listed again as the host process it also is
    assert not [r for r in found if r.get("kind") != "container" and r["pid"] == pid]
    text = attach(env, "--list")
    assert f"sglang container {name}" in text.stdout and "--container " + name in text.stdout
    for _ in range(3):  # (other servers on this machine may come and go between two lists)
        index = next(r["index"] for r in rows(env) if r.get("container") == name)
        # 6 s: on a loaded 2-core machine the first /health answer took more than 3
        w = attach(env, "--pick", str(index), "--headless", "--json", "--duration", "6")
        if f"container {name}" in w.stderr:
            break
    assert w.returncode == 0, w.stderr
    assert f"container {name}" in w.stderr
    lines = [json.loads(x) for x in w.stdout.splitlines() if x.startswith("{")]
    assert any(x.get("health") == "ready" for x in lines), w.stdout[-2000:]


def test_listed_through_podman_without_a_docker_daemon(containers: ContainerEngine,
                                                       server: tuple[str, int]) -> None:
    name, port = server
    env = {**containers.envs(), "PYTHONPATH": str(ROOT),
           "DOCKER_HOST": "unix:///nonexistent/docker.sock"}  # docker: no daemon, no rows
    [row] = [r for r in rows(env) if r.get("container") == name]
    assert row["cli"] == "podman" and row["url"] == f"http://127.0.0.1:{port}"
    assert row["log"] == f"podman logs {name}"


def test_no_container_engine_no_rows(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # the host scan's tools only: no docker, no podman
    bin_dir.mkdir()
    for tool in ("sh", "tr", "cat", "readlink"):
        found = shutil.which(tool)
        assert found is not None
        os.symlink(found, bin_dir / tool)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": str(bin_dir)}
    p = attach(env, "--list", "--json")
    assert p.returncode == 0, p.stderr
    assert [r for r in json.loads(p.stdout) if r.get("kind") == "container"] == []
    assert p.stderr == ""


def test_watch_container_headless(containers: ContainerEngine, server: tuple[str, int]) -> None:
    name, port = server
    wait_serving(f"http://127.0.0.1:{port}")  # (a few seconds of simulated startup first)
    env = {**containers.envs(), "PYTHONPATH": str(ROOT)}
    w = subprocess.run([sys.executable, "-m", "eagle_tui", "watch", "--container", name,
                        "--headless", "--json", "--duration", "3", "--gpu", "none"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert w.returncode == 0, w.stderr
    lines = [json.loads(x) for x in w.stdout.splitlines() if x.startswith("{")]
    assert any(x.get("health") == "ready" for x in lines), w.stdout[-2000:]
    pid = int(containers.podman("inspect", "--format", "{{.State.Pid}}", name).stdout)
    seen = [x["process"] for x in lines if x.get("process")]
    assert seen and {"pid": pid, "status": "running"}.items() <= seen[-1].items(), lines
