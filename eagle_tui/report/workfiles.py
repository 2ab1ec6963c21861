"""The files a parallel report's workers leave in its temporary directory (chunk summaries,
peak memory) and the memory figure they measure (:mod:`.parallel`)."""

from __future__ import annotations

import os


def read_int(path: str) -> int:
    try:
        with open(path) as f:
            return int(f.read())
    except (OSError, ValueError):
        return 0


def private_kib() -> int:
    """This process's private memory (KiB: pages no other process maps, from
    ``/proc/self/smaps_rollup``), 0 where that file does not exist.

    A forked worker's RSS counts every page it still shares with the parent; what it adds to the
    machine's memory is its private part. Read for ``--debug-rss`` only, never by default.
    """
    total = 0
    try:
        with open("/proc/self/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith((b"Private_Clean:", b"Private_Dirty:")):
                    total += int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return total


def summary_path(tmp: str, index: int) -> str:
    """The file of chunk ``index``'s summary in the temporary directory ``tmp``."""
    return os.path.join(tmp, f"chunk-{index}.bin")


def memory_path(tmp: str, me: int) -> str:
    """Where worker ``me`` leaves its peak private memory (``--debug-rss``)."""
    return os.path.join(tmp, f"worker-{me}.mem")
