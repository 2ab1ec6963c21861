"""GPU memory steps for the headless output: a line as each GPU's memory moves, rate-limited.

The progress lines follow phases, so a headless reader saw a weight or KV-cache step late or
not at all. :class:`GpuSteps` is fed every GPU sample the session holds and says which GPUs
stepped: a move of at least :data:`STEP_BYTES` or :data:`STEP_FRACTION` of the GPU's memory
(whichever is smaller) away from the value last printed for that GPU. Measuring from the last
printed value is the hysteresis: noise around it never reaches the threshold, and a slow drift
prints once it has added up. At most one line per GPU every :data:`MIN_GAP_S` seconds (sample
time); a step inside the gap prints with the first sample after it, at its newest value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eagle_tui.model.events import GpuSample

GIB = 1 << 30
STEP_BYTES = GIB
STEP_FRACTION = 0.05
MIN_GAP_S = 1.0


@dataclass(frozen=True, slots=True)
class GpuStep:
    """One GPU's memory moved from ``previous`` (the value printed last) to ``mem_used``."""

    t: float
    index: int
    mem_used: int
    previous: int
    mem_total: int | None = None
    host: str = ""

    @property
    def delta(self) -> int:
        return self.mem_used - self.previous

    def text(self, elapsed_s: float) -> str:
        where = f"{self.host} " if self.host else ""
        total = f" of {self.mem_total / GIB:.0f} GiB" if self.mem_total else ""
        return (f"[{elapsed_s:6.1f}s] {where}GPU {self.index} memory: "
                f"{self.previous / GIB:.1f} → {self.mem_used / GIB:.1f} GiB{total} "
                f"({self.delta / GIB:+.1f} GiB)")

    def as_dict(self, elapsed_s: float) -> dict[str, Any]:
        return {"event": "gpu_memory", "elapsed_s": round(elapsed_s, 3), "t": round(self.t, 3),
                "host": self.host or None, "gpu": self.index, "mem_used": self.mem_used,
                "mem_total": self.mem_total, "previous": self.previous, "delta": self.delta}


def threshold(mem_total: int | None, step_bytes: int = STEP_BYTES,
              fraction: float = STEP_FRACTION) -> int:
    """The smallest move that prints: ``step_bytes``, or ``fraction`` of a smaller GPU."""
    return min(step_bytes, int(fraction * mem_total)) if mem_total else step_bytes


class GpuSteps:
    """Which GPUs stepped, sample by sample (the first reading of a GPU is its baseline)."""

    def __init__(self, step_bytes: int = STEP_BYTES, fraction: float = STEP_FRACTION,
                 min_gap_s: float = MIN_GAP_S) -> None:
        self.step_bytes = step_bytes
        self.fraction = fraction
        self.min_gap_s = min_gap_s
        self._printed: dict[tuple[str, int], int] = {}
        self._printed_t: dict[tuple[str, int], float] = {}
        self._seen_t: float | None = None

    def update(self, sample: GpuSample | None) -> list[GpuStep]:
        if sample is None or sample.state != "ok" or sample.t == self._seen_t:
            return []
        self._seen_t = sample.t
        out: list[GpuStep] = []
        for g in sample.gpus:
            if g.mem_used is None or g.error:
                continue
            key = (g.host or sample.host, g.index)
            base = self._printed.get(key)
            if base is None:
                self._printed[key] = g.mem_used
                continue
            if abs(g.mem_used - base) < threshold(g.mem_total, self.step_bytes, self.fraction):
                continue
            last = self._printed_t.get(key)
            if last is not None and sample.t - last < self.min_gap_s:
                continue  # printed with the first sample after the gap
            out.append(GpuStep(sample.t, g.index, g.mem_used, base, g.mem_total, key[0]))
            self._printed[key] = g.mem_used
            self._printed_t[key] = sample.t
        return out


__all__ = ["MIN_GAP_S", "STEP_BYTES", "STEP_FRACTION", "GpuStep", "GpuSteps", "threshold"]
