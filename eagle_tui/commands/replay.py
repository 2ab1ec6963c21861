"""``eagle-tui replay FILE``: a recorded session (``--record``) or a finished raw log, replayed.

On a terminal the replay plays through the dashboard, which then stays open on the final state
(phases, the crash banner, the log, the alerts) until ``q``; ``--speed`` paces a record file at
its recorded timing (``1`` = real time). Without a terminal, or with ``--headless``/``--json``,
it prints the same progress lines and crash diagnosis as ``watch`` and exits: 0, or 1 when the
replayed server crashed (so a script can ask "did that run crash?").

The source is :class:`~eagle_tui.sources.replay.ReplaySource` (built from the spec's
:class:`~eagle_tui.assembly.spec.ReplaySpec` by :func:`~eagle_tui.assembly.build.build_session`);
a raw log's older lines go through the parser's fast path and only the last ``--max-lines`` are
kept as text, so opening a million-line log draws the first frame at once.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from eagle_tui.assembly.open import EXIT_USAGE, open_dashboard
from eagle_tui.assembly.spec import REPLAY_KINDS, SshSpec, spec_from_args
from eagle_tui.commands import argtypes
from eagle_tui.commands.common import add_container_args, add_ssh_args, add_ui_args
from eagle_tui.console import fail
from eagle_tui.errors import EagleError
from eagle_tui.headless.progress import EXIT_CRASHED, EXIT_READY

EXIT_OK = EXIT_READY


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "replay",
        help="play a recorded session or a finished server log through the dashboard",
        description="Replay FILE (a JSON-lines record written by --record, or a raw SGLang/vLLM "
        "log) through the dashboard, or print its progress lines without a terminal.",
    )
    p.add_argument("file", metavar="FILE", type=argtypes.any_path, nargs="?", default=None,
                   help="record file or raw server log (or --container NAME)")
    p.add_argument("--kind", choices=REPLAY_KINDS, default="auto",
                   help="what FILE is (default: detected from its first line)")
    p.add_argument("--speed", type=argtypes.rate, default=None,
                   help="pace a record at its recorded timing times SPEED (default: at once)")
    p.add_argument("--headless", action="store_true",
                   help="print progress lines instead of the dashboard (default without a TTY)")
    p.add_argument("--json", action="store_true", help="headless: one JSON object per line")
    add_ui_args(p)
    add_container_args(p)
    add_ssh_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from eagle_tui.commands.container_log import fetched_log, one_log

    try:
        one_log(args.file, args, "FILE")
        if not args.container:
            return open_dashboard(spec_from_args(args, "replay"))
        with fetched_log(args) as path:  # the container's log so far, replayed as a raw log
            args.file, args.kind = path, "log"
            spec = spec_from_args(args, "replay")
            return open_dashboard(replace(spec, ssh=SshSpec(),
                                          label=f"replay container {args.container}"))
    except EagleError as exc:
        fail("replay", exc)
        return EXIT_USAGE


__all__ = ["EXIT_CRASHED", "EXIT_OK", "register", "run"]
