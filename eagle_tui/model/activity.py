"""What a silent server is doing: downloading, loading, compiling, busy on the GPU, or hung.

During startup a server can be silent for minutes for good reasons (a 400 GB download, a
torch.compile / Triton / DeepGEMM JIT pass, weights streaming into GPU memory) and for bad ones
(a rank waiting forever on a collective, a dead peer, a lock). The phase stepper alone cannot tell
them apart: the same ``loading weights`` step reads the same whether the disk is busy or the
process is asleep. The signals that can:

* **time since the last log line** (while the log talks, its own lines say what happens);
* **weight-file growth** in the Hugging Face cache (``blobs/*.incomplete`` files that grow);
* **the process tree's reads** (bytes read per second: a loader reading safetensors);
* **GPU memory of the server's processes** (growing: weights or KV cache being allocated);
* **the tree's CPU** (busy with no I/O and no GPU growth: compiling);
* **the GPUs' utilisation** (busy with a silent log and no tokens: a kernel or a collective that
  does not finish — see :func:`stuck_collective`, which alerts and counts down to the watchdog).

:class:`ActivityTrack` is the little memory this needs (when each signal last moved), folded by
the reducer from the events; :func:`startup_activity` and :func:`stuck_collective` are pure
functions of the state. Nothing here reads a clock: ``state.now`` is the events' time.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .events import DownloadSample, GpuSample, Phase, ProcessSample

if TYPE_CHECKING:
    from .state import DashboardState

QUIET_S = 15.0  # a log silent for less than this is still talking: no verdict needed
RECENT_S = 10.0  # a signal that moved within this is "moving"
HUNG_S = 180.0  # silent this long with nothing moving at all: hung
IO_BPS = 5 * 1024 * 1024  # reads faster than this: loading
CPU_BUSY = 80.0  # tree CPU % (about one core) with nothing else moving: compiling
GPU_BUSY = 90.0  # utilisation % of every server GPU: busy
GPU_GROW_BYTES = 64 * 1024 * 1024  # growth of the server's GPU memory that counts
STUCK_AFTER_S = 60.0  # GPUs busy, no tokens, log silent this long: a stuck collective
NCCL_TIMEOUT_S = 600.0  # torch.distributed's default NCCL timeout (ProcessGroupNCCL)
SGLANG_WATCHDOG_S = 300.0  # SGLang's --watchdog-timeout default

Kind = Literal["downloading", "loading", "compiling", "gpu_busy", "waiting", "hung"]
_WATCHDOG = re.compile(r"watchdog[_-]timeout['\"]?\s*[=:]\s*([\d.]+)")


@dataclass(frozen=True, slots=True)
class ActivityTrack:
    """When each startup signal last moved (folded by the reducer; see the module docstring)."""

    last_line_t: float | None = None
    read_bytes: int | None = None
    read_t: float | None = None
    read_bps: float | None = None
    last_read_t: float | None = None
    gpu_bytes: int | None = None
    last_gpu_grow_t: float | None = None
    gpu_busy_since: float | None = None
    download: DownloadSample | None = None
    download_bps: float | None = None
    last_download_t: float | None = None
    watchdog_s: float | None = None  # SGLang's --watchdog-timeout, from its server_args


@dataclass(frozen=True, slots=True)
class Activity:
    """The verdict: one word and the evidence behind it."""

    kind: Kind
    detail: str


# ----------------------------------------------------------------------------- folding


def on_lines(track: ActivityTrack, now: float | None) -> ActivityTrack:
    if now is None or track.last_line_t == now:
        return track
    return dataclasses.replace(track, last_line_t=now)


def on_server_args(track: ActivityTrack, text: str) -> ActivityTrack:
    """SGLang's ``server_args`` line carries its watchdog timeout (``watchdog_timeout=300``)."""
    m = _WATCHDOG.search(text)
    if m is None:
        return track
    try:
        value = float(m.group(1))
    except ValueError:
        return track
    return dataclasses.replace(track, watchdog_s=value) if value > 0 else track


def on_process(track: ActivityTrack, ev: ProcessSample) -> ActivityTrack:
    if ev.read_bytes is None:
        return track
    bps = track.read_bps
    last = track.last_read_t
    if track.read_bytes is not None and track.read_t is not None and ev.t > track.read_t:
        bps = max(0.0, (ev.read_bytes - track.read_bytes) / (ev.t - track.read_t))
        if bps >= IO_BPS:
            last = ev.t
    return dataclasses.replace(track, read_bytes=ev.read_bytes, read_t=ev.t, read_bps=bps,
                               last_read_t=last)


def server_gpus(ev: GpuSample, pids: tuple[int, ...]) -> tuple[list[int], int | None]:
    """The indexes of the GPUs the server's processes use and the memory they hold there.

    With no process lists (nvidia-smi's query mode, a container that hides host pids) or no pids
    every GPU counts, and the memory is all of theirs (``None`` when no GPU reports it).
    """
    wanted = set(pids)
    if not wanted or not any(g.processes for g in ev.gpus):
        known = [g.mem_used for g in ev.gpus if g.mem_used is not None]
        return [g.index for g in ev.gpus], sum(known) if known else None
    gpus: list[int] = []
    used = 0
    for g in ev.gpus:
        mine = [p for p in g.processes if p.pid in wanted]
        if mine:
            gpus.append(g.index)
            used += sum(p.used_bytes or 0 for p in mine)
    return gpus, used  # none yet: the busy GPUs are someone else's


def on_gpu(track: ActivityTrack, ev: GpuSample, pids: tuple[int, ...]) -> ActivityTrack:
    if ev.state != "ok" or not ev.gpus:
        return track
    indexes, used = server_gpus(ev, pids)
    grew = track.last_gpu_grow_t
    if used is not None and track.gpu_bytes is not None and used - track.gpu_bytes >= (
            GPU_GROW_BYTES):
        grew = ev.t
    utils = [g.util_gpu for g in ev.gpus if g.index in indexes and g.util_gpu is not None]
    busy = bool(utils) and min(utils) >= GPU_BUSY
    since = (track.gpu_busy_since if track.gpu_busy_since is not None else ev.t) if busy else None
    gpu_bytes = used if used is not None and (track.gpu_bytes is None or grew == ev.t
                                              or used < track.gpu_bytes) else track.gpu_bytes
    return dataclasses.replace(track, gpu_bytes=gpu_bytes, last_gpu_grow_t=grew,
                               gpu_busy_since=since)


def on_download(track: ActivityTrack, ev: DownloadSample) -> ActivityTrack:
    old = track.download
    bps = track.download_bps
    last = track.last_download_t
    if ev.files and old is not None and ev.t > old.t and ev.bytes > old.bytes:
        bps = (ev.bytes - old.bytes) / (ev.t - old.t)
        last = ev.t
    elif not ev.files:
        bps = None
    return dataclasses.replace(track, download=ev, download_bps=bps, last_download_t=last)


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
    now = state.now
    since = state.activity.last_line_t if state.activity.last_line_t is not None else (
        state.t_start)
    if now is None or since is None:
        return None
    return max(0.0, now - since)


def _starting(state: DashboardState) -> bool:
    return (state.phase.rank < Phase.READY.rank and state.crash is None
            and state.process_exit is None)


def startup_activity(state: DashboardState) -> Activity | None:
    """What a starting server is doing, or ``None`` while its log says it (or once it is up)."""
    if not _starting(state) or state.now is None:
        return None
    now = state.now
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
    has_log = state.lines > 0
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
    proc = state.process
    cpu = proc.cpu_percent if proc is not None else None
    if cpu is not None and cpu >= CPU_BUSY:
        return Activity("compiling", f"CPU {cpu:.0f}% with no reads and GPU memory flat "
                        f"({quiet}): compiling (torch.compile, Triton, JIT kernels)")
    if silent >= HUNG_S and has_log:
        if cpu is None:
            return Activity("hung", f"{quiet}, no process data to tell compiling from hung")
        return Activity("hung", f"{quiet}, CPU {cpu:.0f}%, no reads, GPU memory flat: hung? "
                        "(a rank waiting on a peer, a lock, a dead worker)")
    return Activity("waiting", f"{quiet}, nothing moving yet")


@dataclass(frozen=True, slots=True)
class Stuck:
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
    if wd is not None and wd < NCCL_TIMEOUT_S:
        return wd, f"SGLang's --watchdog-timeout ({wd:g} s)"
    if wd is None and state.engine == "sglang":
        return SGLANG_WATCHDOG_S, f"SGLang's default --watchdog-timeout ({SGLANG_WATCHDOG_S:g} s)"
    return NCCL_TIMEOUT_S, f"NCCL's default timeout ({NCCL_TIMEOUT_S:g} s)"


def stuck_collective(state: DashboardState) -> Stuck | None:
    """GPUs busy, no tokens and a silent log for ``STUCK_AFTER_S``: a hung collective."""
    tr = state.activity
    if tr.gpu_busy_since is None or state.now is None or state.crash is not None:
        return None
    if state.process_exit is not None:
        return None
    metrics = state.last_metrics
    if metrics is not None and metrics.gen_tps and state.now - metrics.t <= RECENT_S:
        return None  # tokens are flowing (the log may just be quiet)
    silent = silent_for(state)
    if silent is None or (state.lines == 0 and metrics is None):
        return None  # neither a log nor /metrics to say that no tokens come
    busy = min(silent, state.now - tr.gpu_busy_since)
    if busy < STUCK_AFTER_S:
        return None
    wd, name = watchdog(state)
    gpus = len(state.gpus.gpus) if state.gpus is not None else 0
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
    "ActivityTrack",
    "Stuck",
    "on_download",
    "on_gpu",
    "on_lines",
    "on_process",
    "on_server_args",
    "server_gpus",
    "silent_for",
    "startup_activity",
    "stuck_collective",
    "stuck_message",
    "watchdog",
]
