"""A container's log caught up through each CLI: N lines printed at once, the time until the
log source (``sources/containers/logs.py``) has handed all of them to the parser, and the
CLI's own time for the same lines. Needs the test container engine (tests/install.sh).

    python benchmarks/bench_container_log.py [N] [podman,docker]
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eagle_tui.sources.containers.logs import ContainerLog
from eagle_tui.transport.local import LocalTransport
from tests.support import containers as engine


async def follow(name: str, cli: str, n: int) -> float:
    src = ContainerLog(LocalTransport(), name, cli=cli)
    t0 = time.monotonic()
    events = src.events()
    try:
        async for _ in events:
            if src.lines >= n:
                return time.monotonic() - t0
    finally:
        await events.aclose()
    raise RuntimeError(f"the log ended at {src.lines} lines")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    clis = sys.argv[2].split(",") if len(sys.argv) > 2 else ["podman", "docker"]
    eng = engine.start()
    os.environ.update(eng.env)
    name = eng.name("bench")
    try:
        eng.run(name, ["/bin/sh", "-c", f"seq 1 {n}; sleep 600"])
        while eng.podman("logs", name).stdout.count("\n") < n:
            time.sleep(0.5)
        for cli in clis:
            t0 = time.monotonic()
            subprocess.run([cli, "logs", "--timestamps", name], capture_output=True, check=True,
                           env=eng.envs())
            raw = time.monotonic() - t0
            took = asyncio.run(follow(name, cli, n))
            print(f"{cli}: {n:,} lines: the CLI alone {raw:.2f} s; the log source {took:.2f} s "
                  f"= {n / took:,.0f} lines/s", flush=True)
    finally:
        eng.remove(name)
        eng.close()


if __name__ == "__main__":
    main()
