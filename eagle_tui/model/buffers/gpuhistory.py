"""GPU history: each GPU's recent utilisation and each host's GPUs as last seen.

The reduced state holds only the latest ``GpuSample`` (``DashboardState.gpus``). What the GPU
pane draws besides it, a utilisation sparkline per GPU and the last rows of a host whose link
dropped, is kept here: a small mutable structure beside the state, like the log buffer, fed with
every ``GpuSample`` *event* of a batch (not with state changes), so the sparkline is the same
however the session happened to batch the samples. Pure: stdlib only, tested without a terminal.

One utilisation point per ``POINT_S`` of sample time: the sampler also emits a sample the moment
a GPU's memory moves (``sources/gpu.py``), and a merged multi-host sample arrives whenever any
host's does; a sample within ``POINT_S`` of the point before replaces that point's value instead
of adding one, so the sparkline stays one point a second however often samples come.

More in docs/architecture.md, "Module notes", ``model/buffers/gpuhistory``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from eagle_tui.model.events import GpuInfo, GpuSample

HISTORY = 60  # utilisation points kept per GPU
POINT_S = 0.5  # samples closer than this to the last point replace it (see the module docstring)
MEMORY_STEP = 64 << 20  # bytes: a memory move this large is shown at once (``memory_moved``)
GpuRow = tuple[str, GpuInfo, bool]  # host, GPU, stale (its host's last sample before it dropped)


class GpuHistory:
    """Per-GPU utilisation history and per-host last-seen GPUs, from ``GpuSample`` events."""

    def __init__(self, maxlen: int = HISTORY) -> None:
        self.maxlen = maxlen
        self.util: dict[tuple[str, int], deque[float]] = {}
        self._point_t: dict[tuple[str, int], float] = {}  # when each GPU's last point began
        self.hosts: list[str] = []  # in order of first sight
        self.last_seen: dict[str, tuple[GpuInfo, ...]] = {}
        self.last_recorded: GpuSample | None = None

    def record(self, sample: GpuSample) -> None:
        """Every sample of a batch, not only the last: a host whose GPUs are missing from the
        newest one must still show the rows it had before its link dropped."""
        self.last_recorded = sample
        by_host: dict[str, list[GpuInfo]] = {}
        for g in sample.gpus:
            by_host.setdefault(g.host or sample.host, []).append(g)
            if g.util_gpu is not None:
                key = (g.host or sample.host, g.index)
                points = self.util.setdefault(key, deque(maxlen=self.maxlen))
                began = self._point_t.get(key)
                if points and began is not None and 0 <= sample.t - began < POINT_S:
                    points[-1] = g.util_gpu  # the same point, newer reading
                else:
                    points.append(g.util_gpu)
                    self._point_t[key] = sample.t
        for host, gpus in by_host.items():
            if host not in self.hosts:
                self.hosts.append(host)
            self.last_seen[host] = tuple(gpus)

    def update(self, latest: GpuSample | None, samples: Iterable[GpuSample] = ()) -> None:
        """Take in a batch's samples; with none, the state's latest sample if not yet seen
        (a consumer that only has states still gets one point per new sample)."""
        recorded = False
        for s in samples:
            self.record(s)
            recorded = True
        if not recorded and latest is not None and latest is not self.last_recorded:
            self.record(latest)

    def utilisation(self, host: str, index: int) -> list[float]:
        """The GPU's utilisation history, oldest first (empty when none was reported)."""
        return list(self.util.get((host, index), ()))

    @property
    def grouped(self) -> bool:
        """More than one host: the pane shows a group per host."""
        return len(self.hosts) > 1

    def rows(self, sample: GpuSample | None) -> list[GpuRow]:
        """The GPUs to show for ``sample``: its own when one host, else every host's last
        seen, stale where the host is missing from ``sample``."""
        if sample is None:
            return []
        if not self.grouped:
            return [(g.host, g, False) for g in sample.gpus] if sample.state == "ok" else []
        live = {g.host or sample.host for g in sample.gpus}
        return [(h, g, h not in live) for h in self.hosts for g in self.last_seen.get(h, ())]


def memory_moved(shown: GpuSample | None, new: GpuSample | None,
                 step: int = MEMORY_STEP) -> bool:
    """Whether ``new`` must reach the screen now rather than at the next pane update: its
    state or GPUs differ from the ``shown`` sample's, or a GPU's used memory moved by ``step``
    or more (an allocation, or memory freed by a process that exited)."""
    if new is None or new is shown:
        return False
    if shown is None or shown.state != new.state or len(shown.gpus) != len(new.gpus):
        return True
    for old, cur in zip(shown.gpus, new.gpus, strict=True):
        if (old.host, old.index) != (cur.host, cur.index):
            return True
        if (old.mem_used is None) != (cur.mem_used is None):
            return True
        if old.mem_used is not None and cur.mem_used is not None \
                and abs(cur.mem_used - old.mem_used) >= step:
            return True
    return False


__all__ = ["HISTORY", "MEMORY_STEP", "POINT_S", "GpuHistory", "GpuRow", "memory_moved"]
