"""The health poller's path on the simulator's real HTTP server (in-process, 127.0.0.1): SGLang is
asked ``/ready`` (its ``/health`` generates, and the simulator prints that generation's prefill
line as the real one does), vLLM its cheap ``/health``; bench's markers take the same paths."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator

import httpx

from eagle_tui.commands.bench import run_bench
from eagle_tui.model.bench.windows import bench_mark, own_path
from eagle_tui.model.engines.readiness import ReadinessChoice
from eagle_tui.model.events import HealthSample
from eagle_tui.sim.engine import ServingEngine
from eagle_tui.sim.scenario import make_config
from eagle_tui.sim.server import HttpServer
from eagle_tui.sources.health import HealthPoller
from eagle_tui.transport.local import LocalTransport


class Sim:
    def __init__(self, engine_name: str) -> None:
        cfg = make_config(engine_name, "healthy", gpus=2, port=0)
        self.lines: list[str] = []
        self.engine = ServingEngine(cfg, self.lines.extend, time.time)
        # speed 20: SGLang's /health answers its generation in 50 ms, not 1 s
        self.server = HttpServer(self.engine, self.lines.extend, time.time, speed=20.0)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def scheduler_lines(self) -> list[str]:
        return [ln for ln in self.lines if "Prefill batch" in ln or "Decode batch" in ln]

    def access(self, needle: str) -> list[str]:
        return [ln for ln in self.lines if f'"GET {needle}' in ln]


async def serving(engine_name: str) -> AsyncIterator[Sim]:
    sim = Sim(engine_name)
    sim.engine.start_serving()
    await sim.server.serve()
    task = asyncio.create_task(sim.engine.run())
    try:
        yield sim
    finally:
        task.cancel()
        await sim.server.close()


def poller(sim: Sim, engine: str | None, polls: int, ready_interval: float = 0.05
           ) -> HealthPoller:
    return HealthPoller(LocalTransport(), sim.url, interval=0.02, ready_interval=ready_interval,
                        timeout=2.0, max_polls=polls, choice=ReadinessChoice(lambda: engine),
                        mark=own_path)


async def samples(p: HealthPoller) -> list[HealthSample]:
    return [ev async for ev in p.events() if isinstance(ev, HealthSample)]


async def test_sglang_sim_health_generates_and_ready_does_not() -> None:
    async for sim in serving("sglang"):
        async with httpx.AsyncClient(base_url=sim.url, trust_env=False) as c:
            assert (await c.get("/health")).status_code == 503  # starting: no generation
            assert (await c.get("/ready")).status_code == 503
            assert sim.scheduler_lines() == []
            sim.server.ready = True
            assert (await c.get("/ready")).status_code == 200
            assert sim.scheduler_lines() == []
            assert (await c.get("/health")).status_code == 200
            assert (await c.get("/health_generate")).status_code == 200
        prefill = sim.scheduler_lines()
        assert len(prefill) == 2, sim.lines
        assert "Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 0" in prefill[0]
        assert sim.engine.prompt_tokens == 0  # not counted as served work (log_metrics=False)


async def test_the_poller_asks_sglang_ready_and_never_makes_it_work() -> None:
    for engine in ("sglang", None):
        async for sim in serving("sglang"):
            p = poller(sim, engine, polls=12)
            got: list[HealthSample] = []
            async for ev in p.events():
                assert isinstance(ev, HealthSample)
                got.append(ev)
                if len(got) == 3:
                    sim.server.ready = True
            assert [s.state for s in got[:3]] == ["starting"] * 3
            assert all(s.state == "ready" and s.path == "/ready" for s in got[3:])
            assert sim.scheduler_lines() == [], engine
            assert len(sim.access("/ready?eagle-tui ")) == 12 and not sim.access("/health")


async def test_the_poller_asks_vllm_health_after_one_404_on_ready() -> None:
    async for sim in serving("vllm"):
        sim.server.ready = True
        got = await samples(poller(sim, None, polls=6))
        assert [s.state for s in got] == ["ready"] * 6
        assert [s.path for s in got] == ["/health"] * 6
        ready = sim.access("/ready?eagle-tui ")
        assert len(ready) == 1 and '" 404' in ready[0]  # asked once, per server
    async for sim in serving("vllm"):  # known as vLLM: /health at once
        sim.server.ready = True
        assert [s.path for s in await samples(poller(sim, "vllm", polls=3))] == ["/health"] * 3
        assert not sim.access("/ready")


async def test_slow_once_ready_fast_again_on_any_other_answer() -> None:
    async for sim in serving("sglang"):
        sim.server.ready = True
        p = poller(sim, "sglang", polls=10, ready_interval=0.3)
        times: list[float] = []
        async for _ in p.events():
            times.append(time.monotonic())
            if len(times) == 4:
                sim.server.ready = False  # e.g. paused: /ready says 503
        gaps = [b - a for a, b in itertools.pairwise(times)]
        # ready: every ready_interval (the first, onto the poll grid, at least half of it)
        assert gaps[0] >= 0.14 and all(g >= 0.25 for g in gaps[1:4]), gaps
        assert min(gaps[4:]) < 0.25, gaps  # not ready: every interval again


async def test_bench_markers_take_the_no_work_path() -> None:
    for engine, path in (("sglang", "/ready"), ("vllm", "/health")):
        async for sim in serving(engine):
            sim.server.ready = True
            res = await run_bench(sim.url, concurrency=1, requests=1, max_tokens=8, timeout=30)
            assert res.ok == 1
            marks = [ln for ln in sim.lines if bench_mark(ln) is not None and '"GET ' in ln]
            assert len(marks) == 2 and all(f'"GET {path}?eagle-tui-bench=' in m for m in marks)
            assert [bench_mark(m).at for m in marks] == ["start", "end"]  # type: ignore[union-attr]
            if engine == "sglang":  # one prefill line: the load's request, none of a marker
                assert sum("#new-token: 1," in ln for ln in sim.scheduler_lines()) == 0
