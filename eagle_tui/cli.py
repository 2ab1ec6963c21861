"""Command-line entry point: argparse with one module per subcommand.

Each module in ``eagle_tui.commands`` exposes ``register(subparsers)`` which adds its parser and
sets ``func`` to a callable ``(args) -> int`` (the process exit code). A subcommand is listed here
only once it works end to end, so ``eagle-tui --help`` never advertises a stub.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from eagle_tui import __version__
from eagle_tui.errors import EagleError

# Order = order in --help.
COMMANDS: tuple[str, ...] = ("lint", "launch", "stop", "runs", "attach", "wait", "watch", "replay",
                             "bench", "demo", "report", "fleet")


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; keep its one-line message style."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or (``only``) one with just that subcommand registered.

    Importing a subcommand module can be expensive (the dashboard pulls in Textual, ~1 s on a
    busy machine); ``main`` registers only the command being run so ``report`` starts fast.
    """
    parser = _Parser(
        prog="eagle-tui",
        description="Watch speculative-decoding LLM servers (SGLang, vLLM): startup phases, "
        "crashes with their cause, live log, GPUs, tok/s and acceptance length.",
    )
    parser.add_argument("--version", action="version", version=f"eagle-tui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in (only,) if only in COMMANDS else COMMANDS:
        module = importlib.import_module(f"eagle_tui.commands.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = args_list[0] if args_list else None
    parser = build_parser(first)
    args = parser.parse_args(args_list)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        rc = func(args)
    except EagleError as exc:  # refused on purpose (a command that did not say so itself)
        print(f"eagle-tui {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `eagle-tui report x | head`: the reader went away; not an error of ours
        sys.stderr.close()
        return 0
    return int(rc)


if __name__ == "__main__":
    raise SystemExit(main())
