"""GPU memory steps (issue 15): read between full samples, emitted at once, processes alongside."""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace

from eagle_tui.model.buffers.gpuhistory import MEMORY_STEP, GpuHistory, memory_moved
from eagle_tui.model.events import GpuInfo, GpuProcess, GpuSample
from eagle_tui.sources.gpu import NvmlSampler
from tests.unit.sources.test_gpu import GIB, FakeNvml, h200


def test_a_memory_step_is_a_sample_with_the_process_list_of_the_same_read() -> None:
    fake = FakeNvml([h200(0, used_gib=1.0), h200(1, used_gib=1.0)])
    sampler = NvmlSampler(nvml=fake)
    assert sampler.start() is None
    full = sampler.sample()
    assert sampler.memory_step(full) is None  # nothing moved: nothing to emit
    fake.gpus[1]["mem"] = SimpleNamespace(used=21 * GIB, total=int(139.8 * GIB))
    fake.gpus[1]["procs"] = [SimpleNamespace(pid=7, usedGpuMemory=20 * GIB)]
    fake.calls.clear()
    step = sampler.memory_step(full)
    assert step is not None and step.state == "ok"
    assert [g.mem_used for g in step.gpus] == [GIB, 21 * GIB]
    assert step.gpus[1].processes == (GpuProcess(7, step.gpus[1].processes[0].name, 20 * GIB),)
    assert step.gpus[1].util_gpu == full.gpus[1].util_gpu  # the rest: the last full sample's
    assert "util" not in fake.calls and fake.calls.count("procs") == 2
    assert sampler.memory_step(step) is None  # compared with the last sample emitted


def test_a_small_move_waits_for_the_next_full_sample() -> None:
    fake = FakeNvml([h200(0, used_gib=1.0)])
    sampler = NvmlSampler(nvml=fake)
    assert sampler.start() is None
    full = sampler.sample()
    fake.gpus[0]["mem"] = SimpleNamespace(used=GIB + MEMORY_STEP - 1, total=int(139.8 * GIB))
    assert sampler.memory_step(full) is None
    fake.gpus[0]["mem"] = SimpleNamespace(used=GIB - MEMORY_STEP, total=int(139.8 * GIB))
    assert sampler.memory_step(full) is not None  # freed memory counts the same


def test_the_process_list_is_read_with_every_full_sample_by_default() -> None:
    fake = FakeNvml([h200(0)])
    sampler = NvmlSampler(nvml=fake)
    assert sampler.start() is None
    for _ in range(3):
        sampler.sample()
    assert fake.calls.count("procs") == 3


async def test_the_source_emits_a_step_between_full_samples() -> None:
    fake = FakeNvml([h200(0, used_gib=1.0)])
    sampler = NvmlSampler(nvml=fake, interval=10.0, memory_interval=0.01)
    got: list[GpuSample] = []

    async def collect() -> None:
        async with contextlib.aclosing(sampler.events()) as events:
            async for ev in events:
                assert isinstance(ev, GpuSample)
                got.append(ev)
                if len(got) == 1:
                    fake.gpus[0]["mem"] = SimpleNamespace(used=30 * GIB, total=int(139.8 * GIB))
                if len(got) == 2:
                    return

    await asyncio.wait_for(collect(), 2.0)  # far sooner than the 10 s interval
    assert [g.gpus[0].mem_used for g in got] == [GIB, 30 * GIB]


def test_memory_only_sampling_is_off_when_not_shorter_than_the_interval() -> None:
    assert NvmlSampler(nvml=FakeNvml([]), interval=0.1, memory_interval=0.1).memory_interval \
        is None
    assert NvmlSampler(nvml=FakeNvml([]), memory_interval=None).memory_interval is None


def _sample(t: float, used: int | None, util: float = 50.0) -> GpuSample:
    return GpuSample(t, "ok", (GpuInfo(0, "H200", mem_used=used, util_gpu=util),))


def test_memory_moved_is_a_step_or_a_changed_shape() -> None:
    a = _sample(1.0, 10 * GIB)
    assert memory_moved(None, a) and not memory_moved(a, a) and not memory_moved(a, None)
    assert not memory_moved(a, _sample(2.0, 10 * GIB + MEMORY_STEP - 1))
    assert memory_moved(a, _sample(2.0, 10 * GIB - MEMORY_STEP))
    assert memory_moved(a, _sample(2.0, None))
    assert memory_moved(a, GpuSample(2.0, "error", error="lost"))
    two = GpuSample(2.0, "ok", (*a.gpus, GpuInfo(1, "H200", mem_used=0)))
    assert memory_moved(a, two)


def test_samples_closer_than_a_point_refresh_the_last_point_instead_of_adding_one() -> None:
    h = GpuHistory()
    h.record(_sample(1.0, GIB, 10.0))
    h.record(_sample(1.1, 2 * GIB, 10.0))  # a memory step: the same utilisation point
    h.record(_sample(1.4, 2 * GIB, 30.0))
    h.record(_sample(2.0, 2 * GIB, 40.0))
    assert h.utilisation("", 0) == [30.0, 40.0]
