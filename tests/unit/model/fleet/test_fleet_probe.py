"""``down or starting`` told apart on the host: the hint logic (pure) and the prober's bounds
(concurrency, deadline, cache), with the host's answers stubbed (the real ones: tests/ssh)."""

from __future__ import annotations

import asyncio
import json

from eagle_tui.headless.fleet import snapshot_json
from eagle_tui.model.fleet.probe import probe_hint
from eagle_tui.model.fleet.snapshot import DOWN_OR_STARTING, FleetRow, FleetSnapshot, build_snapshot
from eagle_tui.probe.fleet_prober import FleetProber
from eagle_tui.transport.base import TransportError
from tests.support.paths import TESTS

SAMPLES = TESTS / "fixtures" / "samples"
STARTUP = (b"[2026-12-01 10:00:00] server_args=ServerArgs(model_path='m', port=30000)\n"
           b"[2026-12-01 10:00:05] Load weight begin. avail mem=78.00 GB\n"
           b"Loading safetensors checkpoint shards:  40% Completed | 2/5 [00:03<00:04]\n")


def test_hint_from_process_and_log() -> None:
    assert probe_hint(True, STARTUP) == "starting"
    assert probe_hint(True, None) == "starting"
    assert probe_hint(False, None) == "down"
    assert probe_hint(False, STARTUP) == "down"
    oom = (SAMPLES / "sglang-oom-cuda-graph.log").read_bytes()
    for alive in (True, False):  # hung after the crash, or gone: crashed either way
        hint = probe_hint(alive, b"cut mid-line" + oom)
        assert hint.startswith("crashed: cuda_oom: ") and "CUDA out of memory" in hint
        assert len(hint) < 90
    nccl = probe_hint(False, (SAMPLES / "sglang-watchdog-2026.log").read_bytes())
    assert nccl.startswith("crashed: ")


def test_hints_refine_down_rows_and_reach_the_json() -> None:
    answers = {"up": [({"instance": "a:1"}, 0.0), ({"instance": "b:1"}, 0.0),
                      ({"instance": "c:1"}, 0.0), ({"instance": "d:1"}, 1.0)],
               "engine_vllm": [({"instance": "d:1", "engine": "vllm", "model_name": "m"}, 1.0)]}
    snap = build_snapshot(answers, [], 1.0, hints={
        "a:1": "starting", "b:1": "crashed: cuda_oom: CUDA out of memory", "c:1": "down",
        "d:1": "down"})  # an up instance keeps its own state
    rows = {r.instance: r for r in snap.rows}
    assert rows["a:1"].state == "starting" and rows["c:1"].state == "down"
    assert rows["b:1"].state.startswith("crashed: cuda_oom")
    assert rows["d:1"].state != "down"
    assert all("down" in rows[i].flags for i in ("a:1", "b:1", "c:1"))
    bogus = build_snapshot(answers, [], 1.0, hints={"a:1": "bogus"})
    assert {r.instance: r.state for r in bogus.rows}["a:1"] == DOWN_OR_STARTING
    doc = json.loads(snapshot_json(snap))
    assert {e["instance"]: e["state"] for e in doc["instances"]}["a:1"] == "starting"


class Clock:
    t = 0.0

    def __call__(self) -> float:
        return self.t


def down(*instances: str) -> FleetSnapshot:
    return FleetSnapshot(1.0, tuple(FleetRow(i, up=False) for i in instances))


def test_prober_bounds_concurrency_caches_and_survives_failures() -> None:
    clock = Clock()
    running = peak = 0
    asked: list[tuple[str, tuple[str, ...]]] = []

    class Stub(FleetProber):
        async def probe(self, dest: str, instances: list[str]) -> dict[str, str]:
            nonlocal running, peak
            asked.append((dest, tuple(instances)))
            running += 1
            peak = max(peak, running)
            try:
                if dest == "ops@slow":
                    await asyncio.sleep(5)
                if dest == "ops@bad":
                    raise TransportError("connection refused")
                await asyncio.sleep(0.01)
                return {i: "starting" for i in instances}
            finally:
                running -= 1

    def connect(dest: str) -> object:
        raise AssertionError("stubbed")

    prober = Stub([("bad", "ops@bad"), ("slow", "ops@slow"), ("h*", "ops@{host}")], set(),
                  connect,  # type: ignore[arg-type]
                  max_hosts=2, deadline_s=0.2, ttl_s=10.0, clock=clock)

    async def run() -> None:
        hosts = [f"h{n}:8000" for n in range(6)]
        prober.observe(down(*hosts, "h0:8001", "bad:1", "slow:1", "unmapped:1"))
        prober.observe(down(*hosts))  # asked already: not again within the ttl
        for _ in range(100):
            if not prober._tasks:
                break
            await asyncio.sleep(0.02)

    asyncio.run(run())
    assert peak <= 2  # at most max_hosts at once
    assert len(asked) == 8  # one probe per host (h0's two instances together), no repeats
    assert ("ops@h0", ("h0:8000", "h0:8001")) in asked
    assert not any("unmapped" in d for d, _ in asked)
    hints = prober.hints()
    assert hints["h0:8001"] == "starting" and len(hints) == 7
    assert "slow:1" not in hints and "bad:1" not in hints  # deadline, failure: no hint
    assert "connection refused" in prober.errors["ops@bad"] and "ops@slow" in prober.errors
    clock.t = 11.0
    assert prober.hints() == {}  # cached for the ttl only
