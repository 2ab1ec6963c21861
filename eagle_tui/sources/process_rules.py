"""The rules both process watchers follow, local (psutil) and remote (``ps`` over SSH).

:class:`~eagle_tui.sources.process.ProcessWatcher` and
:class:`~eagle_tui.sources.remote_process.RemoteProcessWatcher` read the process differently, but
must judge it the same way, or ``wait`` and the dashboard would tell a local and a remote server's
death apart. What they share lives here, with no psutil and no transport:

- **states**: the kernel's process states (``ps``'s first ``stat`` letter, psutil's status name)
  → :data:`~eagle_tui.model.events.ProcessStatus`; a zombie (exited, not reaped: it still
  "exists") and a dead process both count as exited (:func:`has_exited`);
- **which process is the server** when several hold its log or socket (a launcher and the workers
  that inherited the file): the topmost one, whose parent is not itself a holder (:func:`topmost`);
- **how often a live tree is sampled** (:func:`next_interval`): at the full rate while anything
  a reader of the samples sees moves (:func:`moved`), less often while nothing does: a quiet
  server left on screen for hours costs a wake-up and a repaint per sample, and its exit never
  waits for one (the pidfd, or the watcher's own liveness check);
- **how a watch ends** (:func:`end_of_watch`): never seen → ``not_found`` then the exit; seen in
  a final state → one last sample naming it, then the exit; gone → the exit alone, with the exit
  status where the watcher could learn it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from eagle_tui.model.events import Event, ProcessExited, ProcessSample, ProcessStatus

# ``ps -o stat=``'s first letter (Linux ``/proc/PID/stat`` field 3)
STATUS_BY_PS_LETTER: dict[str, ProcessStatus] = {
    "R": "running", "S": "sleeping", "D": "sleeping", "I": "sleeping", "Z": "zombie", "X": "exited",
}
# psutil's status names for the same states (psutil.STATUS_*: plain strings)
STATUS_BY_PSUTIL_NAME: dict[str, ProcessStatus] = {
    "running": "running", "sleeping": "sleeping", "disk-sleep": "sleeping", "idle": "sleeping",
    "zombie": "zombie", "dead": "exited",
}
EXITED_STATUSES: frozenset[ProcessStatus] = frozenset({"zombie", "exited"})
# A tree that did not move is sampled at most this many sample intervals apart, and at most
# STEADY_MAX_S apart: a sample older than views/liveness's FRESH_S no longer says "up".
STEADY_BACKOFF = 5.0
STEADY_MAX_S = 5.0
RSS_MOVED = 1 << 20  # a change of RSS below a MiB (and below 1 %) is not a move
CPU_MOVED = 1.0  # CPU is shown in whole percents
READ_MOVED_BPS = 64 * 1024  # reads slower than this are a quiet server's, not a loading one's


def has_exited(status: ProcessStatus) -> bool:
    """A zombie has exited too: it only waits for its parent to read its exit status."""
    return status in EXITED_STATUSES


def moved(prev: ProcessSample | None, new: ProcessSample) -> bool:
    """Whether ``new`` says anything ``prev`` did not: another process or state, other pids,
    RSS or CPU that moved past what is shown, or reads at a loading rate."""
    if prev is None or (prev.pid, prev.status, prev.name, prev.started, prev.pids) != (
            new.pid, new.status, new.name, new.started, new.pids):
        return True
    if _apart(prev.rss_bytes, new.rss_bytes, max(RSS_MOVED, (prev.rss_bytes or 0) / 100)):
        return True
    if _apart(prev.cpu_percent, new.cpu_percent, CPU_MOVED):
        return True
    if prev.read_bytes is None or new.read_bytes is None:
        return prev.read_bytes != new.read_bytes
    dt = new.t - prev.t
    return new.read_bytes - prev.read_bytes >= READ_MOVED_BPS * dt if dt > 0 \
        else new.read_bytes != prev.read_bytes


def _apart(a: float | None, b: float | None, slack: float) -> bool:
    if a is None or b is None:
        return a is not b
    return abs(a - b) >= slack


def next_interval(prev: ProcessSample | None, new: ProcessSample, current: float,
                  base: float) -> float:
    """The wait before the sample after ``new``: ``base`` when it :func:`moved` from ``prev``,
    else twice ``current``, at most ``base`` × :data:`STEADY_BACKOFF` and :data:`STEADY_MAX_S`
    (never less than ``base``)."""
    if moved(prev, new):
        return base
    return min(max(current, base) * 2, max(base, min(base * STEADY_BACKOFF, STEADY_MAX_S)))


def topmost(pids: Iterable[int], parent_of: Callable[[int], int | None]) -> int | None:
    """The lowest pid among ``pids`` whose parent is not one of them (``None``: none is known).

    ``parent_of`` returns ``None`` for a process it cannot see any more (it is skipped).
    """
    holders = set(pids)
    for pid in sorted(holders):
        parent = parent_of(pid)
        if parent is not None and parent not in holders:
            return pid
    return None


def end_of_watch(
    now: float,
    pid: int,
    *,
    seen: bool,
    final: ProcessStatus | None = None,
    name: str = "",
    exit_code: int | None = None,
    signal: int | None = None,
    memory: tuple[int, int] | None = None,
) -> list[Event]:
    """The last events of a watch: the process is gone (``final=None``) or in a final state.

    ``seen``: the watcher saw it at least once (else it is ``not_found``: the pid was wrong or it
    died before the first look).
    """
    avail, total = memory if memory is not None else (None, None)
    exited = ProcessExited(now, pid, exit_code, signal, avail, total)
    if not seen:
        return [ProcessSample(now, pid, "not_found"), exited]
    if final is not None:
        return [ProcessSample(now, pid, final, name), exited]
    return [exited]


def parse_meminfo(text: str) -> tuple[int, int] | None:
    """``/proc/meminfo`` → (available, total) bytes, or ``None`` when it lacks them."""
    got: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if key in ("MemAvailable", "MemTotal") and parts and parts[0].isdigit():
            got[key] = int(parts[0]) * (1024 if parts[1:2] == ["kB"] else 1)
    if "MemAvailable" not in got or "MemTotal" not in got:
        return None
    return got["MemAvailable"], got["MemTotal"]


__all__ = [
    "EXITED_STATUSES",
    "STATUS_BY_PSUTIL_NAME",
    "STATUS_BY_PS_LETTER",
    "end_of_watch",
    "has_exited",
    "moved",
    "next_interval",
    "parse_meminfo",
    "topmost",
]
