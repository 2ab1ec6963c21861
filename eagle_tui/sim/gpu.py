"""Simulated GPUs: what each GPU shows at every moment, and the fake ``nvidia-smi`` on disk.

The simulator owns the truth (:class:`GpuModel`, updated from the timeline's memory steps and the
serving engine's load) and publishes it a few times a second to a small JSON *state file*
(atomically replaced). The fake ``nvidia-smi`` (:mod:`.smi`) is a separate process, started by
whoever watches the server exactly as the real one would be, that reads that file and prints the
real CSV. Shapes follow the recorded H200 timeline (``fixtures/nvml/h200x2-timeline.jsonl``):
idle at 0 MiB / ~78 W / 345 MHz, weights in steps at ~119 W, a KV-cache jump, ~410 W and
30-50 % utilization while decoding, and memory released when the process dies.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .scenario import GPU_NAME, GPU_TOTAL_MIB, IDLE_GIB

STATE_FILE = "gpu-state.json"
SMI_NAME = "nvidia-smi"


@dataclass(frozen=True, slots=True)
class Activity:
    util: tuple[float, float]  # utilization.gpu range, percent
    power_w: float
    sm_mhz: float
    temp_c: float  # where the temperature settles


ACTIVITY: dict[str, Activity] = {
    "idle": Activity((0, 0), 77.5, 345, 32),
    "init": Activity((0, 0), 90.0, 1980, 33),
    "load_weights": Activity((0, 1), 119.0, 1980, 34),
    "kv_cache": Activity((0, 10), 120.7, 1980, 34),
    "compile": Activity((5, 30), 160.0, 1980, 36),
    "capture": Activity((20, 60), 230.0, 1935, 38),
    "loaded": Activity((0, 0), 121.0, 1980, 35),
    "warmup": Activity((10, 40), 180.0, 1935, 36),
    "ready": Activity((0, 0), 121.0, 1980, 35),
    "nccl_hang": Activity((100, 100), 165.0, 1980, 41),  # NCCL kernels spin on a stuck collective
    "serve": Activity((27, 50), 410.0, 1890, 47),
}


def uuid_for(seed: int, index: int) -> str:
    r = random.Random(f"{seed}:{index}")
    h = f"{r.getrandbits(128):032x}"
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


class GpuModel:
    """Per-GPU state the simulator advances; ``sample()`` returns the state-file payload."""

    def __init__(self, count: int, seed: int, pids: tuple[int, ...] = ()) -> None:
        self.count = count
        self.seed = seed
        self._rng = random.Random(seed * 31 + 7)
        self.mem_gib = [IDLE_GIB] * count  # used incl. the driver's reserved 0.6 GiB
        self.label = "idle"
        self.attached = False  # a server process holds a CUDA context on the GPUs
        self.pids = pids
        self.temp = [33.0 - (i % 2) for i in range(count)]
        self.power = [ACTIVITY["idle"].power_w] * count

    def set_memory(self, mem_gib: tuple[float, ...]) -> None:
        for i in range(min(self.count, len(mem_gib))):
            self.mem_gib[i] = mem_gib[i]

    def set_label(self, label: str) -> None:
        self.label = label
        self.attached = label != "idle"

    def release(self) -> None:
        """The server's processes are gone: memory freed, back to idle clocks."""
        self.mem_gib = [IDLE_GIB] * self.count
        self.label = "idle"
        self.attached = False

    def sample(self, running: int = 0) -> dict[str, Any]:
        label = "serve" if running and self.label == "ready" else self.label
        act = ACTIVITY.get(label, ACTIVITY["idle"])
        gpus = []
        for i in range(self.count):
            lo, hi = act.util
            util = self._rng.uniform(lo, hi)
            target_w = act.power_w + (25.0 * min(running, 16) if label == "serve" else 0.0)
            self.power[i] += (target_w * self._rng.uniform(0.98, 1.02) - self.power[i]) * 0.5
            self.temp[i] += (act.temp_c + i % 3 - self.temp[i]) * 0.15
            used_mib = max(0, round((self.mem_gib[i] - IDLE_GIB) * 1024))
            sm = act.sm_mhz if self.attached else 345
            if label == "serve":
                sm = self._rng.choice((1635, 1755, 1845, 1890, 1935, 1965))
            pids = [self.pids[i]] if self.attached and i < len(self.pids) else []
            gpus.append({
                "index": i, "uuid": uuid_for(self.seed, i), "name": GPU_NAME,
                "memory_used": used_mib, "memory_total": GPU_TOTAL_MIB,
                "util_gpu": round(util), "util_mem": round(util * 0.27),
                "temperature": round(self.temp[i]), "power_draw": round(self.power[i], 2),
                "power_limit": 700.0, "clocks_sm": sm, "pids": pids,
            })
        return {"version": 1, "t": time.time(), "gpus": gpus}


def write_state(path: Path, payload: dict[str, Any]) -> None:
    """Atomically replace the state file (the fake nvidia-smi never reads half a file)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(payload, separators=(",", ":")))
    os.replace(tmp, path)


def install_fake_smi(workdir: Path, gpus: int, seed: int) -> Path:
    """Write ``workdir/bin/nvidia-smi`` and an idle state file; return the bin directory.

    The executable is a ``/bin/sh`` wrapper (no shebang length limit) that runs :mod:`.smi` with
    this interpreter, ``-S`` for a fast start (only the stdlib and this package are needed).
    """
    bin_dir = workdir / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    state = workdir / STATE_FILE
    if not state.exists():
        write_state(state, GpuModel(gpus, seed).sample())
    pkg_parent = str(Path(__file__).resolve().parents[2])
    code = (f"import sys; sys.path.insert(0, {json.dumps(pkg_parent)}); "
            "from eagle_tui.sim.smi import main; "
            f"raise SystemExit(main(sys.argv[1:], {json.dumps(str(state))}))")
    script = bin_dir / SMI_NAME
    script.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -S -c "
                      f"{shlex.quote(code)} \"$@\"\n")
    script.chmod(0o755)
    return bin_dir
