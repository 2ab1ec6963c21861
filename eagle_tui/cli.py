"""Command-line entry point: argparse with one module per subcommand.

Each module in ``eagle_tui.commands`` exposes ``register(subparsers)`` which adds its parser and
sets ``func`` to a callable ``(args) -> int`` (the process exit code). A subcommand is listed here
only once it works end to end, so ``eagle-tui --help`` never advertises a stub.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import warnings
from collections.abc import Sequence

import eagle_tui.interrupts  # noqa: F401  (first: a Ctrl-C lost while the rest imports)
from eagle_tui import __version__
from eagle_tui.console import fail, warn
from eagle_tui.errors import EXIT_INTERNAL, EagleError
from eagle_tui.model.boundary.termtext import inert_lines

# Order = order in --help.
COMMANDS: tuple[str, ...] = ("lint", "launch", "stop", "runs", "attach", "wait", "watch", "replay",
                             "bench", "demo", "report", "fleet")


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; keep its one-line message style."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or (``only``) one with just that subcommand registered.

    Importing a subcommand module can be expensive (the dashboard pulls in Textual); ``main``
    registers only the command being run so ``report`` starts fast.
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


def entry() -> None:
    """The ``eagle-tui`` console script and ``python -m eagle_tui``: :func:`main`, then the exit.

    A command that says its process holds nothing the kernel does not release itself (a local
    ``report``: its temporary files and workers are gone when it returns) ends with its streams
    flushed and ``os._exit``: the interpreter's teardown, every module and class freed one by
    one, was a noticeable share of a short report's time. Tests call :func:`main` instead.
    """
    quick: list[bool] = []
    code = main(quick=quick)
    if quick:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # (closed, or its reader gone)
                stream.flush()
        os._exit(code)
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None, *, quick: list[bool] | None = None) -> int:
    """The one boundary every command runs inside (see :func:`_run` for what each outcome is).

    The streams are made safe first (:func:`~eagle_tui.headless.streams.safe_streams`): no
    ``UnicodeEncodeError`` on any locale, and nothing on stderr that a terminal would act on.
    Ctrl-C is 130 wherever it lands, also while a command's modules are still being imported
    (a person who starts a command and thinks better of it at once gets no traceback).
    """
    try:
        from eagle_tui.headless.streams import safe_streams

        with safe_streams():
            return _run(argv, quick)
    except BrokenPipeError:
        # `eagle-tui report x | head`: the reader went away; not an error of ours
        with contextlib.suppress(OSError):
            sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as exc:
        if _by_interrupt(exc):  # (an import's ``__set_name__`` wraps it in a RuntimeError)
            return _interrupted()
        raise
    finally:
        forget_interrupt()


def _by_interrupt(exc: BaseException, depth: int = 8) -> bool:
    """Whether ``exc`` was raised because of a Ctrl-C (one in its cause or context chain)."""
    seen: BaseException | None = exc
    while seen is not None and depth > 0:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
        depth -= 1
    return False


def _interrupted() -> int:
    """Ctrl-C's exit code, the process quiet from here on: what a start cut short leaves to be
    collected (an event loop never closed, a coroutine never awaited) is no news to a person
    who asked it to stop."""
    sys.unraisablehook = lambda _unraisable: None
    warnings.simplefilter("ignore")
    return 130


def forget_interrupt() -> None:
    """Clear CPython's "Ctrl-C went unhandled" mark: set when a KeyboardInterrupt leaves an
    ``exec`` of a string (a record's or dataclass's ``__init__`` being built by an import), it
    makes ``python -m`` kill itself with SIGINT at exit, whatever code we returned. Each such
    ``exec`` starts by clearing it, so an empty one that completes does."""
    exec("")


def _run(argv: Sequence[str] | None, quick: list[bool] | None = None) -> int:
    """Parse and run one command. Outcomes, each with its documented exit code:

    * the command's own code (0 ready/ok, 1 crashed or errors found, 3 timeout, 4 alerts ...);
    * an :class:`EagleError` it did not report itself: one line, exit 2 (usage, input, host);
    * Ctrl-C: 130;
    * anything else is a bug of eagle-tui: one line saying so and :data:`EXIT_INTERNAL` (70),
      never 1, which ``wait`` and ``lint`` give a meaning (set ``EAGLE_TUI_DEBUG=1`` for the
      traceback).

    ``quick`` gets ``True`` appended when the command finished and its ``quick_exit(args)``
    (a parser default) says the process may skip its teardown (:func:`entry`).
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = args_list[0] if args_list else None
    if os.environ.get("EAGLE_TUI_ENGINES"):  # engines from outside the package
        from eagle_tui.commands import plugins

        try:
            plugins.load_engines(os.environ["EAGLE_TUI_ENGINES"])
        except EagleError as exc:
            fail(None, exc)
            return 2
    parser = build_parser(first)
    args = parser.parse_args(args_list)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        rc = func(args)
    except EagleError as exc:  # refused on purpose (a command that did not say so itself)
        fail(args.command, exc)
        return 2
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        raise
    except Exception as exc:  # the boundary: a bug, said in one line with its own exit code
        if _by_interrupt(exc):
            return _interrupted()
        if os.environ.get("EAGLE_TUI_DEBUG"):
            import traceback  # (here: its imports are a cost every command would pay)

            traceback.print_exc()
        warn(inert_lines(f"eagle-tui {args.command}: internal error (a bug in eagle-tui; "
                         f"EAGLE_TUI_DEBUG=1 shows the traceback): {type(exc).__name__}: "
                         f"{_one_line(exc)}"))
        return EXIT_INTERNAL
    quick_exit = getattr(args, "quick_exit", None)
    if quick is not None and quick_exit is not None and quick_exit(args):
        quick.append(True)
    return int(rc)


def _one_line(exc: BaseException, limit: int = 1000) -> str:
    """The message of ``exc`` on one line, at most ``limit`` characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "…"


if __name__ == "__main__":
    entry()
