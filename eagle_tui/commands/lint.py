"""``eagle-tui lint [--ssh DEST] [--json] -- CMD...``: check a launch command before it runs.

Exit codes: 0 no errors (warnings and infos allowed), 1 errors found, 2 usage (not an SGLang
or vLLM command, a bad option, an SSH host that cannot be reached or is refused).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict
from typing import Any, TextIO

from eagle_tui.assembly.remote import connect_one, one_transport
from eagle_tui.assembly.spec import ssh_spec_from_args
from eagle_tui.commands import argtypes
from eagle_tui.commands.common import add_ssh_args
from eagle_tui.console import say, warn
from eagle_tui.model.boundary.termtext import Inert, inert_lines
from eagle_tui.model.ingest.normalize import sanitize
from eagle_tui.model.launching.cmdline import (
    CommandError,
    ParsedCommand,
    launch_profile,
    parse_command,
)
from eagle_tui.model.launching.lint import LintResult, lint

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2
_MARK = {"error": "error  ", "warning": "warning", "info": "info   "}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "lint", help="check an SGLang/vLLM launch command before running it",
        description="Parse an SGLang or vLLM launch command the way the engine's argparse "
        "would and check it against the model's and draft's config.json, the port, and the "
        "GPUs of the host it will run on (locally or over --ssh). Exit codes: 0 no errors, "
        "1 errors found, 2 usage.",
        epilog="example: eagle-tui lint -- python -m sglang.launch_server --model-path M "
        "--speculative-algorithm EAGLE --speculative-draft-model-path D")
    p.add_argument("--json", action="store_true", help="one JSON object (stable keys)")
    p.add_argument("--cwd", metavar="DIR", type=argtypes.path_text, default=None,
                   help="folder that relative model paths are relative to (default: the "
                   "current folder locally, the login folder over SSH)")
    add_ssh_args(p)
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD...",
                   help="the launch command (after --), or one quoted string")
    p.set_defaults(func=run)


def result_dict(cmd: ParsedCommand, res: LintResult) -> dict[str, Any]:
    """The ``--json`` contract: engine, flags read, plan, findings and counts."""
    return {
        "engine": res.engine,
        "entry": res.entry,
        "flag_table": f"{res.engine}-{res.table_version}",
        "flags": {g.spec.dest: g.value for g in cmd.given},
        "positionals": list(cmd.positionals),
        "speculative": {k: v for k, v in asdict(res.plan).items()},
        "expected_hidden_dim": res.expected_hidden,
        "findings": [{"level": f.level, "code": f.code, "message": f.message, "flag": f.flag,
                      "fix": f.fix} for f in res.findings],
        "errors": res.count("error"),
        "warnings": res.count("warning"),
        "infos": res.count("info"),
    }


def print_text(cmd: ParsedCommand, res: LintResult, out: TextIO, host: str = "") -> None:
    where = f" on {host}" if host else ""
    label = launch_profile(res.engine).label
    say(sanitize(f"{label} command ({res.entry}){where}; flags of {label} {res.table_version}"),
        out)
    plan = res.plan
    if plan.algorithm:
        draft = f", draft {plan.draft}" if plan.draft else ""
        say(sanitize(f"  speculative: {plan.algorithm}{draft}"), out)
    else:
        say(inert_lines("  speculative: off"), out)
    for f in res.findings:
        say(inert_lines(f"  {_MARK[f.level]} {sanitize(f.message)}"), out)
        if f.fix:
            say(inert_lines(f"           fix: {sanitize(f.fix)}"), out)
    n_err, n_warn = res.count("error"), res.count("warning")
    say(inert_lines(f"{n_err} error{'s' * (n_err != 1)}, "
                    f"{n_warn} warning{'s' * (n_warn != 1)}"), out)


async def lint_async(args: argparse.Namespace, words: list[str], out: TextIO) -> int:
    from eagle_tui.probe.facts import gather
    from eagle_tui.probe.tables import load_tables
    from eagle_tui.transport.base import TransportError

    try:
        cmd = parse_command(words, load_tables())
    except CommandError as exc:
        warn(inert_lines(f"eagle-tui lint: error: {exc}"))
        return EXIT_USAGE
    transport = one_transport(ssh_spec_from_args(args))
    try:
        await connect_one(transport)
        facts = await gather(cmd, transport, cwd=args.cwd)
    except (TransportError, TimeoutError) as exc:
        warn(inert_lines(f"eagle-tui lint: error: {transport.host}: {exc or 'timed out'}"))
        return EXIT_USAGE
    finally:
        await transport.close()
    res = lint(cmd, facts)
    if args.json:
        json.dump(result_dict(cmd, res), out, ensure_ascii=True, default=str)
        say(Inert(""), out)
    else:
        print_text(cmd, res, out, facts.host)
    return EXIT_OK if res.ok else EXIT_ERRORS


def run(args: argparse.Namespace) -> int:
    words = list(args.cmd)
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        warn(inert_lines("eagle-tui lint: error: no command given (eagle-tui lint -- CMD...)"))
        return EXIT_USAGE
    try:
        one_transport(ssh_spec_from_args(args))  # the SSH options are checked before parsing
    except ValueError as exc:
        warn(inert_lines(f"eagle-tui lint: error: {exc}"))
        return EXIT_USAGE
    return asyncio.run(lint_async(args, words, sys.stdout))


__all__ = ["EXIT_ERRORS", "EXIT_OK", "EXIT_USAGE", "register", "result_dict", "run"]
