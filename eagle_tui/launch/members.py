"""Who belongs to a launched run: every process whose environment carries the run's token.

``launch`` puts a random token in the server's environment (``EAGLE_TUI_RUN``); every process
the server starts inherits it through fork and exec, whatever it does with sessions and groups.
So a run's members are found by the token alone, wherever they moved: a daemon that ``setsid``s
(a new session and group), workers reparented to init after the leader exits, children that
open their own process group. ``/proc/PID/environ`` shows the environment a process was
started with; a member is an entry exactly ``EAGLE_TUI_RUN=<token>`` there (a NUL-separated
entry, never a substring: a near-miss token or the token in an argv never matches).

More in docs/architecture.md, "Module notes", ``launch/members``.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from eagle_tui.transport.base import Transport, TransportError

TOKEN_VAR = "EAGLE_TUI_RUN"
MAX_MEMBERS = 4096  # lines one remote scan prints: its output stays bounded
GRACE_MAX_S = 3600.0
_TOKEN_RE = re.compile(r"[0-9a-f]{16,64}")
_SIGNALS = {"TERM": signal.SIGTERM, "KILL": signal.SIGKILL}


class ScanError(TransportError):
    """The host's processes could not be scanned (a cut or unreadable answer)."""


def check_grace(seconds: float) -> float:
    """``seconds`` if it is a usable grace period (finite, > 0, at most an hour), else
    ``ValueError`` with the one-line reason."""
    if not math.isfinite(seconds):
        raise ValueError(f"--grace must be a finite number of seconds, not {seconds}")
    if not 0 < seconds <= GRACE_MAX_S:
        raise ValueError(f"--grace must be > 0 and at most {GRACE_MAX_S:g} seconds, "
                         f"not {seconds:g}")
    return seconds


def valid_token(token: str) -> bool:
    """A token as ``launch`` makes them (lowercase hex): anything else matches nothing."""
    return _TOKEN_RE.fullmatch(token) is not None


def carries(environ: bytes, token: str) -> bool:
    """Whether ``environ`` (the raw ``/proc/PID/environ`` bytes) has the entry
    ``EAGLE_TUI_RUN=<token>`` exactly."""
    if not valid_token(token):
        return False
    return f"{TOKEN_VAR}={token}".encode() in environ.split(b"\0")


@dataclass(frozen=True, order=True)
class Proc:
    """One member as a scan saw it; ``(pid, start)`` is its identity (a pid can be reused)."""

    pid: int
    start: str  # clock ticks since boot
    ppid: int = 0
    pgid: int = 0
    sid: int = 0


def parse_stat(text: str) -> tuple[str, list[str]] | None:
    """``(state, fields from state on)`` of a ``/proc/PID/stat`` line, ``None`` if cut."""
    _head, sep, tail = text.rpartition(")")
    fields = tail.split()
    if not sep or len(fields) < 20:
        return None
    return fields[0], fields


@dataclass(frozen=True)
class Scan:
    """The run's members, and the recorded leader's start time if that pid is alive at all
    (``None``: no such process, or a zombie; it may be another process than the launched
    one)."""

    members: tuple[Proc, ...]
    leader_start: str | None = None


class Scanner(Protocol):
    """Finds a run's members and signals them, on one host."""

    async def scan(self, token: str, leader: int = 0) -> Scan: ...

    async def send(self, procs: Sequence[Proc], sig: str, token: str) -> list[int]:
        """Signal each of ``procs`` still the same process with the token; the pids sent to."""
        ...


def scanner_for(transport: Transport) -> Scanner:
    """The local scanner for this machine, the ``sh`` one for an SSH host."""
    return LocalScanner() if not transport.host else ShellScanner(transport)


# ---------------------------------------------------------------------------------- local
def _read_proc(root: str, pid: int, token: str) -> Proc | None:
    """The member at ``pid`` (``None``: gone, a zombie, unreadable or without the token)."""
    try:
        with open(f"{root}/{pid}/environ", "rb") as f:
            env = f.read()
        with open(f"{root}/{pid}/stat", encoding="utf-8", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    parsed = parse_stat(stat)
    if parsed is None or parsed[0] in ("Z", "X", "x") or not carries(env, token):
        return None
    f3 = parsed[1]
    return Proc(pid, f3[19], int(f3[1]), int(f3[2]), int(f3[3]))


def _start_of(root: str, pid: int) -> str | None:
    try:
        with open(f"{root}/{pid}/stat", encoding="utf-8", errors="replace") as f:
            parsed = parse_stat(f.read())
    except OSError:
        return None
    return None if parsed is None or parsed[0] in ("Z", "X", "x") else parsed[1][19]


class LocalScanner:
    """This machine's ``/proc``, read in this process; signals through pidfds."""

    def __init__(self, root: str = "/proc") -> None:
        self.root = root

    def _scan(self, token: str, leader: int) -> Scan:
        me = os.getpid()
        found: list[Proc] = []
        if valid_token(token):
            for name in os.listdir(self.root):
                if name.isdigit() and int(name) != me:
                    proc = _read_proc(self.root, int(name), token)
                    if proc is not None:
                        found.append(proc)
        return Scan(tuple(sorted(found)), _start_of(self.root, leader) if leader > 0 else None)

    async def scan(self, token: str, leader: int = 0) -> Scan:
        return await asyncio.to_thread(self._scan, token, leader)

    def _send(self, procs: Sequence[Proc], sig: str, token: str) -> list[int]:
        sent: list[int] = []
        for want in procs:
            try:
                fd = os.pidfd_open(want.pid)
            except OSError:
                continue  # gone
            try:
                # checked after the pidfd is open: if the pid still shows the scanned process
                # now, the pidfd holds that process and no later one
                now = _read_proc(self.root, want.pid, token)
                if now is None or now.start != want.start:
                    continue
                signal.pidfd_send_signal(fd, _SIGNALS[sig])
                sent.append(want.pid)
            except ProcessLookupError:
                pass
            finally:
                os.close(fd)
        return sent

    async def send(self, procs: Sequence[Proc], sig: str, token: str) -> list[int]:
        return await asyncio.to_thread(self._send, procs, sig, token)


# ---------------------------------------------------------------------------------- remote
SCAN_SH = r"""
set -u
cd -- "$1" || { echo "eagle-tui: cannot read $1" >&2; exit 3; }
entry="EAGLE_TUI_RUN=$2"; leader=$3; cap=$4; me=$$
if printf 'x\0' | grep -qzxF x 2>/dev/null; then
  hits=$(grep -lzxF -e "$entry" -- [0-9]*/environ 2>/dev/null)
else
  hits=$(for f in [0-9]*/environ; do
    tr '\n\0' '\001\n' <"$f" 2>/dev/null | grep -qxF -e "$entry" && echo "$f"; done)
fi
n=0
for f in $hits; do
  d=${f%/environ}
  [ "$d" = "$me" ] && continue
  s=$(cat "$d/stat" 2>/dev/null) || continue
  set -- ${s##*)}
  case $1 in Z|X|x) continue ;; esac
  [ $n -lt "$cap" ] || break
  echo "P $d ${20} $2 $3 $4"
  n=$((n+1))
done
if [ "$leader" -gt 0 ] && s=$(cat "$leader/stat" 2>/dev/null); then
  set -- ${s##*)}
  case $1 in Z|X|x) ;; *) echo "L ${20}" ;; esac
fi
echo "E $n"
"""

SEND_SH = r"""
set -u
sig=$1; entry="EAGLE_TUI_RUN=$2"
while read -r pid start; do
  s=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
  set -- ${s##*)}
  [ "${20}" = "$start" ] || continue
  tr '\n\0' '\001\n' <"/proc/$pid/environ" 2>/dev/null | grep -qxF -e "$entry" || continue
  kill -s "$sig" "$pid" 2>/dev/null && echo "S $pid"
done
true
"""


def parse_scan(out: bytes) -> Scan:
    """The members a :data:`SCAN_SH` run printed; :class:`ScanError` if its end line is
    missing (the answer was cut)."""
    members: list[Proc] = []
    leader: str | None = None
    ended = False
    for raw in out.decode("ascii", "replace").splitlines():
        parts = raw.split()
        if len(parts) == 6 and parts[0] == "P" and all(p.isdigit() for p in parts[1:]):
            members.append(Proc(int(parts[1]), parts[2], int(parts[3]), int(parts[4]),
                                int(parts[5])))
        elif len(parts) == 2 and parts[0] == "L" and parts[1].isdigit():
            leader = parts[1]
        elif len(parts) == 2 and parts[0] == "E" and parts[1].isdigit():
            ended = True
    if not ended:
        raise ScanError("the process scan's answer was cut (no end line)")
    return Scan(tuple(sorted(members)), leader)


class ShellScanner:
    """The host's ``/proc`` through one ``sh`` script per scan, run by the transport."""

    def __init__(self, transport: Transport, root: str = "/proc", timeout: float = 10.0) -> None:
        self.transport = transport
        self.root = root
        self.timeout = timeout

    async def scan(self, token: str, leader: int = 0) -> Scan:
        if not valid_token(token):
            return Scan(())
        res = await self.transport.run(
            ["sh", "-c", SCAN_SH, "eagle-tui-scan", self.root, token, str(max(leader, 0)),
             str(MAX_MEMBERS)], self.timeout)
        if res.exit_code != 0:
            err = res.stderr.decode("utf-8", "replace").strip()
            raise ScanError(f"could not scan the host's processes: {err or res.exit_code}")
        return parse_scan(res.stdout)

    async def send(self, procs: Sequence[Proc], sig: str, token: str) -> list[int]:
        if not procs or sig not in _SIGNALS or not valid_token(token):
            return []
        pairs = "".join(f"{p.pid} {p.start}\n" for p in procs).encode()
        res = await self.transport.run(["sh", "-c", SEND_SH, "eagle-tui-signal", sig, token],
                                       self.timeout, stdin=pairs)
        return [int(w[1]) for w in (ln.split() for ln in res.stdout.decode(
            "ascii", "replace").splitlines()) if len(w) == 2 and w[0] == "S" and w[1].isdigit()]


__all__ = ["GRACE_MAX_S", "MAX_MEMBERS", "TOKEN_VAR", "LocalScanner", "Proc", "Scan",
           "ScanError", "Scanner", "ShellScanner", "carries", "check_grace", "parse_scan",
           "parse_stat", "scanner_for", "valid_token"]
