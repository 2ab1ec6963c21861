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
from typing import Any

from eagle_tui.assembly.containers import resolved
from eagle_tui.assembly.open import EXIT_USAGE, open_dashboard
from eagle_tui.assembly.spec import spec_from_args
from eagle_tui.commands import argtypes
from eagle_tui.commands.common import add_source_args, add_ui_args
from eagle_tui.console import fail
from eagle_tui.errors import EagleError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "watch",
        help="follow a server and print its live state (startup, health, crashes, GPUs)",
        description="Follow a server and print its state at every change and every 10 s, "
        "with a diagnosis when it crashes. Runs until interrupted. With none of --log, --url, "
        "--pid, --container: the SGLang/vLLM servers running on the host (or --ssh DEST) are "
        "found and watched (see `eagle-tui attach`).",
    )
    add_source_args(p)
    p.add_argument("--headless", action="store_true",
                   help="print lines instead of the dashboard (the default without a TTY)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--duration", metavar="SECONDS", type=argtypes.seconds, default=None,
                   help="stop after this long (default: run until interrupted)")
    p.add_argument("--pick", metavar="N", type=argtypes.count, default=None,
                   help="without --log/--url/--pid: which of several discovered servers")
    g = p.add_argument_group("metrics from Prometheus (instead of the server's /metrics)")
    g.add_argument("--prometheus", metavar="URL", default=None,
                   help="read the instance's metrics from this Prometheus (with --instance)")
    g.add_argument("--instance", metavar="INSTANCE", default=None,
                   help="the instance label in Prometheus, e.g. 10.0.0.5:8000; without --url "
                   "readiness comes from Prometheus' up")
    add_ui_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not (args.log or args.url or args.pid or args.prometheus or args.instance
            or args.container):
        # nothing to watch: find the server on the host
        from eagle_tui.commands.attach import attach_discovered

        return attach_discovered(args, command="watch")
    try:
        from eagle_tui.commands.runfigures import refresh_baseline

        refresh_baseline(args)
        spec = resolved(spec_from_args(args, "watch"))
    except EagleError as exc:
        fail("watch", exc)
        return EXIT_USAGE
    from eagle_tui.commands.attach import watched_run

    recorder = watched_run(spec, kind="watched")
    return open_dashboard(spec, subscribers=[recorder.on_batch] if recorder else [])


__all__ = ["register", "run"]
