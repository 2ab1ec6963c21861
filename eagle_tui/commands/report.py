"""``eagle-tui report LOG [--json]``: what a finished (or running) server log says.

Reads a file, or ``-`` for stdin, once and in constant memory (see ``model.report``), then prints
a human summary or, with ``--json``, the JSON object other tools rely on. Exit 0 whenever the log
could be read, whatever it shows; 2 for a usage error or an unreadable file, with a one-line
message on stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, BinaryIO, TextIO

from eagle_tui.commands.report_parallel import build_report_parallel
from eagle_tui.model.report import build_report, close, dump

EXIT_OK = 0
EXIT_USAGE = 2


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number: {text!r}")
    return value


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number ≥ 1: {text!r}")
    return int(text)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "report",
        help="summarize a server log: engine, phases, crash and fix, acceptance, tok/s",
        description="Summarize an SGLang or vLLM server log: engine, startup phases, crash "
        "with its root-cause line and a fix hint, speculative settings, acceptance length, "
        "tok/s, EAGLE-3 hidden-state dims and alerts. Reads the file once in constant memory.",
    )
    p.add_argument("log", metavar="LOG", help="log file, or - for standard input")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--baseline", type=_positive, metavar="TOK_S",
                   help="non-speculative tok/s to compare against (adds a below-baseline alert)")
    p.add_argument("--workers", type=_count, metavar="N",
                   help="processes for a big file (default: usable CPUs, at most 12, at least "
                   "8 MiB of the file each, or $EAGLE_TUI_REPORT_WORKERS); 1 reads serially")
    p.add_argument("--debug-rss", action="store_true",
                   help="print the peak memory of the report and its workers to stderr")
    p.set_defaults(func=run)


def _fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def human(report: dict[str, Any], out: TextIO) -> None:
    r = report
    ready = "ready" if r["ready"] else "not ready"
    w = out.write
    w(f"{r['file']}: {r['engine']}, {r['lines']} lines\n")
    w(f"phase: {r['phase']} ({ready})\n")
    for p in r["phases"]:
        w(f"  {p['phase']:<16} line {p['line']:<8} {p['time'] or ''}\n".rstrip() + "\n")
    c = r["crash"]
    if c is None:
        w("crash: none\n")
    else:
        w(f"crash: {c['kind']} at line {c['line']}\n  {c['message']}\n  fix: {c['hint']}\n")
    s = r["speculative"]
    if s is None and r["accept_len"].count:  # only a speculating engine logs accept len
        w("speculative: on (accept len on the stats lines; its settings are not in the log)\n")
    elif s is None:
        w("speculative: not seen in the log\n")
    else:
        parts = [f"{k}={v}" for k, v in s.items() if v is not None]
        w(f"speculative: {', '.join(parts)}\n")
    acc, gen, summ = r["accept_len"], r["gen_throughput"], r["summary"]
    w(f"accept len: {acc.count} values, mean {_fmt(summ['accept_len_mean'])}")
    w(f", last {_fmt(acc.tail[-1])}\n" if acc.count else "\n")
    w(f"gen throughput: {gen.count} values, median {_fmt(summ['gen_throughput_median'], 1)} "
      "tok/s")
    w(f", last {_fmt(gen.tail[-1], 1)}\n" if gen.count else "\n")
    dims = r["hidden_state_dims"]
    w(f"hidden-state dims: {', '.join(map(str, dims)) if dims else '-'}\n")
    alerts = [a for a in r["alerts"] if a["kind"] != "crash"]  # the crash is shown above
    if not alerts:
        w("alerts: none\n")
    for a in alerts:
        w(f"alert [{a['severity']}] {a['kind']}: {a['message']}\n")


def run(args: argparse.Namespace) -> int:
    name: str = args.log
    rss: list[tuple[int, int]] = []
    try:
        if name == "-":
            report = build_report(sys.stdin.buffer, "-", baseline=args.baseline)
        else:
            with open(name, "rb") as f:
                report = build_report_parallel(f, name, baseline=args.baseline,
                                               workers=args.workers, rss=rss)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        print(f"eagle-tui report: cannot read {name}: {reason}", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.json:
            out: BinaryIO = sys.stdout.buffer
            dump(report, out)
            out.flush()
        else:
            human(report, sys.stdout)
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
    print(f"eagle-tui report: peak RSS KiB: self {own}, workers {peaks}, "
          f"sum {own + sum(peaks)}, workers private {private}, "
          f"tree {own + sum(private)}", file=sys.stderr)


__all__ = ["EXIT_OK", "EXIT_USAGE", "human", "register", "run"]
