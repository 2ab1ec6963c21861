"""``eagle-tui lint [--ssh DEST] [--json] [--fix] -- CMD...``: check a launch command before
it runs.

Exit codes: 0 no errors (warnings and infos allowed), 1 errors found, 2 usage (not an SGLang
or vLLM command, a bad option, an SSH host that cannot be reached or is refused). With
``--fix``: the command with every known remedy applied (stdout: one shell-quoted line, or the
argv in ``--json``; what changed on stderr), 0 when no finding with a remedy is left.
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
from eagle_tui.model.boundary.shellwords import join
from eagle_tui.model.boundary.termtext import Inert, inert_lines
from eagle_tui.model.ingest.normalize import sanitize
from eagle_tui.model.launching.cmdline import (
    CommandError,
    ParsedCommand,
    launch_profile,
    parse_command,
)
from eagle_tui.model.launching.lint import Finding, Fixed, LintResult, fix, lint

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
    p.add_argument("--fix", action="store_true",
                   help="print the command with the lint's known fixes applied (one "
                   "shell-quoted line; with --json the argv); exit 0 when none is left")
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
        "findings": [finding_dict(f) for f in res.findings],
        "errors": res.count("error"),
        "warnings": res.count("warning"),
        "infos": res.count("info"),
    }


def finding_dict(f: Finding) -> dict[str, Any]:
    return {"level": f.level, "code": f.code, "message": f.message, "flag": f.flag,
            "fix": f.fix, "remedy": f.remedy.describe() if f.remedy else None}


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
    fixed: tuple[Fixed, ParsedCommand, LintResult] | None = None
    try:
        await connect_one(transport)
        facts = await gather(cmd, transport, cwd=args.cwd)
        res = lint(cmd, facts)
        if args.fix:  # the fixed command, linted again on the same host
            tables = load_tables()
            done = fix(cmd, res, tables[cmd.engine])
            again = parse_command(done.words, tables)
            fixed = done, again, lint(again, await gather(again, transport, cwd=args.cwd))
    except (TransportError, TimeoutError) as exc:
        warn(inert_lines(f"eagle-tui lint: error: {transport.host}: {exc or 'timed out'}"))
        return EXIT_USAGE
    finally:
        await transport.close()
    if fixed is not None:
        return print_fixed(*fixed, json_out=args.json, out=out)
    if args.json:
        json.dump(result_dict(cmd, res), out, ensure_ascii=True, default=str)
        say(Inert(""), out)
    else:
        print_text(cmd, res, out, facts.host)
    return EXIT_OK if res.ok else EXIT_ERRORS


def print_fixed(done: Fixed, cmd: ParsedCommand, res: LintResult, *, json_out: bool,
                out: TextIO) -> int:
    """``--fix``: the fixed command on ``out``, what changed and what is left on stderr."""
    left = [f for f in res.findings if f.remedy is not None]
    if json_out:
        json.dump({"argv": done.words, "command": join(done.words),
                   "fixed": [finding_dict(f) for f in done.applied],
                   "left": [finding_dict(f) for f in left], **result_dict(cmd, res)},
                  out, ensure_ascii=True, default=str)
        say(Inert(""), out)
    else:
        for f in done.applied:
            warn(inert_lines(f"eagle-tui lint: fixed {f.code}: {sanitize(f.remedy.describe())}"
                             if f.remedy else f.code))
        for f in res.findings:
            if f.level == "error":
                warn(inert_lines(f"eagle-tui lint: left ({f.code}): {sanitize(f.message)}"))
        say(sanitize(join(done.words)), out)
    return EXIT_OK if not left else EXIT_ERRORS


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


__all__ = ["EXIT_ERRORS", "EXIT_OK", "EXIT_USAGE", "finding_dict", "print_fixed", "register",
           "result_dict", "run"]
