"""Start a server detached, find its process group again, and stop only that group.

The server must outlive eagle-tui (a dashboard closed, an SSH connection dropped), so it is
started in its own session and process group (``setsid``), stdin from ``/dev/null``, stdout and
stderr appended to the log, through the transport's ``sh`` — the same script locally and over
SSH, nothing installed on the host. Three things identify the group later: its id (= the
leader's pid), the leader's start time in clock ticks since boot (``/proc/PID/stat`` field 22)
and a random token in every member's environment (``EAGLE_TUI_RUN``, inherited by the engine's
workers). ``stop`` signals a group only when the token is found in it, and the leader, if still
there, has the recorded start time: a reused pid or a group eagle-tui did not launch is never hit.

Environment values given with ``--env`` travel on the command's stdin (base64, one per line),
never in an argv that ``ps`` on the host would show, and are never written to disk.
"""

from __future__ import annotations

import asyncio
import base64
import secrets
import time
from dataclasses import dataclass

from eagle_tui.errors import EagleError
from eagle_tui.transport.base import Transport, TransportError

TOKEN_VAR = "EAGLE_TUI_RUN"
STOP_GRACE_S = 10.0
_POLL_S = 0.2


class LaunchError(EagleError):
    """The server could not be started, or a group is not ours to stop."""


@dataclass(frozen=True)
class Launched:
    """A started server: the group to stop later and the log it writes."""

    pid: int
    pgid: int
    proc_start: str
    token: str
    log_path: str


@dataclass(frozen=True)
class Member:
    """One process of a group, as ``/proc`` shows it."""

    pid: int
    pgid: int
    sid: int
    start: str
    marked: bool  # the run's token is in its environment


def new_token() -> str:
    return secrets.token_hex(8)


_START = r"""
set -u
cd -- "$1" || { echo "eagle-tui: cannot cd to $1" >&2; exit 97; }
log=$2; token=$3; shift 3
mkdir -p -- "$(dirname -- "$log")" || exit 98
while IFS=' ' read -r k v; do
  [ -n "$k" ] || continue
  export "$k=$(printf '%s' "$v" | base64 -d)"
done
export EAGLE_TUI_RUN="$token"
setsid "$@" </dev/null >>"$log" 2>&1 &
pid=$!
i=0
while [ $i -lt 200 ]; do  # until setsid has run: the new session's leader is $pid
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || { echo "exited $pid"; exit 0; }
  set -- ${stat##*) }
  [ "$3" = "$pid" ] && break
  sleep 0.01; i=$((i+1))
done
echo "started $pid ${stat##*) }"
"""

_MEMBERS = r"""
want=$1; token=$2
for d in /proc/[0-9]*; do
  s=$(cat "$d/stat" 2>/dev/null) || continue
  set -- ${s##*) }
  [ "$3" = "$want" ] || continue
  case $1 in Z|X|x) continue ;; esac  # a zombie has exited: nothing left to stop
  m=0
  tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qx "EAGLE_TUI_RUN=$token" && m=1
  echo "${d#/proc/} $3 $4 ${20} $m"
done
"""


def _env_lines(env: dict[str, str]) -> bytes:
    return b"".join(f"{k} ".encode() + base64.b64encode(v.encode()) + b"\n"
                    for k, v in env.items())


async def start_detached(transport: Transport, argv: list[str], *, cwd: str, log_path: str,
                         env: dict[str, str] | None = None, timeout: float = 20.0) -> Launched:
    """Start ``argv`` in its own session on the transport's host (see the module docstring)."""
    if not argv:
        raise LaunchError("empty command")
    token = new_token()
    script = ["sh", "-c", _START, "eagle-tui-launch", cwd, log_path, token, *argv]
    try:
        res = await transport.run(script, timeout, stdin=_env_lines(env or {}))
    except TransportError as exc:
        raise LaunchError(f"could not start the server: {exc}") from None
    out = res.stdout.decode("utf-8", "replace").split()
    if res.exit_code != 0 or not out:
        err = res.stderr.decode("utf-8", "replace").strip()
        raise LaunchError(f"could not start the server: {err or f'exit {res.exit_code}'}")
    if out[0] == "exited":
        raise LaunchError(f"the server exited at once (pid {out[1]}); see {log_path}")
    # out = ["started", pid, state, ppid, pgrp, session, ..., starttime (field 22), ...]
    pid = int(out[1])
    fields = out[2:]
    pgid = int(fields[2])
    if pgid != pid:
        raise LaunchError(f"pid {pid} is not the leader of its group ({pgid})")
    return Launched(pid, pgid, fields[19], token, log_path)


async def members(transport: Transport, pgid: int, token: str,
                  timeout: float = 10.0) -> list[Member]:
    """The live processes of group ``pgid`` (with whether each carries ``token``)."""
    res = await transport.run(["sh", "-c", _MEMBERS, "eagle-tui-group", str(pgid), token],
                              timeout)
    found: list[Member] = []
    for line in res.stdout.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 5 and all(p.isdigit() for p in parts):
            found.append(Member(int(parts[0]), int(parts[1]), int(parts[2]), parts[3],
                                parts[4] == "1"))
    return found


def check_ours(group: list[Member], pgid: int, proc_start: str) -> str | None:
    """Why ``group`` is not the launched one (``None``: it is ours to signal)."""
    if not group:
        return None  # nothing left to signal
    if not any(m.marked for m in group):
        return (f"process group {pgid} was not launched by eagle-tui (no {TOKEN_VAR} token in "
                "its environment): refusing to signal it")
    leader = next((m for m in group if m.pid == pgid), None)
    if leader is not None and leader.start != proc_start:
        return (f"pid {pgid} was reused by another process (started at tick {leader.start}, "
                f"the launched one at {proc_start}): refusing to signal it")
    return None


@dataclass(frozen=True)
class StopResult:
    """How a stop went: ``signal`` is the last one sent (``None``: nothing was running)."""

    signal: str | None
    seconds: float
    left: int


async def stop_group(transport: Transport, pgid: int, proc_start: str, token: str, *,
                     grace: float = STOP_GRACE_S) -> StopResult:
    """TERM to the group, KILL after ``grace`` seconds; refuses a group that is not ours."""
    t0 = time.monotonic()
    group = await members(transport, pgid, token)
    why = check_ours(group, pgid, proc_start)
    if why is not None:
        raise LaunchError(why)
    if not group:
        return StopResult(None, 0.0, 0)
    sent = "TERM"
    await _kill(transport, "TERM", pgid)
    while True:
        await asyncio.sleep(_POLL_S)
        left = [m for m in await members(transport, pgid, token) if m.marked]
        if not left:
            return StopResult(sent, time.monotonic() - t0, 0)
        if sent == "TERM" and time.monotonic() - t0 >= grace:
            sent = "KILL"
            await _kill(transport, "KILL", pgid)
        elif sent == "KILL" and time.monotonic() - t0 >= grace + 10:
            return StopResult(sent, time.monotonic() - t0, len(left))


async def _kill(transport: Transport, sig: str, pgid: int) -> None:
    await transport.run(["sh", "-c", f'kill -{sig} "-$1" 2>/dev/null; true', "eagle-tui-stop",
                         str(pgid)], 10.0)


__all__ = ["TOKEN_VAR", "LaunchError", "Launched", "Member", "StopResult", "check_ours",
           "members", "new_token", "start_detached", "stop_group"]
