"""The container state source and discovery with a scripted host (the real engine's tests are
in tests/containers/): over SSH the container's processes are its first process's ``ps`` tree;
a removed container ends the source after its exit; discovery skips CLIs that fail."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from eagle_tui.model.events import Event, ProcessExited, ProcessSample
from eagle_tui.probe.tables import load_tables
from eagle_tui.sources.containers.cli import ContainerCli
from eagle_tui.sources.containers.discover import discover_containers
from eagle_tui.sources.containers.state import ContainerStateSource
from eagle_tui.transport.base import RunResult

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "containers"
RUNNING = (FIX / "podman-inspect-running.json").read_bytes()  # .State.Pid 14092
KILLED = (FIX / "podman-inspect-killed.json").read_bytes()
NO_SUCH = b"Error: no such container eagletest-capture-14018-1\n"
PS = b"""    1     0 Ss   1000 100 systemd
14081     1 Ssl   2000  10 conmon
14092 14081 Sl  400000  10 python
14100 14092 Sl  300000   9 python
14101 14100 S    20000   9 python
  999     1 S     1000  10 other
"""


class Host:
    """A remote host whose commands answer from a script (``inspect`` answers in turn)."""

    host = "gpu-box"

    def __init__(self, inspects: list[tuple[int, bytes, bytes]],
                 answers: dict[str, RunResult] | None = None) -> None:
        self.inspects = inspects
        self.answers = answers or {}
        self.argvs: list[list[str]] = []

    async def run(self, argv: list[str], timeout: float = 10.0, *,
                  stdin: bytes | None = None) -> RunResult:
        self.argvs.append(argv)
        if argv[:2] == ["podman", "inspect"] and self.inspects:
            return RunResult(*self.inspects.pop(0))
        if argv[:3] == ["timeout", "30", "podman"] and argv[3] == "wait":
            await asyncio.sleep(0.05)
            return RunResult(0, b"137\n", b"")
        if argv[0] == "ps":
            return RunResult(0, PS, b"")
        for key, res in self.answers.items():
            if " ".join(argv).startswith(key):
                return res
        return RunResult(127, b"", b"sh: command not found")


async def events_of(source: ContainerStateSource) -> list[Event]:
    out: list[Event] = []
    async for batch in source.events():
        out.extend(batch if isinstance(batch, list) else [batch])
    return out


def test_remote_tree_then_killed_then_removed() -> None:
    host = Host([(0, RUNNING, b""), (0, KILLED, b""), (125, b"[]", NO_SUCH)])
    source = ContainerStateSource(ContainerCli(host, "podman"),  # type: ignore[arg-type]
                                  "eagletest-capture-14018-1", interval=0.01)
    events = asyncio.run(asyncio.wait_for(events_of(source), 10))
    sample, ended = events[0], events[1]
    assert isinstance(sample, ProcessSample) and sample.pid == 14092
    assert sorted(sample.pids) == [14092, 14100, 14101]  # not 999, not conmon above it
    assert sample.rss_bytes == (400000 + 300000 + 20000) * 1024
    assert isinstance(ended, ProcessExited) and ended.exit_code == 137 and ended.signal == 9
    assert ended.memory_limit == 256 << 20 and ended.container == "eagletest-capture-14018-1"
    assert len(events) == 2  # removed after it ended: nothing more, and the source ends
    # the CLI's wait ran on the host beside the polls, with podman's short interval
    # (bounded: a remote command that prints nothing outlives its closed channel)
    assert ["timeout", "30", "podman", "wait", "--interval", "100ms",
            "eagletest-capture-14018-1"] in host.argvs


def test_discovery_skips_failing_clis_and_lists_once() -> None:
    ps = json.dumps([{"Id": "abc", "Names": ["sglang-eagle3"], "State": "running"}]).encode()
    oom = (FIX / "dockerd-inspect-oomkilled.json").read_bytes()
    host = Host([], {
        "docker ps": RunResult(1, b"", b"Cannot connect to the Docker daemon at unix:///x"),
        "podman ps": RunResult(0, ps, b""),
        "podman inspect": RunResult(0, oom, b""),
    })
    found = asyncio.run(discover_containers(host, load_tables()))  # type: ignore[arg-type]
    assert [(f.cli, f.name, f.server.engine, f.server.url) for f in found] == \
        [("podman", "sglang-eagle3", "sglang", "http://127.0.0.1:30000")]
    assert "killed: out of memory (OOMKilled) at 16 GiB" in found[0].describe()
    nothing = Host([], {})
    assert asyncio.run(discover_containers(nothing, load_tables())) == []  # type: ignore[arg-type]


def test_here_the_tree_is_the_kernels_children_lists_of_the_first_process() -> None:
    import subprocess
    import sys
    import time

    import psutil

    code = ("import subprocess, sys, time\n"
            "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
            "print(kid.pid, flush=True)\n"
            "time.sleep(30)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert parent.stdout is not None
        kid = int(parent.stdout.readline())
        source = ContainerStateSource(ContainerCli(Host([]), "podman"), "c")
        pids, rss, _ = source._local_tree(parent.pid)
        assert pids == (parent.pid, kid)  # the same as psutil's answer, without its host scan
        assert [parent.pid, *(c.pid for c in psutil.Process(parent.pid).children(True))] \
            == list(pids)
        assert rss is not None and rss > 0
        t0 = time.monotonic()
        assert source._local_tree(4_000_000) == ((4_000_000,), None, None)  # gone: the pid alone
        assert time.monotonic() - t0 < 5
    finally:
        for p in psutil.Process(parent.pid).children(True):
            p.kill()
        parent.kill()
        parent.wait()
