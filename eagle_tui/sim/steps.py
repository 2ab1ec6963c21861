"""Timed steps of a launch and the small builder the engine timelines are written with.

A :class:`Timeline` is a list of :class:`Step` s at simulated seconds after launch (speed 1). Each
step appends log lines and may change what the outside world sees: GPU memory and activity, the
HTTP listener, ``/health``, serving, or the process exiting. The runtime plays the steps at
``at / speed`` wall seconds; tests read them directly, with no process and no clock.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Literal

from .scenario import GPU_TOTAL_GIB, IDLE_GIB, ServerConfig
from .textfmt import shard_bar

HttpChange = Literal["bind", "serve"]
SHARDS_DESC = "Loading safetensors checkpoint shards"


@dataclass(frozen=True, slots=True)
class Step:
    at: float
    lines: tuple[str, ...] = ()
    label: str = ""  # GPU activity phase from here on (see gpu.ACTIVITY), "" = unchanged
    mem_gib: tuple[float, ...] | None = None  # used memory per GPU from here on
    http: HttpChange | None = None  # bind: socket bound, no answers yet (vLLM); serve: answering
    ready: bool = False  # /health turns 200
    serve: bool = False  # the scheduler starts taking requests
    exit_code: int | None = None  # the process ends after this step
    kill: bool = False  # ...by SIGKILL of its own tree (SGLang's kill_process_tree: shell 137)
    # the startup durations the engine measured, from here on on /metrics and /server_info
    startup: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Timeline:
    config: ServerConfig
    steps: tuple[Step, ...]

    @property
    def duration(self) -> float:
        return self.steps[-1].at if self.steps else 0.0

    @property
    def exit_code(self) -> int | None:
        last = self.steps[-1] if self.steps else None
        return last.exit_code if last else None

    def lines(self) -> list[str]:
        return [line for s in self.steps for line in s.lines]

    def ready_at(self) -> float | None:
        return next((s.at for s in self.steps if s.ready), None)


@dataclass
class Builder:
    """Accumulates steps while tracking the simulated clock and per-GPU free memory.

    ``avail`` is what the engine would print as ``avail mem`` (GiB free on a GPU); per-rank
    ``skew`` makes the ranks differ by a few MiB the way real GPUs do.
    """

    config: ServerConfig
    rng: random.Random = field(init=False)
    t: float = 0.0
    avail: float = GPU_TOTAL_GIB - IDLE_GIB
    steps: list[Step] = field(default_factory=list)
    skew: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        self.rng = random.Random(self.config.seed)
        self.skew = tuple(self.rng.uniform(0.0, 0.08) for _ in range(self.config.tp))

    # -------------------------------------------------------------- clock and memory
    def advance(self, seconds: float, jitter: float = 0.0) -> None:
        self.t += seconds * (1.0 + self.rng.uniform(-jitter, jitter)) if jitter else seconds

    @property
    def epoch(self) -> float:
        return self.config.t0 + self.t

    def use(self, gib: float) -> None:
        self.avail -= gib

    def mem(self) -> tuple[float, ...]:
        used = GPU_TOTAL_GIB - self.avail
        return tuple(round(used + s, 3) for s in self.skew)

    # -------------------------------------------------------------- output
    def emit(self, *lines: str, label: str = "", mem: bool = False, http: HttpChange | None = None,
             ready: bool = False, serve: bool = False, exit_code: int | None = None,
             kill: bool = False, startup: dict[str, Any] | None = None) -> None:
        self.steps.append(Step(self.t, tuple(lines), label, self.mem() if mem else None, http,
                               ready, serve, exit_code, kill, startup))

    def shards(self, total: int, seconds: float, gib: float, label: str) -> float:
        """The weight loader's tqdm bar (rank 0 only, raw ``\\r`` redraws as in a captured log),
        with GPU memory rising shard by shard. Returns the seconds it took."""
        self.emit("\r" + shard_bar(SHARDS_DESC, 0, total, 0.0), label=label, mem=True)
        elapsed = 0.0
        for n in range(1, total + 1):
            dt = seconds / total * (1.0 + self.rng.uniform(-0.25, 0.25))
            self.advance(dt)
            elapsed += dt
            self.use(gib / total)
            self.emit("\r" + shard_bar(SHARDS_DESC, n, total, elapsed), mem=True)
        self.emit("\r" + shard_bar(SHARDS_DESC, total, total, elapsed), "")
        return elapsed

    def build(self) -> Timeline:
        return Timeline(self.config, tuple(self.steps))
