"""``launch --ssh DEST -- podman run …``: the container's run started on the host behind sshd
(an ``--env`` value on the launch's stdin, ``-e NAME`` in the argv), ready as ``wait`` reads it,
recorded with that host; ``stop`` (the recorded host, over SSH) stops and removes it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.containers.launching import labelled, remove_runs, sim_run
from tests.ssh.test_ssh_wait import cli_env
from tests.support.containers import ContainerEngine
from tests.support.ports import free_port

pytestmark = [pytest.mark.sshd]


def test_launch_a_container_over_ssh_and_stop_it(containers: ContainerEngine,
                                                 make_sshd: Callable[..., Any],
                                                 tmp_path: Path) -> None:
    srv = make_sshd(setenv=containers.env)
    home = tmp_path / "home"
    home.mkdir()
    data = tmp_path / "data"
    env = {**cli_env(home), "EAGLE_TUI_DATA_DIR": str(data), "SSH_TEST_SECRET": "s3cret-v"}
    words = sim_run(containers, "podman", free_port(), tmp_path)
    try:
        got = subprocess.run([sys.executable, "-m", "eagle_tui", "launch", *srv.cli_args(),
                              "--no-tui", "--timeout", "60", "--env", "SSH_TEST_SECRET", "--",
                              *words], env=env, text=True, capture_output=True, timeout=120)
        assert got.returncode == 0, got.stdout + got.stderr
        assert "READY" in got.stdout and "on root@127.0.0.1:" in got.stderr, got.stderr
        shown = subprocess.run([sys.executable, "-m", "eagle_tui", "runs", "show", "last",
                                "--json"], env=env, text=True, capture_output=True, timeout=60)
        run = json.loads(shown.stdout)
        assert run["host"] and run["container"]["cli"] == "podman", run
        cid = run["container"]["id"]
        inspect = containers.podman("inspect", "--format", "{{json .Config.Env}}", cid).stdout
        assert "SSH_TEST_SECRET=s3cret-v" in inspect
        stop = subprocess.run([sys.executable, "-m", "eagle_tui", "stop", *srv.cli_args(),
                               "--yes", "--grace", "2", "last"], env=env, text=True,
                              capture_output=True, timeout=120)
        assert stop.returncode == 0 and "stopped and removed" in stop.stdout, stop.stderr
        token = subprocess.run([sys.executable, "-c", "from eagle_tui.history.store import "
                                "RunStore; print(RunStore().get('last').token)"], env=env,
                               text=True, capture_output=True, timeout=60).stdout.strip()
        assert token and labelled(containers, token) == []
    finally:
        remove_runs(containers, data)
