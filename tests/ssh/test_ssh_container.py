"""``wait --container NAME --ssh DEST``: the container's CLI on the host behind sshd (podman,
whose settings sshd's sessions get from /etc/containers and the environment): ready when the
server inside answers, exit 1 with the cause soon after ``podman kill``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.containers.servers import engine_server
from tests.ssh.test_ssh_wait import cli_env
from tests.support.containers import ContainerEngine
from tests.support.ports import free_port

pytestmark = [pytest.mark.sshd]


def test_wait_container_over_ssh(containers: ContainerEngine, make_sshd: Callable[..., Any],
                                 tmp_path: Path) -> None:
    srv = make_sshd(setenv=containers.env)
    home = tmp_path / "home"
    home.mkdir()
    name, port = containers.name("sshwait"), free_port()
    engine_server(containers, name, port, tmp_path, "--scenario", "slow-start",
                  options=("--memory", "300m"))
    argv = [sys.executable, "-m", "eagle_tui", "wait", *srv.cli_args(), "--container", name,
            "--container-cli", "podman", "--timeout", "60", "--gpu", "none"]
    try:
        waiting = subprocess.Popen(argv, env=cli_env(home), text=True, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        time.sleep(6)  # connected, the container looked at, its wait running on the host
        assert waiting.poll() is None, waiting.communicate()
        assert containers.podman("kill", name).returncode == 0
        killed = time.monotonic()
        out, err = waiting.communicate(timeout=20)
        took = time.monotonic() - killed
        assert waiting.returncode == 1, out + err
        assert f"container {name} exited (exit code 137)" in out
        assert "killed, likely OOM at 300 MiB" in out
        assert took < 2.0, f"wait ended {took:.2f} s after the kill"
    finally:
        containers.remove(name)


def test_attach_list_over_ssh(containers: ContainerEngine, make_sshd: Callable[..., Any],
                              tmp_path: Path) -> None:
    srv = make_sshd(setenv=containers.env)  # the host's docker CLI talks to podman's socket
    home = tmp_path / "home"
    home.mkdir()
    name, port = containers.name("sshlist"), free_port()
    engine_server(containers, name, port, tmp_path, "--scenario", "slow-start")
    try:
        p = subprocess.run([sys.executable, "-m", "eagle_tui", "attach", "--list", "--json",
                            *srv.cli_args()], env=cli_env(home), capture_output=True,
                           text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        [row] = [r for r in json.loads(p.stdout) if r.get("container") == name]
        assert row["cli"] == "docker" and row["url"] == f"http://127.0.0.1:{port}"
    finally:
        containers.remove(name)
