"""``eagle-tui replay FILE``: a recorded session (``--record``) or a finished raw log, replayed.

On a terminal the replay plays through the dashboard, which then stays open on the final state
(phases, the crash banner, the log, the alerts) until ``q``; ``--speed`` paces a record file at
its recorded timing (``1`` = real time). Without a terminal, or with ``--headless``/``--json``,
it prints the same progress lines and crash diagnosis as ``watch`` and exits: 0, or 1 when the
replayed server crashed (so a script can ask "did that run crash?").

The source is :class:`~eagle_tui.sources.replay.ReplaySource`; a raw log's older lines go
through the parser's fast path and only the last ``--max-lines`` are kept as text, so opening a
million-line log draws the first frame at once.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from eagle_tui.commands.common import positive_float
from eagle_tui.commands.dashboard import (
    EXIT_USAGE,
    add_ui_args,
    ui_config_from_args,
    wants_dashboard,
)
from eagle_tui.session import Session
from eagle_tui.sources.replay import ReplaySource

if TYPE_CHECKING:
    from eagle_tui.ui.config import UiConfig

EXIT_OK = 0
EXIT_CRASHED = 1


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "replay",
        help="play a recorded session or a finished server log through the dashboard",
        description="Replay FILE (a JSON-lines record written by --record, or a raw SGLang/vLLM "
        "log) through the dashboard, or print its progress lines without a terminal.",
    )
    p.add_argument("file", metavar="FILE", type=Path, help="record file or raw server log")
    p.add_argument("--kind", choices=("auto", "record", "log"), default="auto",
                   help="what FILE is (default: detected from its first line)")
    p.add_argument("--speed", type=positive_float, default=None,
                   help="pace a record at its recorded timing times SPEED (default: at once)")
    p.add_argument("--headless", action="store_true",
                   help="print progress lines instead of the dashboard (default without a TTY)")
    p.add_argument("--json", action="store_true", help="headless: one JSON object per line")
    add_ui_args(p)
    p.set_defaults(func=run)


def make_session(args: argparse.Namespace, config: UiConfig) -> Session:
    source = ReplaySource(args.file, kind=args.kind, speed=args.speed,
                          visible_lines=config.max_lines)
    # the recorded Tick events carry the recorded clock; a live ticker would mix in today's
    return Session([source], tick_interval=None)


async def replay_headless(session: Session, out: TextIO, as_json: bool) -> int:
    from eagle_tui.commands.wait import Progress

    progress = Progress(out, as_json=as_json, has_url=False, decide=False)
    session.subscribe(progress.on_batch)
    state = await session.run()
    return EXIT_CRASHED if state.crash is not None else EXIT_OK


def run(args: argparse.Namespace) -> int:
    from eagle_tui.ui.config import ConfigError

    if not args.file.is_file():
        print(f"eagle-tui replay: error: {args.file}: no such file", file=sys.stderr)
        return EXIT_USAGE
    try:
        config = ui_config_from_args(args)
    except ConfigError as exc:
        print(f"eagle-tui replay: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    session = make_session(args, config)
    if not wants_dashboard(args):
        return asyncio.run(replay_headless(session, sys.stdout, args.json))
    from eagle_tui.commands.dashboard import run_app
    from eagle_tui.ui.app_factory import build_app
    from eagle_tui.ui.session_thread import ThreadedSession, session_opener

    threaded = ThreadedSession(session_opener(session))
    try:
        app = build_app(config, session=threaded, source_label=f"replay {args.file.name}")
    except ConfigError as exc:
        print(f"eagle-tui replay: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    threaded.start()
    return run_app(app, threaded)


__all__ = ["make_session", "register", "replay_headless", "run"]
