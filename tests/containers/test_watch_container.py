"""``watch --container`` and ``report``/``replay --container`` end to end: the simulator in a
container (the engine's own command line, its log on stdout), watched through the podman CLI
and the docker CLI at once; the engines' refusals as one-line exit-2 messages."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.containers.servers import engine_server
from tests.support.containers import ContainerEngine
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


def eagle(containers: ContainerEngine, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "eagle_tui", *args],
                            env={**containers.envs(), "PYTHONPATH": str(ROOT), **env},
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def served(containers: ContainerEngine, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[str, str]]:
    """One simulated SGLang server in a container for the module: (name, url)."""
    name, port = containers.name("watch"), free_port()
    engine_server(containers, name, port, tmp_path_factory.mktemp("watch"),
                  "--scenario", "healthy", "--speed", "10")
    yield name, f"http://127.0.0.1:{port}"
    containers.remove(name)


def _load(url: str, limit: float = 60.0) -> None:
    """Completions once the server answers (the simulator logs their acceptance)."""
    deadline = time.monotonic() + limit
    with httpx.Client(trust_env=False, timeout=30) as client:
        while time.monotonic() < deadline:
            try:
                if client.get(f"{url}/health").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        for i in range(6):
            client.post(f"{url}/v1/completions", json={
                "model": "m", "prompt": f"count {i}", "max_tokens": 64}).raise_for_status()


def test_watch_a_container_through_both_clis(containers: ContainerEngine,
                                             served: tuple[str, str]) -> None:
    name, url = served
    runs = {cli: eagle(containers, "watch", "--container", name, "--container-cli", cli,
                       "--headless", "--duration", "18", "--gpu", "none")
            for cli in ("podman", "docker")}
    _load(url)
    for cli, proc in runs.items():
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, f"{cli}: {out}{err}"
        # the phase comes from the container's log (caught up: where it is now), the health
        # from the URL its command line names, the acceptance from the load's decode lines
        assert "phase: serving | health: ready" in out, f"{cli}: {out}"
        assert "accept " in out and "[log]" in out, f"{cli}: {out}"
        assert "Traceback" not in err, err
    report = subprocess.run(
        [sys.executable, "-m", "eagle_tui", "report", "--container", name, "--json"],
        env={**containers.envs(), "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=60)
    assert report.returncode == 0, report.stderr
    doc = json.loads(report.stdout)
    assert doc["engine"] == "sglang" and doc["phase"] == "serving", doc
    assert len(doc["accept_len"]) > 0 and doc["accept_len"][0] > 1, doc["accept_len"]
    replay = eagle(containers, "replay", "--container", name, "--headless")
    out, err = replay.communicate(timeout=60)
    assert replay.returncode == 0 and "phase: serving" in out and "accept " in out, out + err


@pytest.mark.parametrize(("args", "env", "said"), [
    (("watch", "--container", "eagletest-none", "--container-cli", "podman", "--headless"), {},
     "eagle-tui watch: error: podman: no such container: eagletest-none"),
    (("watch", "--container", "eagletest-none", "--headless"), {},
     "eagle-tui watch: error: docker: no such container: eagletest-none"),
    (("watch", "--container", "eagletest-none", "--container-cli", "docker", "--headless"),
     {"DOCKER_HOST": "unix:///nonexistent/docker.sock"},
     "eagle-tui watch: error: docker: cannot connect to the container engine"),
    (("report", "--container", "eagletest-none", "--container-cli", "docker"),
     {"DOCKER_HOST": "unix:///nonexistent/docker.sock"},
     "eagle-tui report: error: docker: cannot connect to the container engine"),
    (("replay", "--container", "eagletest-none", "--container-cli", "podman"), {},
     "eagle-tui replay: error: podman: no such container: eagletest-none"),
    (("watch", "--container", "eagletest-none", "--headless"), {"PATH": "/nonexistent"},
     "eagle-tui watch: error: neither docker nor podman is installed"),
    (("report", "--container", "eagletest-none", "--container-cli", "podman"),
     {"PATH": "/nonexistent"}, "eagle-tui report: error: podman is not installed"),
])
def test_refusals_are_one_line_exit_2(containers: ContainerEngine, args: tuple[str, ...],
                                      env: dict[str, str], said: str) -> None:
    proc = eagle(containers, *args, **env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, out + err
    assert len(err.strip().splitlines()) == 1 and err.startswith(said), err


def test_docker_host_over_ssh_is_the_clis_own(containers: ContainerEngine) -> None:
    """``DOCKER_HOST=ssh://…`` reaches the docker CLI as it is (it runs ``ssh`` itself): here a
    closed port, said in one line."""
    proc = eagle(containers, "watch", "--container", "eagletest-none", "--container-cli",
                 "docker", "--headless", DOCKER_HOST="ssh://root@127.0.0.1:1")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, out + err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("eagle-tui watch: error: docker: cannot connect to the container "
                          "engine"), err
    assert "ssh " in err and "-p 1 " in err, err
