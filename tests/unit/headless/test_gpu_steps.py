"""GPU memory steps in the headless output, on generated memory series: the samples are the
simulator's GPUs (``sim/gpu.py``) as its nvidia-smi prints them, read by the real parser
(``sources/gpu_smi.py``); no line for noise, one per step, never more than one per GPU a
second; and the printer's text and JSON lines."""

from __future__ import annotations

import io
import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.headless.gpusteps import GIB, MIN_GAP_S, GpuSteps, threshold
from eagle_tui.headless.progress import ProgressPrinter
from eagle_tui.model.events import GpuInfo, GpuSample, Tick
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.sim.gpu import GpuModel
from eagle_tui.sim.scenario import GPU_TOTAL_MIB, IDLE_GIB
from eagle_tui.sim.smi import GPU_FIELDS, _table
from eagle_tui.sources.gpu_smi import SMI_FIELDS, parse_smi_line

MIB = 1 << 20
TOTAL = GPU_TOTAL_MIB * MIB


def sim_sample(model: GpuModel, t: float, mem_gib: tuple[float, ...]) -> GpuSample:
    """The simulator's GPUs at ``mem_gib`` as its nvidia-smi prints them, parsed for real."""
    model.set_memory(mem_gib)
    rows = model.sample()["gpus"]
    lines = _table(SMI_FIELDS.split(","), GPU_FIELDS, rows, header=False, units=False)
    infos = tuple(i for i in (parse_smi_line(line) for line in lines) if i is not None)
    return GpuSample(t, "ok", infos, backend="nvidia-smi")


def feed(series: list[tuple[float, tuple[float, ...]]],
         steps: GpuSteps | None = None) -> list[tuple[float, int, int, int]]:
    """(t, gpu, previous, now) of every line for a series of (t, GiB per GPU)."""
    steps = steps or GpuSteps()
    model = GpuModel(len(series[0][1]), seed=1)
    model.set_label("load_weights")
    out = []
    for t, mem in series:
        out += [(s.t, s.index, s.previous, s.mem_used) for s in steps.update(sim_sample(model, t,
                                                                                        mem))]
    return out


noise = st.floats(min_value=-0.45, max_value=0.45)  # GiB: under the 1 GiB threshold
base_gib = st.floats(min_value=IDLE_GIB + 0.5, max_value=100.0)


@settings(max_examples=30, deadline=None)
@given(base_gib, st.lists(noise, min_size=1, max_size=80), st.integers(1, 4))
def test_noise_prints_nothing(base: float, jitter: list[float], gpus: int) -> None:
    series = [(i * 0.1, tuple(base + j for _ in range(gpus))) for i, j in enumerate(jitter)]
    assert feed([(0.0, (base,) * gpus), *series]) == []


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(min_value=1.2, max_value=30.0), min_size=1, max_size=6),
       st.lists(noise, min_size=40, max_size=40))
def test_one_line_per_step(jumps: list[float], jitter: list[float]) -> None:
    """Weight and KV-cache steps, noise between them, each step held 2 s: one line each,
    from the value printed before to within the noise of the step's level (nvidia-smi shows
    the simulator's memory less what the driver holds at idle)."""
    series, level, t = [(0.0, (IDLE_GIB,))], IDLE_GIB, 0.0
    for jump in jumps:
        level = min(level + jump, GPU_TOTAL_MIB / 1024 - 1)
        for j in jitter[:20]:
            t += 0.1
            series.append((t, (max(IDLE_GIB, level + j * 0.2),)))
    lines = feed(series)
    distinct = sum(1 for a, b in zip([IDLE_GIB, *levels(jumps)], levels(jumps), strict=False)
                   if b - a >= 1.0)
    assert len(lines) == distinct
    for (_, _, prev, now), lvl in zip(lines, [x for x in levels(jumps)], strict=False):
        assert abs(now / GIB - (lvl - IDLE_GIB)) < 0.2 and now - prev >= threshold(TOTAL)


def levels(jumps: list[float]) -> list[float]:
    out, level = [], IDLE_GIB
    for jump in jumps:
        level = min(level + jump, GPU_TOTAL_MIB / 1024 - 1)
        out.append(level)
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(min_value=0.01, max_value=0.7),
                          st.floats(min_value=IDLE_GIB, max_value=130.0),
                          st.floats(min_value=IDLE_GIB, max_value=130.0)),
                min_size=1, max_size=120))
def test_never_more_than_one_line_per_gpu_a_second(points: list[tuple[float, float,
                                                                      float]]) -> None:
    t, series = 0.0, []
    for dt, a, b in points:
        t += dt
        series.append((t, (a, b)))
    lines = feed(series)
    for gpu in (0, 1):
        times = [t for t, g, _, _ in lines if g == gpu]
        assert all(b - a >= MIN_GAP_S - 1e-9 for a, b in itertools.pairwise(times))
    for _, _, prev, now in lines:
        assert abs(now - prev) >= threshold(TOTAL)


def test_a_step_inside_the_gap_prints_after_it_at_its_newest_value() -> None:
    lines = feed([(0.0, (1.6,)), (0.5, (11.6,)), (0.9, (21.6,)), (1.2, (31.6,)), (2.0, (31.8,)),
                  (2.3, (41.6,))])  # nvidia-smi shows 1, 11, 21, 31, 31.2, 41 GiB
    assert [(t, round(p / GIB), round(n / GIB)) for t, _, p, n in lines] == [
        (0.5, 1, 11), (2.0, 11, 31)]  # 41 GiB waits for a sample after 3.0 s


def test_small_gpu_uses_five_percent() -> None:
    small = 8 * GIB
    assert threshold(small) == int(0.05 * small) < GIB
    assert threshold(TOTAL) == GIB
    steps = GpuSteps()
    gpu = GpuInfo(0, mem_used=GIB, mem_total=small)
    assert steps.update(GpuSample(0.0, "ok", (gpu,))) == []
    moved = GpuInfo(0, mem_used=GIB + int(0.06 * small), mem_total=small)
    assert len(steps.update(GpuSample(1.0, "ok", (moved,)))) == 1


async def test_printer_text_and_json_lines() -> None:
    for as_json in (False, True):
        out = io.StringIO()
        p = ProgressPrinter(out, as_json=as_json, has_url=False, decide=False)
        model = GpuModel(2, seed=1)
        model.set_label("load_weights")
        s = DashboardState()
        for t, mem in ((100.0, (IDLE_GIB, IDLE_GIB)), (100.5, (10.6, IDLE_GIB)),
                       (100.6, (10.7, IDLE_GIB)), (101.7, (20.6, 10.6))):
            s = reduce(s, [Tick(t), sim_sample(model, t, mem)])
            p.on_batch(s, [])
        text = out.getvalue().splitlines()
        if as_json:
            steps = [o for o in map(json.loads, text) if o["event"] == "gpu_memory"]
            assert [(o["gpu"], round(o["mem_used"] / GIB), round(o["delta"] / GIB))
                    for o in steps] == [(0, 10, 10), (0, 20, 10), (1, 10, 10)]
            assert steps[0]["mem_total"] == TOTAL and steps[0]["previous"] == 0
        else:
            steps_text = [line for line in text if "memory:" in line]
            assert len(steps_text) == 3
            assert "GPU 0 memory: 0.0 → 10.0 GiB of 140 GiB (+10.0 GiB)" in steps_text[0]
