"""What a silent server is doing: downloading, loading, compiling, busy on the GPU, or hung.

During startup a server can be silent for minutes for good reasons (a 400 GB download, a
torch.compile / Triton / DeepGEMM JIT pass, weights streaming into GPU memory) and for bad ones
(a rank waiting forever on a collective, a dead peer, a lock). The phase stepper alone cannot tell
them apart: the same ``loading weights`` step reads the same whether the disk is busy or the
process is asleep. This module reads the signals that can (listed in the notes).

More in docs/architecture.md, "Module notes", ``model/state/activity``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Literal

from eagle_tui.model.events import DownloadSample, GpuSample, ProcessSample
from eagle_tui.model.record import Record, record

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


@record
class ActivityTrack(Record):
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


__all__ = [
    "ActivityTrack",
    "on_download",
    "on_gpu",
    "on_lines",
    "on_process",
    "on_server_args",
    "server_gpus",
]
