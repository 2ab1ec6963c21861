"""Headless GPU memory lines from the simulator's GPUs through the real GPU source: the fake
``nvidia-smi`` (a process, ``sim/gpu.py``) streamed by ``SmiStream`` (``sources/gpu_smi.py``)
into the headless printer while a generated memory series (noise, then 10 GiB steps) is
written to its state file. One JSON line per step per GPU, soon after the step, none for
the noise."""

from __future__ import annotations

import asyncio
import io
import json
import random
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import cast

import pytest

from eagle_tui.headless.progress import ProgressPrinter
from eagle_tui.model.events import Event, GpuSample
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.sim.gpu import STATE_FILE, GpuModel, install_fake_smi, write_state
from eagle_tui.sim.scenario import IDLE_GIB
from eagle_tui.sources.gpu import SmiStream
from eagle_tui.transport.local import LocalTransport

GIB = 1 << 30
# (from second, GiB per GPU): noise around idle, GPU 0's weights, then both GPUs' KV cache
SCHEDULE = ((0.0, (IDLE_GIB, IDLE_GIB)), (1.5, (IDLE_GIB + 10, IDLE_GIB)),
            (3.0, (IDLE_GIB + 20, IDLE_GIB + 20)))
RUN_S = 4.5
NOISE_GIB = 0.3
LATE_S = 1.5  # a step's line within this of the write (a 0.1 s stream; a busy machine)


def level_at(t: float) -> tuple[float, ...]:
    return next(mem for at, mem in reversed(SCHEDULE) if t >= at)


async def test_one_json_line_per_memory_step(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    smi = install_fake_smi(tmp_path, gpus=2, seed=3)
    monkeypatch.setenv("PATH", f"{smi}:{Path('/usr/bin')}:{Path('/bin')}")
    model = GpuModel(2, seed=3, pids=(100, 101))
    model.set_label("load_weights")
    rng = random.Random(7)
    start = time.time()
    written: dict[tuple[float, ...], float] = {}

    async def writer() -> None:
        while (now := time.time()) - start < RUN_S:
            mem = level_at(now - start)
            written.setdefault(mem, now)
            model.set_memory(tuple(max(IDLE_GIB, m + rng.uniform(0, NOISE_GIB)) for m in mem))
            write_state(tmp_path / STATE_FILE, model.sample())
            await asyncio.sleep(0.05)

    out = io.StringIO()
    printer = ProgressPrinter(out, as_json=True, has_url=False, decide=False)
    printed_at: list[float] = []
    transport = LocalTransport()
    task = asyncio.create_task(writer())
    state = DashboardState()
    try:
        agen = cast(AsyncGenerator[Event, None], SmiStream(transport, interval=0.1).events())
        for _ in range(int(RUN_S / 0.05) + 50):  # bounded in count and in time
            if time.time() - start > RUN_S + 1.0:
                break
            ev = await asyncio.wait_for(anext(agen), timeout=5.0)
            if isinstance(ev, GpuSample):
                state = reduce(state, [ev])
                before = out.getvalue().count("gpu_memory")
                printer.on_batch(state, [])
                printed_at += [time.time()] * (out.getvalue().count("gpu_memory") - before)
        await agen.aclose()
    finally:
        task.cancel()
        await transport.close()
    steps = [o for o in map(json.loads, out.getvalue().splitlines())
             if o["event"] == "gpu_memory"]
    got = [(o["gpu"], round(o["previous"] / GIB), round(o["mem_used"] / GIB)) for o in steps]
    assert got == [(0, 0, 10), (0, 10, 20), (1, 0, 20)], got
    due = [written[SCHEDULE[1][1]], written[SCHEDULE[2][1]], written[SCHEDULE[2][1]]]
    late = [at - w for at, w in zip(printed_at, due, strict=True)]
    assert all(0 <= d <= LATE_S for d in late), late
