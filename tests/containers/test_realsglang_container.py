"""The REAL SGLang 0.5.23 CPU server inside a podman container (tests/containers/realsglang.py):
``wait --container`` follows its start to ready through the container's log and state, and after
a bounded load the dashboard's state (``watch --container --headless``) shows the EAGLE-3
acceptance the server's own counters give. One server start; the container is removed at the
end whatever happens."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.containers.realsglang import sglang_container
from tests.support.containers import ContainerEngine
from tests.support.relaunch_helpers import START_LIMIT_S, load, server_accept

pytestmark = [pytest.mark.realserver, pytest.mark.realserver_sglang, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def eagle_json(containers: ContainerEngine, *args: str, timeout: float
               ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    done = subprocess.run([sys.executable, "-m", "eagle_tui", *args, "--json"],
                          env={**containers.envs(), "PYTHONPATH": str(ROOT)}, text=True,
                          capture_output=True, timeout=timeout)
    return done, [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]


def test_wait_and_watch_on_the_real_eagle3_sglang_container(containers: ContainerEngine
                                                            ) -> None:
    with sglang_container(containers, "EAGLE3") as server:
        t0 = time.monotonic()
        waited, lines = eagle_json(containers, "wait", "--container", server.name,
                                   "--container-cli", "podman", "--timeout", str(START_LIMIT_S),
                                   "--gpu", "none", timeout=START_LIMIT_S + 30)
        took = time.monotonic() - t0
        assert waited.returncode == 0, waited.stdout[-3000:] + waited.stderr + server.logs()
        result = lines[-1]
        assert result["event"] == "result" and result["status"] == "ready", result
        # the engine's phases from the container's log, and its own startup timings line
        phases = {p["phase"] for p in lines if p.get("event") == "progress"}
        assert {"init", "weights_loaded", "kv_cache"} <= phases, phases
        assert any((p.get("engine_startup") or {}).get("source") == "log" for p in lines), \
            lines[-3:]
        print(f"wait --container: READY after {took:.1f} s")
        load(server.url)
        counted = server_accept(server.url)
        watched, states = eagle_json(containers, "watch", "--container", server.name,
                                     "--container-cli", "podman", "--headless",
                                     "--duration", "8", "--gpu", "none", timeout=90)
        assert watched.returncode == 0, watched.stderr[-2000:]
        accept = [s["numbers"]["accept_len"] for s in states
                  if (s.get("numbers") or {}).get("accept_len") is not None]
        assert accept and accept[-1]["value"] >= 2.5, (counted, states[-2:])
        assert counted >= 2.5
        print(f"accept len: dashboard {accept[-1]['value']:.2f} ({accept[-1]['source']}), "
              f"server counters {counted:.2f}")
