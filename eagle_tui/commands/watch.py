"""``eagle-tui watch``: run the session and keep printing the live state.

Same sources and the same progress lines as ``wait`` (a line at every phase/health/process
change and every 10 s, a diagnosis when the server crashes, a notice when it is ready), but it
never exits on an answer: it runs until interrupted or until every source has ended. This is the
headless path; on a terminal the dashboard takes over ``watch`` (``commands/dashboard.py``), and
``--headless`` (or stdout not being a TTY) keeps this printing mode.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any, TextIO

from eagle_tui.commands.common import (
    UsageError,
    add_source_args,
    build_session,
    check_source_args,
    health_decides,
)
from eagle_tui.commands.dashboard import add_ui_args, wants_dashboard, watch_dashboard
from eagle_tui.commands.remote import close_transports, open_transports
from eagle_tui.commands.wait import EXIT_USAGE, HEALTH_INTERVAL_S, Progress
from eagle_tui.transport.base import TransportError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "watch",
        help="follow a server and print its live state (startup, health, crashes, GPUs)",
        description="Follow a server and print its state at every change and every 10 s, "
        "with a diagnosis when it crashes. Runs until interrupted.",
    )
    add_source_args(p)
    p.add_argument("--headless", action="store_true",
                   help="print lines instead of the dashboard (the default without a TTY)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--duration", metavar="SECONDS", type=float, default=None,
                   help="stop after this long (default: run until interrupted)")
    add_ui_args(p)
    p.set_defaults(func=run)


async def watch_async(args: argparse.Namespace, out: TextIO) -> int:
    transports = await open_transports(args)  # --ssh hosts, or the local machine
    session = build_session(args, transports, health_interval=HEALTH_INTERVAL_S)
    progress = Progress(out, as_json=args.json, has_url=health_decides(args, transports[0].host),
                        decide=False)
    session.subscribe(progress.on_batch)
    runner = asyncio.create_task(session.run())
    try:
        await asyncio.wait({runner}, timeout=args.duration)
    finally:
        session.stop()
        try:
            await runner
        finally:
            await close_transports(transports)
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        check_source_args(args)
        if args.duration is not None and not args.duration > 0:
            raise UsageError("--duration must be > 0")
    except UsageError as exc:
        print(f"eagle-tui watch: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.duration is None and wants_dashboard(args):  # a terminal: the dashboard
        return watch_dashboard(args)
    try:
        return asyncio.run(watch_async(args, sys.stdout))
    except TransportError as exc:  # an SSH host key refused or authentication failed
        print(f"eagle-tui watch: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


__all__ = ["register", "run"]
