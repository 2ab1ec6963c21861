"""``eagle-tui watch``: follow a server in the dashboard, or keep printing its live state.

Same sources and the same progress lines as ``wait`` (a line at every phase/health/process
change and every 10 s, a diagnosis when the server crashes, a notice when it is ready), but it
never exits on an answer: it runs until interrupted or until every source has ended. On a
terminal the dashboard takes over; ``--headless``, ``--json``, ``--duration`` (or stdout not
being a TTY) keep the printing mode. Both are opened by
:func:`~eagle_tui.assembly.open.open_dashboard` from the command line's spec.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from eagle_tui.assembly.open import EXIT_USAGE, open_dashboard
from eagle_tui.assembly.spec import spec_from_args
from eagle_tui.commands.common import add_source_args, add_ui_args
from eagle_tui.errors import UsageError


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


def run(args: argparse.Namespace) -> int:
    try:
        spec = spec_from_args(args, "watch")
    except UsageError as exc:
        print(f"eagle-tui watch: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return open_dashboard(spec)


__all__ = ["register", "run"]
