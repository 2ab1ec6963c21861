"""``eagle-tui stop RUN [--yes]``: stop a run eagle-tui launched (its whole process group).

TERM to the group, KILL after ``--grace`` seconds. Refused (exit 2) for a run eagle-tui did
not launch, and for a process group that is not the launched one any more (checked by the
group's token and the leader's start time: a reused pid is never signalled). Exit 0 stopped
(or already gone), 2 refused or usage.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from eagle_tui.assembly.remote import connect_one, one_transport
from eagle_tui.assembly.spec import ssh_spec_from_args
from eagle_tui.commands import argtypes
from eagle_tui.commands.common import add_ssh_args
from eagle_tui.model.normalize import sanitize

EXIT_STOPPED = 0
EXIT_REFUSED = 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "stop", help="stop a launched run (TERM, then KILL after a grace period)",
        description="Stop a run that eagle-tui launched: TERM to its process group, KILL after "
        "--grace seconds. Refuses a run or process group eagle-tui did not launch. RUN is an "
        "id, a name, `last` or `last~N`. Exit codes: 0 stopped, 2 refused or usage.")
    p.add_argument("run", metavar="RUN")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument("--grace", metavar="SECONDS", type=argtypes.seconds_or_zero, default=10.0,
                   help="seconds between TERM and KILL (default 10)")
    add_ssh_args(p)
    p.set_defaults(func=run)


def _confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        return False
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


async def stop_async(args: argparse.Namespace) -> int:
    from eagle_tui.history.store import HistoryError, RunStore
    from eagle_tui.launch.process import LaunchError, stop_group
    from eagle_tui.transport.base import TransportError

    try:
        store = RunStore()
        rec = store.get(args.run)
    except HistoryError as exc:
        print(f"eagle-tui stop: error: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if rec.kind != "launched" or rec.pgid is None or not rec.token or not rec.proc_start:
        print(f"eagle-tui stop: refused: run {sanitize(rec.label)} was not launched by "
              "eagle-tui (it was only watched): stop it where it was started", file=sys.stderr)
        return EXIT_REFUSED
    where = f" on {rec.host}" if rec.host else ""
    if rec.host and not args.ssh:
        args.ssh = [rec.host]  # the host it was launched on (--ssh overrides: an alias)
    try:
        transport = one_transport(ssh_spec_from_args(args))
    except ValueError as exc:
        print(f"eagle-tui stop: error: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    question = (f"Stop run {sanitize(rec.label)}{where} (process group {rec.pgid}: "
                f"{sanitize(rec.command or '')[:120]})?")
    if not args.yes and not _confirm(question):
        print("eagle-tui stop: not confirmed (use --yes to stop without asking)",
              file=sys.stderr)
        return EXIT_REFUSED
    try:
        await connect_one(transport)
        res = await stop_group(transport, rec.pgid, rec.proc_start, rec.token,
                               grace=args.grace)
    except LaunchError as exc:
        print(f"eagle-tui stop: refused: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except (TransportError, TimeoutError) as exc:
        print(f"eagle-tui stop: error: {exc or 'timed out'}", file=sys.stderr)
        return EXIT_REFUSED
    finally:
        await transport.close()
    if res.signal is None:
        print(f"run {sanitize(rec.label)}{where}: not running (nothing to stop)")
    elif res.left:
        print(f"eagle-tui stop: {res.left} process(es) of run {sanitize(rec.label)} survived "
              "KILL", file=sys.stderr)
        return EXIT_REFUSED
    else:
        print(f"stopped run {sanitize(rec.label)}{where} ({res.signal}, {res.seconds:.1f} s)")
    try:
        if rec.ended is None:
            store.update(rec.id, state="stopped", ended=time.time())
    except HistoryError as exc:
        print(f"eagle-tui stop: warning: {exc}", file=sys.stderr)
    return EXIT_STOPPED


def run(args: argparse.Namespace) -> int:
    try:
        if not args.grace >= 0:
            raise ValueError("--grace must be >= 0")
    except ValueError as exc:
        print(f"eagle-tui stop: error: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    return asyncio.run(stop_async(args))


__all__ = ["EXIT_REFUSED", "EXIT_STOPPED", "register", "run"]
