"""The fleet's SSH prober against a real sshd on 127.0.0.1 and simulators on 127.0.0.1.

Each simulator runs under an engine command line (``python -m sglang.launch_server --port P``:
a stand-in ``sglang`` package that runs ``eagle_tui.sim`` in-process), its output going to a log
file, so discovery over SSH finds it as it finds a real server. Three instances that
Prometheus would read as ``up == 0``: one still loading (slow-start), one that crashes (CUDA OOM
while capturing CUDA graphs) and a port nothing serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from eagle_tui.probe.fleet_prober import FleetProber
from tests.integration.test_launch_stop import free_port

pytestmark = [pytest.mark.sshd]

SHIM = '''
import os, runpy, sys
port = sys.argv[sys.argv.index("--port") + 1]
sys.argv = ["eagle_tui.sim", "--engine", "sglang", "--scenario", os.environ["SIM_SCENARIO"],
            "--port", port, "--gpus", "1", "--speed", os.environ["SIM_SPEED"],
            "--workdir", os.environ["SIM_WORKDIR"], "--log", os.environ["SIM_LOG"],
            "--exit-with-parent"]
runpy.run_module("eagle_tui.sim", run_name="__main__")
'''
TARGET = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "target"


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[Callable[[str, float], tuple[int, Path]]]:
    pkg = tmp_path / "shim" / "sglang"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "launch_server.py").write_text(SHIM)
    procs: list[subprocess.Popen[bytes]] = []

    def start(scenario: str, speed: float) -> tuple[int, Path]:
        port, work = free_port(), tmp_path / scenario
        work.mkdir()
        log = work / "server.log"
        env = {**os.environ, "SIM_SCENARIO": scenario, "SIM_SPEED": str(speed),
               "SIM_WORKDIR": str(work), "SIM_LOG": str(log),
               "PYTHONPATH": os.pathsep.join([str(tmp_path / "shim"),
                                              *filter(None, [os.environ.get("PYTHONPATH")])])}
        with log.open("ab") as out:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "sglang.launch_server", "--model-path", str(TARGET),
                 "--port", str(port)], stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=env, start_new_session=True))
        return port, log

    try:
        yield start
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


def test_down_starting_and_crashed_told_apart_over_ssh(
        sshd: object, engines: Callable[[str, float], tuple[int, Path]]) -> None:
    slow, _ = engines("slow-start", 1.0)
    oom, oom_log = engines("oom", 4.0)
    nothing = free_port()
    insts = {"slow": f"127.0.0.1:{slow}", "oom": f"127.0.0.1:{oom}",
             "none": f"127.0.0.1:{nothing}"}
    dest = f"root@127.0.0.1:{sshd.port}"  # type: ignore[attr-defined]
    prober = FleetProber([("127.0.0.1", dest)], set(), lambda _: sshd.transport(),  # type: ignore[attr-defined]
                         ttl_s=0.0, deadline_s=20.0)
    seen: list[dict[str, str]] = []

    async def run() -> dict[str, str]:
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                prober.start(insts.values())
                while prober._tasks:
                    await asyncio.sleep(0.05)
                hints = {k: prober.answers.get(i, (0.0, ""))[1] for k, i in insts.items()}
                seen.append(hints)
                if hints["oom"].startswith("crashed"):
                    return hints
                await asyncio.sleep(0.3)
            return seen[-1] if seen else {}
        finally:
            await prober.close()

    hints = asyncio.run(run())
    assert not prober.errors, prober.errors
    assert seen[0]["slow"] == "starting" and seen[0]["none"] == "down", seen
    assert hints["slow"] == "starting" and hints["none"] == "down"
    assert hints["oom"].startswith("crashed: cuda_oom"), (seen, oom_log.read_text()[-2000:])
    assert len(prober._transports) == 0  # closed
    assert prober.probes == len(seen)  # one probe of the host per round, for all three
