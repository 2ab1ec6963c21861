"""The test container engine itself: podman runs the simulator from this checkout, the docker CLI
sees the same container through podman's API socket, and both read its stdout log."""

from __future__ import annotations

import time

from tests.support.containers import ContainerEngine
from tests.support.ports import free_port


def test_podman_and_docker_cli_see_one_container(containers: ContainerEngine) -> None:
    name = containers.name("setup")
    port = free_port()
    cid = containers.sim(name, port, "--engine", "sglang", "--scenario", "healthy")
    try:
        deadline = time.monotonic() + 20
        logs = ""
        while time.monotonic() < deadline and "server_args=" not in logs:
            logs = containers.docker("logs", name).stdout
            time.sleep(0.2)
        assert "server_args=" in logs
        assert containers.podman("logs", name).stdout.count("server_args=") == 1
        state = containers.docker("inspect", "--format", "{{.State.Status}} {{.Id}}", name)
        assert state.stdout.split() == ["running", cid]
    finally:
        containers.remove(name)
    assert containers.podman("ps", "-a", "--filter", f"name={name}", "-q").stdout.strip() == ""
