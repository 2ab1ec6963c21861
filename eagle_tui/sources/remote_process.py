"""Watch the server process on a remote host with POSIX tools only (``ps``, ``find``, ``awk``).

The remote twin of :class:`eagle_tui.sources.process.ProcessWatcher`, for ``--ssh``: nothing is
installed on the host, so psutil is not available there. Each poll is one exec on the existing SSH
connection:

* the process is ``--pid``, or the owner of the listening socket on the URL's port (socket inode
  from ``/proc/net/tcp{,6}``, then the process whose ``/proc/PID/fd`` links to it), or the process
  holding the log file open; several holders (a launcher and its children) → the one whose parent
  is not a holder, as locally;
* ``ps -e -o pid=,ppid=,stat=,rss=,etimes=,comm=`` once per ``poll_interval`` gives the status
  of the process and the RSS of its whole tree.

More in docs/architecture.md, "Module notes", ``sources/remote_process``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from eagle_tui.model.events import Event, ProcessSample
from eagle_tui.model.views.ticks import grid_due
from eagle_tui.sources.process_rules import (
    STATUS_BY_PS_LETTER,
    end_of_watch,
    has_exited,
    parse_meminfo,
    topmost,
)
from eagle_tui.transport.base import Transport, TransportError

DEFAULT_POLL_S = 1.0

# $1 = port (may be empty), $2 = log path as a find -lname pattern (may be empty).
# Prints "port PID" lines for the socket owner(s), then "log PID" lines for the processes that
# hold the log open for writing (the access mode in /proc/PID/fdinfo/FD's octal flags: the last
# digit & 3 is 1 or 2), never a reader such as eagle-tui's own remote `tail`.
FIND_SCRIPT = r"""
if [ -n "$1" ]; then
  hex=$(printf ':%04X' "$1")
  for ino in $(awk -v p="$hex" 'FNR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p \
      { print $10 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null); do
    find /proc/[0-9]*/fd -maxdepth 1 -lname "socket:\[$ino\]" 2>/dev/null \
      | cut -d/ -f3 | sed 's/^/port /'
  done
fi
if [ -n "$2" ]; then  # writers only: eagle-tui's own `tail` reads the log, it never serves
  find /proc/[0-9]*/fd -maxdepth 1 -lname "$2" 2>/dev/null | while read -r fd; do
    p=${fd#/proc/}; p=${p%%/*}; n=${fd##*/}
    f=$(sed -n 's/^flags:[[:space:]]*//p' "/proc/$p/fdinfo/$n" 2>/dev/null)
    case $f in *[123567]) echo "log $p" ;; esac
  done
fi
exit 0
"""

PS_ARGV = ["ps", "-e", "-o", "pid=,ppid=,stat=,rss=,etimes=,comm="]

# $@ = the tree's pids. Prints the clock tick rate, then per pid its CPU ticks (utime + stime,
# /proc/PID/stat fields 14 and 15, after the parenthesised name) and the larger of its read()
# bytes and disk reads (/proc/PID/io; unreadable for another user's process: then nothing).
PROC_SCRIPT = r"""
getconf CLK_TCK 2>/dev/null || echo 100
for p in "$@"; do
  s=$(cat /proc/$p/stat 2>/dev/null) || continue
  s=${s##*) }
  set -- $s
  t=$(( ${12} + ${13} ))
  r=$(awk '$1 == "rchar:" { c = $2 } $1 == "read_bytes:" { b = $2 }
           END { if (c != "" || b != "") print (c > b ? c : b) }' /proc/$p/io 2>/dev/null)
  echo "$p $t ${r:--}"
done
exit 0
"""


def parse_proc(text: str) -> tuple[float, int, int | None]:
    """:data:`PROC_SCRIPT`'s output → (ticks per second, CPU ticks, bytes read or ``None``)."""
    lines = text.split("\n")
    try:
        hz = float(lines[0].strip() or 100)
    except ValueError:
        hz = 100.0
    ticks = 0
    read: int | None = None
    for line in lines[1:]:
        parts = line.split()
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        ticks += int(parts[1])
        if parts[2].isdigit():
            read = (read or 0) + int(parts[2])
    return (hz if hz > 0 else 100.0), ticks, read



@dataclass(frozen=True, slots=True)
class PsRow:
    pid: int
    ppid: int
    stat: str
    rss_kib: int
    etimes: int
    comm: str


def parse_ps(text: str) -> dict[int, PsRow]:
    """``ps -e -o pid=,ppid=,stat=,rss=,etimes=,comm=`` → rows by pid (bad lines skipped)."""
    rows: dict[int, PsRow] = {}
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 5:
            continue
        try:
            pid, ppid, rss, etimes = int(parts[0]), int(parts[1]), int(parts[3]), int(parts[4])
        except ValueError:
            continue
        rows[pid] = PsRow(pid, ppid, parts[2], rss, etimes, parts[5] if len(parts) > 5 else "")
    return rows


def glob_escape(path: str) -> str:
    """``path`` as a literal ``find -lname`` pattern (``*?[\\`` lose their meaning)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in path)


def root_of(pids: set[int], rows: dict[int, PsRow]) -> int | None:
    """The holder whose parent is not itself a holder (the launcher, not its workers).

    No such holder among the rows (they changed between ``find`` and ``ps``): the lowest pid.
    """
    root = topmost(pids, lambda pid: rows[pid].ppid if pid in rows else None)
    return root if root is not None else (min(pids) if pids else None)


def tree(pid: int, rows: dict[int, PsRow]) -> list[PsRow]:
    children: dict[int, list[int]] = {}
    for row in rows.values():
        children.setdefault(row.ppid, []).append(row.pid)
    out, todo, seen = [], [pid], set()
    while todo:
        p = todo.pop()
        if p in seen or p not in rows:
            continue
        seen.add(p)
        out.append(rows[p])
        todo.extend(children.get(p, ()))
    return out


class RemoteProcessWatcher:
    """Source of ``ProcessSample`` events and one ``ProcessExited``, through a transport."""

    def __init__(
        self,
        transport: Transport,
        pid: int | None = None,
        *,
        port: int | None = None,
        log_path: str | None = None,
        poll_interval: float = DEFAULT_POLL_S,
        find_interval: float = 1.0,
        name: str = "process",
        clock: Callable[[], float] = time.time,
    ) -> None:
        if pid is None and port is None and log_path is None:
            raise ValueError("RemoteProcessWatcher needs a pid, a port or a log path")
        self.transport = transport
        self.pid = pid
        self.port = port
        self.log_path = log_path
        self.poll_interval = poll_interval
        self.find_interval = find_interval
        self.name = name
        self._clock = clock
        self._cpu_prev: tuple[float, int] | None = None  # (time, CPU ticks) of the last sample

    async def proc_stats(self, pids: list[int]) -> tuple[float | None, int | None]:
        """CPU % of the tree since the last call and its bytes read, from ``/proc``."""
        res = await self.transport.run(["sh", "-c", PROC_SCRIPT, "sh", *map(str, pids)], 10.0)
        if res.exit_code != 0:
            return None, None
        hz, ticks, read = parse_proc(res.stdout.decode("ascii", "replace"))
        now = self._clock()
        cpu: float | None = None
        prev = self._cpu_prev
        if prev is not None and now > prev[0] and ticks >= prev[1]:
            cpu = round((ticks - prev[1]) / hz / (now - prev[0]) * 100.0, 1)
        self._cpu_prev = (now, ticks)
        return cpu, read

    async def host_memory(self) -> tuple[int, int] | None:
        """The remote host's (available, total) memory from ``/proc/meminfo``, or ``None``."""
        try:
            res = await self.transport.run(["cat", "/proc/meminfo"], 10.0)
        except TransportError:
            return None
        if res.exit_code != 0:
            return None
        return parse_meminfo(res.stdout.decode("ascii", "replace"))

    async def ps(self) -> dict[int, PsRow]:
        res = await self.transport.run(PS_ARGV, timeout=10.0)
        if res.exit_code != 0:
            why = res.stderr.decode("utf-8", "replace").strip() or f"exit {res.exit_code}"
            raise TransportError(f"ps failed on {self.transport.host}: {why}")
        return parse_ps(res.stdout.decode("utf-8", "replace"))

    async def find(self) -> int | None:
        port = "" if self.port is None else str(self.port)
        pattern = ""
        if self.log_path is not None:  # fd links are absolute: match a relative path's tail
            pattern = glob_escape(self.log_path)
            if not self.log_path.startswith("/"):
                pattern = "*/" + pattern.removeprefix("./")
        res = await self.transport.run(["sh", "-c", FIND_SCRIPT, "sh", port, pattern], 10.0)
        by: dict[str, set[int]] = {"port": set(), "log": set()}
        for line in res.stdout.decode("ascii", "replace").splitlines():
            kind, _, pid = line.partition(" ")
            if kind in by and pid.isdigit():
                by[kind].add(int(pid))
        if not by["port"] and not by["log"]:
            return None
        rows = await self.ps()
        return root_of(by["port"] or by["log"], rows)

    async def events(self) -> AsyncIterator[Event]:
        while self.pid is None:
            self.pid = await self.find()
            if self.pid is None:
                await asyncio.sleep(self.find_interval)
        pid = self.pid
        first = True
        while True:
            rows = await self.ps()
            row = rows.get(pid)
            if row is None:
                for event in end_of_watch(self._clock(), pid, seen=not first,
                                          memory=await self.host_memory()):
                    yield event
                return
            first = False
            status = STATUS_BY_PS_LETTER.get(row.stat[:1], "unknown")
            if has_exited(status):  # the exit status of a process not ours is not knowable
                for event in end_of_watch(self._clock(), pid, seen=True, final=status,
                                          name=row.comm, memory=await self.host_memory()):
                    yield event
                return
            procs = tree(pid, rows)
            pids = [r.pid for r in procs]
            cpu, read = await self.proc_stats(pids)
            now = self._clock()
            yield ProcessSample(
                now, pid, status, row.comm,
                rss_bytes=sum(r.rss_kib for r in procs) * 1024,
                cpu_percent=cpu,
                started=now - row.etimes,
                num_procs=len(procs),
                read_bytes=read,
                pids=tuple(pids),
            )
            # on the session's grid, at least half an interval after this sample's answer
            loop = asyncio.get_running_loop()
            await asyncio.sleep(max(0.0, grid_due(loop.time(), self.poll_interval) - loop.time()))


__all__ = ["FIND_SCRIPT", "PROC_SCRIPT", "PsRow", "RemoteProcessWatcher", "glob_escape",
           "parse_proc", "parse_ps", "root_of"]
