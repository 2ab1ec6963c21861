"""The verdicts on a silent server, read from the state: downloading, loading, compiling, busy
on the GPU, or hung (:func:`startup_activity`), and the stuck-collective alert
(:func:`stuck_collective`). The signals and why they tell these apart: :mod:`.activity`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eagle_tui.model.engines import profile_of
from eagle_tui.model.events import Phase
from eagle_tui.model.record import Record, record
from eagle_tui.model.state.activity import (
    CPU_BUSY,
    HUNG_S,
    NCCL_TIMEOUT_S,
    QUIET_S,
    RECENT_S,
    STUCK_AFTER_S,
    Kind,
)

if TYPE_CHECKING:
    from eagle_tui.model.state import DashboardState


@record
class Activity(Record):
    """The verdict: one word and the evidence behind it."""

    kind: Kind
    detail: str


# ----------------------------------------------------------------------------- verdicts


def _fmt_s(s: float) -> str:
    s = max(0.0, s)
    if s < 90:
        return f"{s:.0f} s"
    return f"{int(s // 60)}m{int(s % 60):02d}s"


def _fmt_b(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n / 1e3:.0f} kB"


def _recent(t: float | None, now: float) -> bool:
    return t is not None and now - t <= RECENT_S


def silent_for(state: DashboardState) -> float | None:
    """Seconds since the last log line (since the start when none came yet)."""
    now = state.clock.now
    since = state.activity.last_line_t if state.activity.last_line_t is not None else (
        state.clock.t_start)
    if now is None or since is None:
        return None
    return max(0.0, now - since)


def _starting(state: DashboardState) -> bool:
    return (state.startup.phase.rank < Phase.READY.rank and state.startup.crash is None
            and state.live.process_exit is None)


def startup_activity(state: DashboardState) -> Activity | None:
    """What a starting server is doing, or ``None`` while its log says it (or once it is up)."""
    if not _starting(state) or state.clock.now is None:
        return None
    now = state.clock.now
    tr = state.activity
    silent = silent_for(state) or 0.0
    dl = tr.download
    if dl is not None and dl.files and _recent(tr.last_download_t, now):
        what = ", ".join(dl.repos[:2]) or "model files"
        rate = f", {_fmt_b(tr.download_bps)}/s" if tr.download_bps else ""
        return Activity("downloading", f"downloading {what}: {_fmt_b(dl.bytes)} in "
                        f"{dl.files} file{'s' if dl.files != 1 else ''}{rate}")
    if silent < QUIET_S:
        return None
    # no line at all: no log is watched, or it is still empty; only a log that stopped is "hung"
    has_log = state.log.lines > 0
    quiet = f"log silent {_fmt_s(silent)}" if has_log else f"no log line in {_fmt_s(silent)}"
    if _recent(tr.last_read_t, now):
        return Activity("loading", f"reading {_fmt_b(tr.read_bps or 0)}/s ({quiet}): loading "
                        "weights")
    if _recent(tr.last_gpu_grow_t, now):
        held = f" (holds {_fmt_b(tr.gpu_bytes)})" if tr.gpu_bytes else ""
        return Activity("loading", f"GPU memory of the server growing{held} ({quiet}): loading")
    if tr.gpu_busy_since is not None:
        return Activity("gpu_busy", f"GPUs busy ({quiet}): warmup, autotuning or a collective "
                        "that does not finish")
    proc = state.live.process
    cpu = proc.cpu_percent if proc is not None else None
    if cpu is not None and cpu >= CPU_BUSY:
        sub = state.startup.substep  # the compile step the log last named, if it is on
        what = sub.what if sub is not None and not sub.finished else \
            "torch.compile, Triton, JIT kernels"
        return Activity("compiling", f"CPU {cpu:.0f}% with no reads and GPU memory flat "
                        f"({quiet}): compiling ({what})")
    if silent >= HUNG_S and has_log:
        if cpu is None:
            return Activity("hung", f"{quiet}, no process data to tell compiling from hung")
        return Activity("hung", f"{quiet}, CPU {cpu:.0f}%, no reads, GPU memory flat: hung? "
                        "(a rank waiting on a peer, a lock, a dead worker)")
    return Activity("waiting", f"{quiet}, nothing moving yet")


@record
class Stuck(Record):
    """A collective that does not finish: how long, and when the watchdog gives up."""

    busy_s: float
    watchdog_s: float
    watchdog_name: str
    gpus: int

    @property
    def remaining_s(self) -> float:
        return max(0.0, self.watchdog_s - self.busy_s)


def watchdog(state: DashboardState) -> tuple[float, str]:
    """The engine's own deadline for a hung step, and its name."""
    wd = state.activity.watchdog_s
    profile = profile_of(state.startup.engine)
    if wd is not None and wd < NCCL_TIMEOUT_S:
        return wd, f"SGLang's --watchdog-timeout ({wd:g} s)"
    if wd is None and profile is not None and profile.logs.default_watchdog_s is not None:
        dflt = profile.logs.default_watchdog_s
        return dflt, f"{profile.label}'s default {profile.logs.watchdog_flag} ({dflt:g} s)"
    return NCCL_TIMEOUT_S, f"NCCL's default timeout ({NCCL_TIMEOUT_S:g} s)"


def stuck_collective(state: DashboardState) -> Stuck | None:
    """GPUs busy, no tokens and a silent log for ``STUCK_AFTER_S``: a hung collective."""
    tr = state.activity
    if tr.gpu_busy_since is None or state.clock.now is None or state.startup.crash is not None:
        return None
    if state.live.process_exit is not None:
        return None
    metrics = state.metrics.last
    if metrics is not None and metrics.gen_tps and state.clock.now - metrics.t <= RECENT_S:
        return None  # tokens are flowing (the log may just be quiet)
    silent = silent_for(state)
    if silent is None or (state.log.lines == 0 and metrics is None):
        return None  # neither a log nor /metrics to say that no tokens come
    busy = min(silent, state.clock.now - tr.gpu_busy_since)
    if busy < STUCK_AFTER_S:
        return None
    wd, name = watchdog(state)
    gpus = len(state.gpu.sample.gpus) if state.gpu.sample is not None else 0
    return Stuck(busy, wd, name, gpus)


def stuck_message(stuck: Stuck) -> str:
    left = (f"the engine aborts in about {_fmt_s(stuck.remaining_s)}" if stuck.remaining_s > 0
            else "the engine's watchdog is overdue")
    return (f"GPUs busy with no tokens and a silent log for {_fmt_s(stuck.busy_s)}: an NCCL "
            f"collective (all-reduce / all-gather) is probably stuck, one rank waiting for a peer "
            f"that never joins. {left} ({stuck.watchdog_name}). Look for a rank that crashed or "
            "is slower (py-spy dump --pid on each rank; NCCL_DEBUG=INFO at the next start).")


__all__ = [
    "Activity",
    "Stuck",
    "silent_for",
    "startup_activity",
    "stuck_collective",
    "stuck_message",
    "watchdog",
]
