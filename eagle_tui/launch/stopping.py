"""Stop a launched run: TERM to every member, KILL after the grace, until none is left.

The members are the processes that carry the run's token (:mod:`eagle_tui.launch.members`),
scanned again every :data:`POLL_S` seconds while the stop runs: a process forked late (during
the grace, or by a dying parent) is found and signalled like the first ones — TERM while the
grace lasts, KILL after it. The stop ends when two scans in a row find no member (so a child
forked as its parent died is not missed), or :data:`KILL_WAIT_S` seconds after the KILL with
the pids still there reported as left.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from eagle_tui.launch.members import Proc, Scan, Scanner, check_grace

KILL_WAIT_S = 10.0
POLL_S = 0.2
SETTLE_SCANS = 2  # empty scans in a row that end a stop
_SHOWN_PIDS = 12


@dataclass(frozen=True)
class StopReport:
    """What a stop did. Pids are sorted; ``late`` ⊆ ``found``; ``left`` still carry the token
    (empty when the run is gone). ``note``: about the recorded leader pid, when it is alive
    but not a member (left alone)."""

    found: tuple[int, ...]
    termed: tuple[int, ...]
    killed: tuple[int, ...]
    late: tuple[int, ...]
    left: tuple[int, ...]
    seconds: float
    grace: float
    note: str = ""

    @property
    def signal(self) -> str | None:
        """The last signal sent (``None``: nothing of the run was running)."""
        return "KILL" if self.killed else "TERM" if self.termed else None


def _pids(pids: tuple[int, ...]) -> str:
    shown = " ".join(str(p) for p in pids[:_SHOWN_PIDS])
    more = len(pids) - _SHOWN_PIDS
    return f"{shown} and {more} more" if more > 0 else shown


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("es" if n != 1 and what.endswith("ss") else "s" if n != 1 else "")


def describe(rep: StopReport) -> str:
    """One line: how many processes, which pids, what each got, how long it took."""
    if not rep.found:
        return "not running (no process carries its token)"
    parts = [f"{_count(len(rep.found), 'process')} (pids {_pids(rep.found)})"]
    ended = tuple(p for p in rep.found if p not in rep.killed and p not in rep.left)
    if ended:
        parts.append(f"{len(ended)} ended after TERM")
    if rep.killed:
        parts.append(f"{len(rep.killed)} KILLed after the {rep.grace:g} s grace "
                     f"(pids {_pids(rep.killed)})")
    if rep.late:
        parts.append(f"{len(rep.late)} appeared during the stop (pids {_pids(rep.late)})")
    if rep.left:
        parts.append(f"{len(rep.left)} still running (pids {_pids(rep.left)})")
    return ", ".join(parts) + f"; {rep.seconds:.1f} s"


def leader_note(scan: Scan, leader: int, leader_start: str) -> str:
    """Why the recorded leader pid, alive but not a member, is left alone ("" otherwise)."""
    if leader <= 0 or scan.leader_start is None or any(p.pid == leader for p in scan.members):
        return ""
    if scan.leader_start != leader_start:
        return (f"pid {leader} is another process now (started at tick {scan.leader_start}, "
                f"the launched one at {leader_start}): left alone")
    return (f"pid {leader} does not show the run's token (its environment cannot be read or "
            "was replaced): left alone")


def _sent(procs: tuple[Proc, ...] | list[Proc], pids: list[int]) -> set[Proc]:
    got = set(pids)
    return {p for p in procs if p.pid in got}


async def stop_run(scanner: Scanner, token: str, *, grace: float, leader: int = 0,
                   leader_start: str = "", kill_wait: float = KILL_WAIT_S,
                   poll: float = POLL_S) -> StopReport:
    """Stop every member of the run ``token`` (see the module docstring). ``leader`` and
    ``leader_start``: the recorded leader, only to explain a pid that is left alone."""
    check_grace(grace)
    t0 = time.monotonic()
    first = await scanner.scan(token, leader)
    note = leader_note(first, leader, leader_start)
    seen: set[Proc] = set(first.members)
    late: set[Proc] = set()
    termed: set[Proc] = set()
    killed: set[int] = set()
    current = first.members
    if current:
        termed.update(_sent(current, await scanner.send(current, "TERM", token)))
    quiet = 0 if current else SETTLE_SCANS
    while quiet < SETTLE_SCANS:
        await asyncio.sleep(poll)
        current = (await scanner.scan(token)).members
        late.update(p for p in current if p not in seen)
        seen.update(current)
        if not current:
            quiet += 1
            continue
        quiet = 0
        elapsed = time.monotonic() - t0
        if elapsed >= grace:
            killed.update(await scanner.send(current, "KILL", token))
            if elapsed >= grace + kill_wait:
                break  # each one left has had a KILL at least
        else:
            fresh = [p for p in current if p not in termed]
            termed.update(_sent(fresh, await scanner.send(fresh, "TERM", token)))
    left = tuple(sorted(p.pid for p in current)) if quiet < SETTLE_SCANS else ()
    return StopReport(tuple(sorted({p.pid for p in seen})), tuple(sorted({p.pid for p in termed})),
                      tuple(sorted(killed)), tuple(sorted({p.pid for p in late})), left,
                      time.monotonic() - t0, grace, note)


__all__ = ["KILL_WAIT_S", "POLL_S", "StopReport", "describe", "leader_note", "stop_run"]
