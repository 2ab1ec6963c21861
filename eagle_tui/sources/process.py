"""Watch the server process with psutil: alive, zombie or gone, and what its tree uses.

The process is given (``--pid``) or found: the process listening on the URL's port, else the
process holding the log file open (the root of that group: with ``nohup ... > log`` every child
inherits the file, the one whose parent does not hold it is the server).

Death must be reported fast (``wait`` promises an answer within a second): the process's pidfd
wakes the watcher the moment it exits (:mod:`.exitwatch`), and where there is none liveness is
checked every ``poll_interval`` (0.2 s; ``is_running`` + ``status`` are cheap). The heavier tree
sample (RSS and CPU of every descendant) runs every ``sample_interval`` while the tree moves,
and less often while it does not (``sources/cadence``).

More in docs/architecture.md, "Module notes", ``sources/process``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Mapping

import psutil

from eagle_tui.model.events import Event, ProcessSample, ProcessStatus
from eagle_tui.model.views.ticks import grid_due
from eagle_tui.sources.cadence import next_interval
from eagle_tui.sources.exitwatch import pause, watching
from eagle_tui.sources.process_rules import (
    STATUS_BY_PSUTIL_NAME,
    end_of_watch,
    has_exited,
    topmost,
)

DEFAULT_POLL_S = 0.2
MAX_TREE = 4096  # processes of one tree read at most
DEFAULT_SAMPLE_S = 1.0
# While no process is found, look every ``find_interval`` for this long, then every
# FIND_SLOW_S: a scan of every process's descriptors is not free (more so on a busy host), and a
# log whose writer is gone or elsewhere would pay it every second for as long as it is watched.
FIND_FAST_FOR_S = 5.0
FIND_SLOW_S = 5.0
# ... and, while the log stays as it was, every FIND_UNCHANGED_S: a new server writes its first
# lines to the log, so an unchanged log has no new writer to find (each scan reads every
# process's descriptors)
FIND_UNCHANGED_S = 60.0
RESTART_SLACK_S = 5.0

_STATUS: dict[str, ProcessStatus] = STATUS_BY_PSUTIL_NAME  # (process_rules: the shared states)


def zombie_exit_status(pid: int) -> tuple[int | None, int | None]:
    """``(exit_code, signal)`` of a zombie from ``/proc/PID/stat``; ``(None, None)`` if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("ascii", "replace")
    except OSError:
        return None, None
    # fields after the parenthesised command name (which may itself contain spaces or ')')
    rest = raw[raw.rfind(")") + 2 :].split()
    # rest[0] is field 3 (state); field 52 (exit_code) is rest[49]
    if len(rest) < 50:
        return None, None
    try:
        status = int(rest[49])
    except ValueError:
        return None, None
    return decode_wait_status(status)


def descendant_pids(pid: int) -> list[int] | None:
    """Pids of ``pid``'s descendants, parents first, from ``/proc/PID/task/TID/children``;
    ``None`` where the kernel keeps no such lists (or ``pid`` is gone): ask psutil then."""
    out: list[int] = []
    seen = {pid}
    todo = [pid]
    for cur in todo:  # (grows while it is walked: breadth first)
        try:
            tids = os.listdir(f"/proc/{cur}/task")
        except OSError:
            if cur == pid:
                return None
            continue  # a descendant that just ended
        for tid in tids:
            try:
                with open(f"/proc/{cur}/task/{tid}/children", "rb") as fh:
                    kids = fh.read().split()
            except FileNotFoundError:
                if cur == pid and os.path.exists(f"/proc/{cur}/task/{tid}"):
                    return None  # a live thread without the list: no CONFIG_PROC_CHILDREN
                continue  # a thread or a descendant that just ended
            except OSError:
                continue
            for child in map(int, kids):
                if child not in seen:
                    seen.add(child)
                    out.append(child)
                    todo.append(child)
    return out


def decode_wait_status(status: int) -> tuple[int | None, int | None]:
    """A ``waitpid`` status → ``(exit_code, signal)``; the shell's 128+N for a signal death."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return 128 + sig, sig
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status), None
    return None, None


def find_listener(port: int) -> int | None:
    """PID of the process listening on TCP ``port`` (any address), or ``None``."""
    try:
        conns = psutil.net_connections(kind="tcp")
    except psutil.AccessDenied:
        conns = []
        for proc in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                conns.extend(proc.net_connections(kind="tcp"))  # type: ignore[arg-type]
    for c in conns:
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid:
            return int(c.pid)
    return None


def find_log_holder(path: str) -> int | None:
    """PID of the topmost process writing to ``path`` (the server, not its workers or a pager)."""
    try:
        target = os.path.realpath(path)
    except OSError:
        return None
    holders = _proc_writers(target)
    if holders is None:  # no /proc (macOS): psutil's slower way
        holders = set()
        for proc in psutil.process_iter(["pid"]):
            try:
                # only writers: a `tail -f`/`less` reading the log is not the server
                if any(
                    os.path.realpath(f.path) == target and getattr(f, "mode", "w") != "r"
                    for f in proc.open_files()
                ):
                    holders.add(proc.pid)
            except (psutil.Error, OSError):
                continue
    holders.discard(os.getpid())
    return topmost(holders, _parent_of)


def _proc_writers(target: str) -> set[int] | None:
    """Pids with ``target`` open for writing, from ``/proc/*/fd`` links; ``None``: no ``/proc``.

    The same answer as psutil's ``open_files`` (the kernel's path of each descriptor, the mode
    from ``fdinfo``'s flags), but a ``readlink`` per descriptor and ``fdinfo`` read only for
    the ones that match: psutil reads every descriptor's ``fdinfo`` and builds an object per
    process, many times the cost, and the watcher repeats this scan while no server holds the log.
    """
    try:
        pids = [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return None
    writable = os.O_WRONLY | os.O_RDWR
    holders: set[int] = set()
    for pid in pids:
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:  # gone, or not ours to read
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fd_dir}/{fd}") != target:
                    continue
                with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as fh:
                    flags = next((int(line.split()[1], 8) for line in fh
                                  if line.startswith("flags:")), 0)
            except (OSError, ValueError, IndexError):
                continue
            if flags & writable:
                holders.add(pid)
                break
    return holders


def _parent_of(pid: int) -> int | None:
    try:
        return psutil.Process(pid).ppid()
    except psutil.Error:
        return None


def read_bytes(proc: psutil.Process) -> int | None:
    """Bytes ``proc`` has read: the larger of its ``read()`` bytes and its disk reads (which
    count the page faults of an mmap'ed safetensors file); ``None`` when not readable."""
    try:
        io = proc.io_counters()
    except (psutil.Error, AttributeError, NotImplementedError):  # not ours; macOS has none
        return None
    return max(int(io.read_bytes), int(getattr(io, "read_chars", 0)))


def descendants(proc: psutil.Process,
                known: Mapping[int, psutil.Process]) -> list[psutil.Process]:
    """The process's descendants: from the kernel's ``children`` lists of the tree's own
    threads where it has them, else psutil's, which reads every process's ``stat`` on the
    host (on a busy host the larger part of a sample a second). ``known``'s objects are
    reused (``cpu_percent`` needs an object's previous reading)."""
    found = descendant_pids(proc.pid)
    if found is None:
        return list(proc.children(recursive=True))
    out: list[psutil.Process] = []
    for pid in found[:MAX_TREE]:
        kid = known.get(pid)
        if kid is None:
            with contextlib.suppress(psutil.Error):
                kid = psutil.Process(pid)
        if kid is not None:
            out.append(kid)
    return out


class ProcessWatcher:
    """Source of ``ProcessSample`` events and one ``ProcessExited`` when the process dies.

    ``pid`` watches that process; otherwise ``port`` and/or ``log_path`` are used to find it,
    retrying every ``find_interval`` seconds (the server may not have started yet). The source
    ends after reporting the exit, unless ``follow_restarts`` (the dashboard, for a process it
    found): then it looks for the next server on the same port or log, so that a server killed
    and started again under a running dashboard is watched (as a new run) instead of leaving
    the old pid's exit on screen for good. Only processes started after the old one's exit
    (minus ``RESTART_SLACK_S``) count: the old server's dying workers are not its successor.
    """

    def __init__(
        self,
        pid: int | None = None,
        *,
        port: int | None = None,
        log_path: str | None = None,
        poll_interval: float = DEFAULT_POLL_S,
        sample_interval: float = DEFAULT_SAMPLE_S,
        find_interval: float = 1.0,
        name: str = "process",
        clock: Callable[[], float] = time.time,
        follow_restarts: bool = False,
    ) -> None:
        if pid is None and port is None and log_path is None:
            raise ValueError("ProcessWatcher needs a pid, a port or a log path")
        self.name = name
        self.pid = pid
        self.port = port
        self.log_path = log_path
        self.poll_interval = poll_interval
        self.sample_interval = sample_interval
        self.find_interval = find_interval
        self._clock = clock
        self._children: dict[int, psutil.Process] = {}
        self.follow_restarts = follow_restarts and pid is None
        self._ended_at: float | None = None  # when the last watched process was seen gone

    def find(self) -> int | None:
        if self.port is not None and (pid := find_listener(self.port)) is not None:
            return pid
        if self.log_path is not None:
            return find_log_holder(self.log_path)
        return None

    def _tree_sample(self, proc: psutil.Process) -> ProcessSample:
        """RSS, CPU and bytes read summed over the process and its descendants, and their pids."""
        with proc.oneshot():
            status = _STATUS.get(proc.status(), "unknown")
            name = proc.name()
            started = proc.create_time()
            rss = proc.memory_info().rss
            cpu = proc.cpu_percent(None)
            read = read_bytes(proc)
        pids = [proc.pid]
        kids: dict[int, psutil.Process] = {}
        with contextlib.suppress(psutil.Error):
            for child in descendants(proc, self._children):
                # keep the same Process object per pid: cpu_percent needs its previous reading
                kid = self._children.get(child.pid, child)
                try:
                    rss += kid.memory_info().rss
                    cpu += kid.cpu_percent(None)
                except psutil.Error:
                    continue
                kid_read = read_bytes(kid)
                if kid_read is not None:
                    read = (read or 0) + kid_read
                kids[child.pid] = kid
                pids.append(child.pid)
        self._children = kids
        return ProcessSample(self._clock(), proc.pid, status, name, rss, round(cpu, 1), started,
                             len(pids), read_bytes=read, pids=tuple(pids))

    def _exit_status(self, proc: psutil.Process) -> tuple[int | None, int | None]:
        """``(exit_code, signal)``: exact for our own child, from ``/proc`` for a zombie."""
        code: int | None = None
        sig: int | None = None
        with contextlib.suppress(psutil.Error, ChildProcessError):
            # our own child (tests, a launcher): reaping it gives the exact status
            ret = proc.wait(timeout=0)
            if ret is not None:
                if ret < 0:
                    sig, code = -ret, 128 - ret
                else:
                    code = ret
                    if code > 128 and code - 128 in signal.valid_signals():
                        sig = code - 128
        if code is None:
            code, sig = zombie_exit_status(proc.pid)
        return code, sig

    def _dead(self, proc: psutil.Process) -> bool:
        try:
            return not proc.is_running() or has_exited(_STATUS.get(proc.status(), "unknown"))
        except psutil.NoSuchProcess:
            return True
        except psutil.Error:
            return False

    def _log_signature(self) -> tuple[int, int, int] | None:
        """The log's inode, size and modification time (None: no log, or none to read)."""
        if self.log_path is None:
            return None
        try:
            st = os.stat(self.log_path)
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    async def _until_next_search(self, since: float, scanned: float,
                                 seen: tuple[int, int, int] | None) -> None:
        """Wait before the next search for the server (the last began at ``scanned``, the log
        then ``seen``): ``find_interval`` for ``FIND_FAST_FOR_S``, then ``FIND_SLOW_S`` and,
        found by its log, only once the log moved (a new writer writes to it) or
        ``FIND_UNCHANGED_S`` passed."""
        loop = asyncio.get_running_loop()
        if loop.time() - since <= FIND_FAST_FOR_S:
            await asyncio.sleep(self.find_interval)
            return
        every = max(self.find_interval, FIND_SLOW_S)
        await asyncio.sleep(every)
        while (self.port is None and self._log_signature() == seen
               and loop.time() - scanned < FIND_UNCHANGED_S):
            await asyncio.sleep(every)

    def _successor(self) -> int | None:
        """The next server after an exit: found like the first, and started after it ended."""
        pid = self.find()
        if pid is None or self._ended_at is None:
            return pid
        try:
            created = psutil.Process(pid).create_time()
        except psutil.Error:
            return None
        return pid if created >= self._ended_at - RESTART_SLACK_S else None

    async def events(self) -> AsyncIterator[Event]:
        while True:
            async for event in self._watch_one():
                yield event
            if not self.follow_restarts:
                return
            self._ended_at = time.time()
            self.pid = None
            self._children = {}

    async def _watch_one(self) -> AsyncIterator[Event]:
        loop = asyncio.get_running_loop()
        searching_since = loop.time()
        while self.pid is None:
            scanned, seen = loop.time(), self._log_signature()
            self.pid = await asyncio.to_thread(self._successor)
            if self.pid is None:
                await self._until_next_search(searching_since, scanned, seen)
        try:
            proc = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            for event in end_of_watch(self._clock(), self.pid, seen=False):
                yield event
            return
        with watching(proc.pid) as watch:  # (confirmed as ours by the first liveness check)
            next_sample, interval, last = 0.0, self.sample_interval, None
            while True:
                if self._dead(proc):
                    final, name = self._zombie(proc)
                    code, sig = self._exit_status(proc)
                    for event in end_of_watch(self._clock(), proc.pid, seen=True, final=final,
                                              name=name, exit_code=code, signal=sig,
                                              memory=host_memory()):
                        yield event
                    return
                if (began := loop.time()) >= next_sample:
                    try:
                        sample = self._tree_sample(proc)
                    except psutil.NoSuchProcess:
                        continue  # died between the checks: reported on the next turn
                    except psutil.AccessDenied:
                        sample = ProcessSample(self._clock(), proc.pid, "unknown")
                    yield sample
                    interval = next_interval(last, sample, interval, self.sample_interval)
                    next_sample, last = grid_due(began, interval), sample
                # no poll with a pidfd: the exit or the next sample wakes it
                await pause(watch, next_sample - loop.time(), self.poll_interval)

    def _zombie(self, proc: psutil.Process) -> tuple[ProcessStatus | None, str]:
        """``("zombie", its name)`` for a zombie that can still be read, else ``(None, "")``."""
        with contextlib.suppress(psutil.Error):
            if proc.status() == psutil.STATUS_ZOMBIE:
                return "zombie", proc.name()
        return None, ""


def host_memory() -> tuple[int, int] | None:
    """This host's (available, total) memory in bytes, or ``None`` if it cannot be read."""
    try:
        vm = psutil.virtual_memory()
    except (OSError, psutil.Error):
        return None
    return int(vm.available), int(vm.total)


def status_of(pid: int) -> ProcessStatus:
    """One-shot status of ``pid`` (used by ``wait`` for its first line)."""
    try:
        return _STATUS.get(psutil.Process(pid).status(), "unknown")
    except psutil.NoSuchProcess:
        return "not_found"
    except psutil.Error:
        return "unknown"


__all__ = [
    "ProcessWatcher",
    "decode_wait_status",
    "find_listener",
    "find_log_holder",
    "status_of",
    "zombie_exit_status",
]
