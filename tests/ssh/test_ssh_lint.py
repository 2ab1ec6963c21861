"""``eagle-tui lint --ssh``: every fact read on the remote host, over the loopback sshd.

The "remote" host has the checkpoints (under a folder only the remote side is told about), a
listening port, and an ``nvidia-smi`` on its PATH that reports one busy GPU; the lint runs as a
separate process with an empty HOME, so all it knows comes from its options and the host.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = [pytest.mark.sshd]

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "lint"
SMI = """#!/bin/sh
echo "0, NVIDIA H200, 143771, 20000"
"""


def test_remote_lint_reads_the_remote_host(tmp_path: Path,
                                           make_sshd: Callable[..., object]) -> None:
    remote = tmp_path / "remote models"
    shutil.copytree(FIX, remote)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "nvidia-smi").write_text(SMI)
    (bindir / "nvidia-smi").chmod(0o755)
    # every fact is read through a login shell that prints around each command
    srv = make_sshd({"PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin"}, noisy=True)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    env["HOME"] = str(home)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        argv = [sys.executable, "-m", "eagle_tui", "lint", *srv.cli_args(),  # type: ignore[attr-defined]
                "--json", "--cwd", str(remote), "--", "python", "-m", "sglang.launch_server",
                "--model-path", "target", "--speculative-algorithm", "EAGLE",
                "--speculative-draft-model-path", "eagle3-sglang", "--port", str(port),
                "--mem-fraction-static", "0.85"]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=90, env=env,
                           check=False)
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)
    found = {f["code"]: f for f in out["findings"]}
    assert "spec-eagle3-draft-as-eagle" in found
    assert "port-in-use" in found and "127.0.0.1" in found["port-in-use"]["message"]
    assert found["gpu-memory"]["level"] == "error"
    assert "19.5 of 140.4 GiB free" in found["gpu-memory"]["message"]
    # a missing remote path is reported as missing, not as a crash of the lint
    argv_missing = [a if a != "target" else "no-such-model" for a in argv]
    p = subprocess.run(argv_missing, capture_output=True, text=True, timeout=90, env=env,
                       check=False)
    assert p.returncode == 1
    assert "model-missing" in {f["code"] for f in json.loads(p.stdout)["findings"]}


def test_remote_lint_unknown_host_key_is_usage(tmp_path: Path,
                                                make_sshd: Callable[..., object]) -> None:
    srv = make_sshd()
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    args = srv.cli_args()  # type: ignore[attr-defined]
    args[args.index("--known-hosts") + 1] = str(empty)
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    env["HOME"] = str(tmp_path)
    p = subprocess.run([sys.executable, "-m", "eagle_tui", "lint", *args, "--", "vllm", "serve",
                        "/m"], capture_output=True, text=True, timeout=90, env=env, check=False)
    assert p.returncode == 2
    assert "host key" in p.stderr.lower()


def test_remote_lint_of_a_container_reads_its_mounts_port_and_gpus_remotely(
        tmp_path: Path, make_sshd: Callable[..., object]) -> None:
    """``docker run -v REMOTE:/models -p BUSY:30000 --gpus all`` over SSH: the checkpoints under
    the remote bind-mount source, the published host port and the remote GPUs."""
    remote = tmp_path / "remote models"
    shutil.copytree(FIX, remote)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "nvidia-smi").write_text(SMI)
    (bindir / "nvidia-smi").chmod(0o755)
    srv = make_sshd({"PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin"}, noisy=True)
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    env["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        argv = [sys.executable, "-m", "eagle_tui", "lint", *srv.cli_args(),  # type: ignore[attr-defined]
                "--json", "--", "docker", "run", "--gpus", "all", "--ipc=host",
                "-p", f"{port}:30000", "-v", f"{remote}:/models", "lmsysorg/sglang",
                "python3", "-m", "sglang.launch_server", "--model-path", "/models/target",
                "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path",
                "/models/eagle3-sglang", "--host", "0.0.0.0", "--tp", "2"]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=90, env=env,
                           check=False)
    assert p.returncode == 1, p.stderr
    found = {f["code"]: f for f in json.loads(p.stdout)["findings"]}
    assert "spec-eagle3-draft-as-eagle" in found  # the draft read under the remote mount
    assert found["container-port-in-use"]["part"] == "container"
    assert "tp-too-large" in found  # all of the remote host's one GPU
    missing = [a.replace("/models/target", "/models/nope") for a in argv]
    p = subprocess.run(missing, capture_output=True, text=True, timeout=90, env=env,
                       check=False)
    found = {f["code"]: f for f in json.loads(p.stdout)["findings"]}
    assert f"on the host at {remote}/nope" in found["model-missing"]["message"]
