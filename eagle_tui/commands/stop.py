"""``eagle-tui stop RUN [--yes] [--grace S] [--keep]``: stop every process of a run eagle-tui
launched (a container's run: ``CLI stop -t GRACE``, then ``CLI rm`` unless ``--keep``).

The run's processes are those that carry its launch token, wherever they moved (a ``setsid``
daemon, workers left by an exited leader): TERM to each, KILL after ``--grace`` seconds to
those still there, re-scanning for processes forked meanwhile (:mod:`eagle_tui.launch.stopping`).
A process without the token is never signalled, nor a pid reused since the scan. Before it
signals, one bounded ``/metrics`` scrape (and the log) give the run its figures over its whole
life (:mod:`eagle_tui.commands.runfigures`). Exit 0 when
none of the run's processes is left, 1 when some survived, 2 refused, usage or unreachable.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import replace
from typing import Any

from eagle_tui.assembly.remote import connect_one, one_transport
from eagle_tui.assembly.spec import ssh_spec_from_args
from eagle_tui.commands import argtypes
from eagle_tui.commands.common import add_ssh_args
from eagle_tui.console import fail, say, warn
from eagle_tui.launch.members import GRACE_MAX_S
from eagle_tui.model.boundary.termtext import inert
from eagle_tui.model.ingest.normalize import sanitize

EXIT_STOPPED = 0
EXIT_LEFT = 1
EXIT_REFUSED = 2


# --grace through the one argument-type layer (strict numbers), bounded as launch checks it
grace_seconds = argtypes.number(0.0, GRACE_MAX_S, above=True, what="a number of seconds")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "stop", help="stop a launched run (TERM, then KILL after a grace period)",
        description="Stop a run that eagle-tui launched: TERM to every process that carries its "
        "launch token (wherever it moved: setsid daemons, workers of an exited leader), KILL "
        "after --grace seconds. A process without the token is never signalled. A launched "
        "container (`launch -- docker run ...`) is stopped with `docker stop -t GRACE` (podman: "
        "the CLI it was started with) and removed (`rm`) unless --keep; one already "
        "gone is said so (exit 0). RUN is an "
        "id, a name, `last` or `last~N`. Exit codes: 0 none of the run's processes left, "
        "1 some survived KILL, 2 refused, usage or host unreachable.")
    p.add_argument("run", metavar="RUN")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument("--grace", metavar="SECONDS", type=grace_seconds, default=10.0,
                   help="seconds between TERM and KILL, > 0 and at most 3600 (default 10)")
    p.add_argument("--keep", action="store_true",
                   help="a container's run: keep the stopped container (default: removed)")
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
    from eagle_tui.launch.plan import handle_of
    from eagle_tui.transport.base import TransportError

    try:
        store = RunStore()
        rec = store.get(args.run)
        handle = handle_of(rec)
    except (HistoryError, ValueError) as exc:
        fail("stop", exc)
        return EXIT_REFUSED
    if rec.kind != "launched":
        warn(inert(f"eagle-tui stop: refused: run {sanitize(rec.label)} was not launched by "
              "eagle-tui (it was only watched): stop it where it was started"))
        return EXIT_REFUSED
    if not rec.token:
        warn(inert(f"eagle-tui stop: refused: run {sanitize(rec.label)} has no launch token "
              "recorded: no process can be told to be its own"))
        return EXIT_REFUSED
    where = f" on {rec.host}" if rec.host else ""
    from_record = bool(rec.host and not args.ssh)
    if from_record:
        args.ssh = [rec.host]  # the host it was launched on (--ssh overrides: an alias)
    try:
        spec = ssh_spec_from_args(args)
        # the history is a file anyone with the account may have edited: its host passes the
        # grammar gate and its SSH config lookup runs no ``Match exec`` (as a fleet label's)
        transport = one_transport(replace(spec, outside=True) if from_record else spec)
    except ValueError as exc:
        fail("stop", exc)
        return EXIT_REFUSED
    what = f"its container {rec.container_text('name')}" if rec.container else \
        "every process that carries its token"
    question = (f"Stop run {sanitize(rec.label)}{where} ({sanitize(what)}; "
                f"{sanitize(rec.command or '')[:120]})?")
    if not args.yes and not _confirm(question):
        warn(inert("eagle-tui stop: not confirmed (use --yes to stop without asking)"))
        return EXIT_REFUSED
    from eagle_tui.commands.runfigures import final_figures

    metrics: dict[str, Any] | None = None
    try:
        await connect_one(transport)
        if rec.ended is None:  # its figures first: the server's own counters over its life
            metrics, note = await final_figures(transport, rec)
            if note:
                warn(inert(f"eagle-tui stop: figures of run {sanitize(rec.label)}: "
                           f"{sanitize(note)}"))
        res = await handle.stop(transport, grace=args.grace, keep=bool(getattr(args, "keep",
                                                                                False)))
    except (TransportError, TimeoutError) as exc:  # ScanError is one
        fail("stop", exc or "timed out")
        return EXIT_REFUSED
    finally:
        await transport.close()
    if res.note:
        warn(inert(f"eagle-tui stop: {sanitize(res.note)}"))
    done = sanitize(res.text)
    if res.left:
        warn(inert(f"eagle-tui stop: run {sanitize(rec.label)}{where} not stopped: {done}"))
        return EXIT_LEFT
    if not res.ran:
        say(inert(f"run {sanitize(rec.label)}{where}: {done}"))
    else:
        say(inert(f"stopped run {sanitize(rec.label)}{where}: {done}"))
    try:
        if rec.ended is None:
            figures: dict[str, Any] = {"metrics": metrics} if metrics else {}
            if rec.state == "crashed":
                store.update(rec.id, **figures)
            else:
                store.update(rec.id, state="stopped", ended=time.time(), **figures)
    except HistoryError as exc:
        warn(inert(f"eagle-tui stop: warning: {exc}"))
    return EXIT_STOPPED


def run(args: argparse.Namespace) -> int:
    return asyncio.run(stop_async(args))


__all__ = ["EXIT_LEFT", "EXIT_REFUSED", "EXIT_STOPPED", "grace_seconds", "register", "run"]
