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
    "T": "paused", "t": "paused",  # stopped by a signal (SIGSTOP, Ctrl-Z) or by a debugger
}
# psutil's status names for the same states (psutil.STATUS_*: plain strings)
STATUS_BY_PSUTIL_NAME: dict[str, ProcessStatus] = {
    "running": "running", "sleeping": "sleeping", "disk-sleep": "sleeping", "idle": "sleeping",
    "zombie": "zombie", "dead": "exited", "stopped": "paused", "tracing-stop": "paused",
}
EXITED_STATUSES: frozenset[ProcessStatus] = frozenset({"zombie", "exited"})


def has_exited(status: ProcessStatus) -> bool:
    """A zombie has exited too: it only waits for its parent to read its exit status."""
    return status in EXITED_STATUSES


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
    "parse_meminfo",
    "topmost",
]
