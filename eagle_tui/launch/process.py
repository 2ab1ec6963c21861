"""Start a server detached, with the token that makes its processes findable again.

The server must outlive eagle-tui (a dashboard closed, an SSH connection dropped), so it is
started in its own session and process group (``setsid``), stdin from ``/dev/null``, stdout and
stderr appended to the log, through the transport's ``sh`` — the same script locally and over
SSH, nothing installed on the host. The run is recorded with its leader's pid and group, the
leader's start time in clock ticks since boot (``/proc/PID/stat`` field 22) and a random token
put in the server's environment (``EAGLE_TUI_RUN``, inherited by every process it starts): the
run's members are the processes that carry it (:mod:`eagle_tui.launch.members`), and ``stop``
signals those only (:mod:`eagle_tui.launch.stopping`).

Environment values given with ``--env`` travel on the command's stdin (base64, one per line),
never in an argv that ``ps`` on the host would show, and are never written to disk.
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass
from typing import Any, Protocol

from eagle_tui.errors import EagleError
from eagle_tui.launch.members import TOKEN_VAR
from eagle_tui.transport.base import RunResult, Transport, TransportError


class LaunchError(EagleError):
    """The server could not be started, or the run could not be stopped."""


@dataclass(frozen=True)
class Stopped:
    """What a stop did, one line (``ran``: something of the run was running; ``left``: some
    of it survived; ``note``: about what was left alone)."""

    text: str
    ran: bool
    left: bool = False
    note: str = ""


class RunHandle(Protocol):
    """How a launched run was started and how it is stopped, whatever it runs in: a process
    group (:class:`Launched`) or a container (``eagle_tui.launch.container``)."""

    @property
    def token(self) -> str: ...

    @property
    def log_path(self) -> str: ...

    @property
    def log_offset(self) -> int: ...

    @property
    def pid(self) -> int: ...

    @property
    def where(self) -> str: ...

    @property
    def started_text(self) -> str: ...

    def follow(self) -> dict[str, Any]: ...

    async def stop(self, transport: Transport, *, grace: float,
                   keep: bool = False) -> Stopped: ...


@dataclass(frozen=True)
class Launched:
    """A started server: the group to stop later and the log it writes."""

    pid: int
    pgid: int
    proc_start: str
    token: str
    log_path: str
    # where this run's lines begin in its log: a log that existed (``--log`` names a file a
    # server wrote before) keeps its bytes, and what precedes this offset is another run's
    log_offset: int = 0

    @property
    def where(self) -> str:
        """What the status line names: the log it writes."""
        return self.log_path

    @property
    def started_text(self) -> str:
        return f"pid {self.pid}, log {self.log_path}"

    def follow(self) -> dict[str, Any]:
        """What the dashboard follows: the log and the leader."""
        return {"log": self.log_path, "log_offset": self.log_offset, "pid": self.pid,
                "container": None}

    async def stop(self, transport: Transport, *, grace: float, keep: bool = False) -> Stopped:
        """TERM to every member, KILL after ``grace`` (``keep``: nothing is left to keep)."""
        from eagle_tui.launch.members import scanner_for
        from eagle_tui.launch.stopping import describe, stop_run

        res = await stop_run(scanner_for(transport), self.token, grace=grace, leader=self.pid,
                             leader_start=self.proc_start)
        return Stopped(describe(res), res.signal is not None, bool(res.left), res.note)


def new_token() -> str:
    return secrets.token_hex(8)


# The framing every launch shares (a process group, a container's CLI): into the folder, then
# the environment from stdin (``K base64(V)`` lines), never from an argv.
_FRAME = r"""
set -u
cd -- "$1" || { echo "eagle-tui: cannot cd to $1" >&2; exit 97; }
while IFS=' ' read -r k v; do
  [ -n "$k" ] || continue
  export "$k=$(printf '%s' "$v" | base64 -d)"
done
"""
_START = _FRAME + r"""
log=$2; token=$3; shift 3
mkdir -p -- "$(dirname -- "$log")" || exit 98
export EAGLE_TUI_RUN="$token"
# the log's size before the server appends: where this run's lines begin (regular files only:
# reading a FIFO's size would wait for a writer)
size=0
if [ -f "$log" ]; then size=$(wc -c < "$log") || size=0; fi
# The leader prints its own stat from inside its new session, then becomes the server: its
# pid and start time are known even if it exits at once (a server that daemonizes).
stat=$(setsid sh -c 'cat "/proc/$$/stat" && exec "$@" </dev/null >>"$0" 2>&1' "$log" "$@" &)
[ -n "$stat" ] || { echo "eagle-tui: the server did not start (setsid failed)" >&2; exit 96; }
echo "started $size ${stat%% *} ${stat##*) }"
"""


# A command run in the frame to its end, its stdin closed (a container CLI's ``run -d``).
_RUN = _FRAME + r"""
shift
exec "$@" </dev/null
"""


def _env_lines(env: dict[str, str]) -> bytes:
    # (the bytes the user gave: an undecodable byte of an argv is Python's surrogateescape)
    return b"".join(f"{k} ".encode("utf-8", "surrogateescape")
                    + base64.b64encode(v.encode("utf-8", "surrogateescape")) + b"\n"
                    for k, v in env.items())


async def start_detached(transport: Transport, argv: list[str], *, cwd: str, log_path: str,
                         env: dict[str, str] | None = None, timeout: float = 20.0,
                         token: str | None = None) -> Launched:
    """Start ``argv`` in its own session on the transport's host (see the module docstring),
    with ``token`` (default: a new one) in its environment."""
    if not argv:
        raise LaunchError("empty command")
    token = token or new_token()
    script = ["sh", "-c", _START, "eagle-tui-launch", cwd, log_path, token, *argv]
    try:
        res = await transport.run(script, timeout, stdin=_env_lines(env or {}))
    except TransportError as exc:
        raise LaunchError(f"could not start the server: {exc}") from None
    out = res.stdout.decode("utf-8", "replace").split()
    if res.exit_code != 0 or not out:
        err = res.stderr.decode("utf-8", "replace").strip()
        raise LaunchError(f"could not start the server: {err or f'exit {res.exit_code}'}")
    if (out[0] != "started" or len(out) < 23
            or not all(w.isdigit() and len(w) <= 19 for w in out[1:3])):
        raise LaunchError(f"could not start the server: unexpected answer {out[0][:40]!r}")
    # out = ["started", log size, pid, state, ppid, pgrp, session, ..., starttime (field 22)]
    offset, pid = int(out[1]), int(out[2])
    fields = out[3:]
    pgid = int(fields[2])
    if pgid != pid:
        raise LaunchError(f"pid {pid} is not the leader of its group ({pgid})")
    return Launched(pid, pgid, fields[19], token, log_path, offset)


def run_argv(argv: list[str]) -> list[str]:
    """The command without its leading ``K=V`` words (they travel as environment instead,
    so a ``HF_TOKEN=...`` never shows in the host's ``ps``)."""
    i = 0
    while i < len(argv) and "=" in argv[i] and argv[i].split("=", 1)[0].isidentifier():
        i += 1
    return argv[i:]


async def run_framed(transport: Transport, argv: list[str], *, cwd: str,
                     env: dict[str, str] | None = None, timeout: float = 120.0) -> RunResult:
    """Run ``argv`` to its end in ``cwd`` on the transport's host with ``env`` exported from
    stdin (the same framing as :func:`start_detached`); its result, whatever its exit."""
    if not argv:
        raise LaunchError("empty command")
    script = ["sh", "-c", _RUN, "eagle-tui-launch", cwd, *argv]
    try:
        return await transport.run(script, timeout, stdin=_env_lines(env or {}))
    except TransportError as exc:
        raise LaunchError(f"could not start the server: {exc}") from None


__all__ = ["TOKEN_VAR", "LaunchError", "Launched", "RunHandle", "Stopped", "new_token", "run_argv",
           "run_framed", "start_detached"]
