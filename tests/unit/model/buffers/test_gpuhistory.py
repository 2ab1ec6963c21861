"""The model's GPU history: utilisation per (host, GPU), hosts' last-seen rows, stale hosts."""

from __future__ import annotations

from eagle_tui.model.buffers.gpuhistory import GpuHistory
from eagle_tui.model.events import GpuInfo, GpuSample


def gpu(index: int, util: float | None, host: str = "") -> GpuInfo:
    return GpuInfo(index, "H200", util_gpu=util, host=host)


def test_one_host_keeps_a_bounded_history_per_gpu() -> None:
    h = GpuHistory(maxlen=3)
    for t in range(5):
        h.record(GpuSample(float(t), "ok", (gpu(0, 10.0 * t), gpu(1, None))))
    assert h.utilisation("", 0) == [20.0, 30.0, 40.0]
    assert h.utilisation("", 1) == [] and not h.grouped
    latest = h.last_recorded
    assert latest is not None and [g.index for _, g, stale in h.rows(latest)] == [0, 1]
    assert h.rows(None) == [] and h.rows(GpuSample(9.0, "no_driver")) == []


def test_update_takes_every_sample_else_the_latest_once() -> None:
    h = GpuHistory()
    a, b = GpuSample(1.0, "ok", (gpu(0, 1.0),)), GpuSample(2.0, "ok", (gpu(0, 2.0),))
    h.update(b, [a, b])
    assert h.utilisation("", 0) == [1.0, 2.0]
    h.update(b)  # the same latest sample again: no new point
    c = GpuSample(3.0, "ok", (gpu(0, 3.0),))
    h.update(c)
    assert h.utilisation("", 0) == [1.0, 2.0, 3.0]


def test_a_host_that_drops_out_keeps_its_last_rows_marked_stale() -> None:
    h = GpuHistory()
    both = GpuSample(1.0, "ok", (gpu(0, 50.0, "node-a"), gpu(0, 60.0, "node-b")))
    h.record(both)
    only_a = GpuSample(2.0, "ok", (gpu(0, 55.0, "node-a"),),
                       error="node-b: link down")
    h.record(only_a)
    assert h.grouped and h.hosts == ["node-a", "node-b"]
    rows = h.rows(only_a)
    assert [(host, g.util_gpu, stale) for host, g, stale in rows] == [
        ("node-a", 55.0, False), ("node-b", 60.0, True)]
    assert h.utilisation("node-a", 0) == [50.0, 55.0] and h.utilisation("node-b", 0) == [60.0]
