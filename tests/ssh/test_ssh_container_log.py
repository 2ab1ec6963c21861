"""A container's log over SSH (the loopback sshd, whose sessions reach the same podman and its
API socket): the connection dropped mid-follow and resumed with nothing doubled or lost, through
both CLIs; ``watch --container --ssh`` and ``report --container --ssh`` end to end."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.sources.containers.logs import ContainerLog
from tests.containers.servers import engine_server
from tests.containers.test_container_log import Follow, N, _script
from tests.ssh.test_ssh_wait import cli_env
from tests.support.containers import ContainerEngine
from tests.support.ports import free_port

pytestmark = [pytest.mark.sshd]
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("program", ["podman", "docker"])
async def test_a_dropped_connection_loses_and_doubles_nothing(
        containers: ContainerEngine, make_sshd: Callable[..., Any], program: str) -> None:
    srv = make_sshd(setenv=containers.env)
    name = containers.name(f"sshlog-{program}")
    containers.run(name, _script(N, "sleep 600"))
    transport = srv.transport()
    source = ContainerLog(transport, name, cli=program, catchup_lines=100_000, poll=0.2)
    follow = Follow(source)
    task = asyncio.create_task(follow.run())
    try:
        await follow.until(lambda: len(follow.texts) >= 20, "the first lines", 60)
        assert srv.kill_sessions() > 0  # the host drops the connection mid-run
        await follow.until(lambda: len(follow.texts) >= 2 * N, "every line", 60)
        await asyncio.sleep(1.0)
        assert follow.failures >= 1 and source.follows >= 2, follow.errors
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await transport.close()
        containers.remove(name)
    assert Counter(follow.texts) == Counter(f"{s} {i}" for s in ("out", "err") for i in range(N))


def test_watch_and_report_a_container_over_ssh(containers: ContainerEngine,
                                               make_sshd: Callable[..., Any],
                                               tmp_path: Path) -> None:
    srv = make_sshd(setenv=containers.env)
    home = tmp_path / "home"
    home.mkdir()
    name, port = containers.name("sshwatch"), free_port()
    engine_server(containers, name, port, tmp_path, "--scenario", "healthy", "--speed", "10")
    env = {**cli_env(home), "PYTHONPATH": str(ROOT)}
    try:
        watch = subprocess.run(
            [sys.executable, "-m", "eagle_tui", "watch", *srv.cli_args(), "--container", name,
             "--headless", "--duration", "15", "--gpu", "none"],
            env=env, capture_output=True, text=True, timeout=90)
        assert watch.returncode == 0, watch.stdout + watch.stderr
        # the log over SSH, the URL from the container's command line reached through the host
        assert "phase: ready" in watch.stdout or "phase: serving" in watch.stdout, watch.stdout
        assert "health: ready" in watch.stdout, watch.stdout
        report = subprocess.run(
            [sys.executable, "-m", "eagle_tui", "report", *srv.cli_args(), "--container", name,
             "--container-cli", "docker", "--json"],
            env=env, capture_output=True, text=True, timeout=90)
        assert report.returncode == 0, report.stderr
        doc = json.loads(report.stdout)
        assert doc["engine"] == "sglang" and doc["phase"] in ("ready", "serving"), doc
        missing = subprocess.run(
            [sys.executable, "-m", "eagle_tui", "watch", *srv.cli_args(), "--container",
             "eagletest-none", "--container-cli", "podman", "--headless"],
            env=env, capture_output=True, text=True, timeout=90)
        assert missing.returncode == 2
        assert missing.stderr.strip() == (
            f"eagle-tui watch: error: podman on root@127.0.0.1:{srv.port}: no such container: "
            "eagletest-none"), missing.stderr
    finally:
        containers.remove(name)


async def test_stream_lines_with_stderr_over_ssh(sshd: Any) -> None:
    """``stream_lines(stderr=True)`` over SSH: both streams' lines, each in its order, and the
    failure's message from stderr as without it."""
    from eagle_tui.transport.base import TransportError

    tr = sshd.transport()
    script = "echo out1; echo err1 >&2; echo out2; printf err2 >&2; exit 3"
    got: list[bytes] = []
    try:
        with pytest.raises(TransportError, match="exited with 3: err2"):
            async for ln in tr.stream_lines(["sh", "-c", script], stderr=True):
                got.append(ln)
        assert sorted(got) == [b"err1", b"err2", b"out1", b"out2"]
        assert [ln for ln in got if ln.startswith(b"err")] == [b"err1", b"err2"]
        only = [ln async for ln in tr.stream_lines(["sh", "-c", "echo a; echo b >&2"])]
        assert only == [b"a"]
    finally:
        await tr.close()
