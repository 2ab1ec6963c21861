"""``eagle-tui report LOG [--json]``: what a finished (or running) server log says.

Reads a file, or ``-`` for stdin, once and in constant memory (the ``eagle_tui.report``
engine), then prints a human summary or, with ``--json``, the JSON object other tools rely on.
Exit 0 whenever the log could be read, whatever it shows; 2 for a usage error or an unreadable
file, with a one-line message on stderr. This module is only the command: its arguments, and
where the output goes.
"""

from __future__ import annotations

import argparse
import io
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from eagle_tui.commands import argtypes
from eagle_tui.commands.common import add_container_args, add_ssh_args
from eagle_tui.console import fail, say, warn
from eagle_tui.model.boundary.termtext import inert_lines

if TYPE_CHECKING:
    from collections.abc import Sequence

    from eagle_tui.model.containers.inspect import ContainerFacts

EXIT_OK = 0
EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "report",
        help="summarize a server log: engine, phases, crash and fix, acceptance, tok/s",
        description="Summarize an SGLang or vLLM server log: engine, startup phases, crash "
        "with its root-cause line and a fix hint, speculative settings, acceptance length, "
        "tok/s, EAGLE-3 hidden-state dims and alerts. Reads the file once in constant memory.",
    )
    p.add_argument("log", metavar="LOG", type=argtypes.path_text, nargs="?", default=None,
                   help="log file, or - for standard input (or --container NAME)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--baseline", type=argtypes.rate, metavar="TOK_S",
                   help="non-speculative tok/s to compare against (adds a below-baseline alert)")
    p.add_argument("--workers", type=argtypes.whole(1, 1024), metavar="N",
                   help="processes for a big file (default: usable CPUs, at most 12, at least "
                   "8 MiB of the file each, or $EAGLE_TUI_REPORT_WORKERS); 1 reads serially")
    p.add_argument("--bench-results", action="append", default=[], metavar="FILE",
                   type=argtypes.path_text,
                   help="results of sglang.bench_serving --output-file or vllm bench serve "
                   "--save-result: each run beside the log's figures over its time (repeatable)")
    p.add_argument("--debug-rss", action="store_true",
                   help="print the peak memory of the report and its workers to stderr")
    add_container_args(p)
    add_ssh_args(p)
    p.set_defaults(func=run, quick_exit=quick_exit)


def quick_exit(args: argparse.Namespace) -> bool:
    """A report of a local file or stdin leaves nothing to tear down (``cli.entry``); one over
    SSH or from a container keeps Python's exit, which closes its connection politely."""
    return args.ssh is None and args.container is None


def run(args: argparse.Namespace) -> int:
    from eagle_tui.commands.container_log import fetched_log, one_log
    from eagle_tui.errors import EagleError

    try:
        one_log(args.log, args, "LOG")
        if not args.container:
            return _run(args, args.log)
        seen: list[ContainerFacts] = []  # the container's state after its log
        with fetched_log(args, seen) as path:
            return _run(args, str(path), f"container {args.container}", seen)
    except EagleError as exc:
        fail("report", exc)
        return EXIT_USAGE


def _run(args: argparse.Namespace, name: str, shown: str | None = None,
         container: Sequence[ContainerFacts] = ()) -> int:
    """The report of the log file ``name`` (``shown``: what the report calls it; ``container``:
    the state of the container it is the log of, for the crash its end tells)."""
    from pathlib import Path

    from eagle_tui.files import NotRegularFileError, as_utf8, open_log
    from eagle_tui.model.ingest.normalize import sanitize
    from eagle_tui.model.ingest.textenc import note
    from eagle_tui.report.parallel import build_report_parallel

    rss: list[tuple[int, int]] = []
    mark: list[int] = []  # the first bench marker's line, from the report's own pass
    runs = []
    if args.bench_results:  # (the windows' imports otherwise wait until the workers are forked)
        from eagle_tui.commands import report_windows

        try:
            runs = report_windows.load_results(args.bench_results)
        except ValueError as exc:
            fail("report", exc)
            return EXIT_USAGE
    try:
        if name == "-":
            from eagle_tui.report.builder import build_report

            stdin, enc = as_utf8(cast(io.BufferedReader, sys.stdin.buffer))
            report = build_report(cast(BinaryIO, stdin), "-", baseline=args.baseline)
            if enc is not None:
                report["encoding"] = note(enc)
        else:
            # a FIFO would block the open and /dev/zero never ends: regular files only
            f, enc = open_log(name)
            with f:
                if enc is None:
                    report = build_report_parallel(cast(BinaryIO, f), shown or name,
                                                   baseline=args.baseline, workers=args.workers,
                                                   rss=rss, bench_mark=mark)
                else:  # decoded as it is read, in one pass (the workers would cut raw bytes)
                    from eagle_tui.report.builder import build_report

                    report = build_report(cast(BinaryIO, f), shown or name,
                                          baseline=args.baseline)
                    report["encoding"] = note(enc)
        # bench windows: a second pass, only when the log has markers or results were given
        # (they read the file's own bytes: a decoded log's results runs only)
        from eagle_tui.commands import report_windows

        path = None if name == "-" or "encoding" in report else Path(name)
        wins = report_windows.windows(path, runs, mark[0] if mark else None, scanned=True)
    except NotRegularFileError as exc:
        warn(inert_lines(f"eagle-tui report: cannot read {sanitize(str(exc))}"))
        return EXIT_USAGE
    except OSError as exc:
        reason = exc.strerror or str(exc)
        warn(inert_lines(f"eagle-tui report: cannot read {sanitize(name)}: {reason}"))
        return EXIT_USAGE
    if wins:
        report["windows"] = wins
    from eagle_tui.report.output import close, render_text, write_json

    if container:
        import time

        from eagle_tui.commands.container_log import with_container_end

        with_container_end(report, container[0], time.time())
    try:
        if args.json:
            out: BinaryIO = sys.stdout.buffer
            write_json(report, out)
            out.flush()
        else:
            say(inert_lines(render_text(report) + report_windows.render(wins)), newline=False)
            sys.stdout.flush()
    finally:
        close(report)
    if args.debug_rss:
        _print_rss(rss)
    return EXIT_OK


def _print_rss(workers: list[tuple[int, int]]) -> None:
    """Peak RSS (KiB) of this process and of each worker, which a parent's ``wait4`` alone does
    not show.

    ``sum`` adds every peak RSS: pages a forked worker shares with the parent are counted once
    per process, so it overstates. ``tree`` is this process's peak RSS plus each worker's peak
    private memory: every page the tree uses is counted once at most, so it bounds the tree's
    peak from above without that double count.
    """
    import resource  # only here: --debug-rss is for benchmarks

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peaks = [r for r, _ in workers]
    private = [p for _, p in workers]
    warn(inert_lines(f"eagle-tui report: peak RSS KiB: self {own}, workers {peaks}, "
                     f"sum {own + sum(peaks)}, workers private {private}, "
                     f"tree {own + sum(private)}"))


__all__ = ["EXIT_OK", "EXIT_USAGE", "register", "run"]
