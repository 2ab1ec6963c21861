"""``eagle-tui lint [--ssh DEST] [--json] [--fix] -- CMD...`` (or ``--compose FILE [--service
NAME]``): check a launch command before it runs, also inside a ``docker``/``podman run``.

Exit codes: 0 no errors (warnings and infos allowed), 1 errors found, 2 usage (not an SGLang
or vLLM command, a bad option, an SSH host that cannot be reached or is refused). With
``--fix``: the command with every known remedy applied (stdout: one shell-quoted line, or the
argv in ``--json``; what changed on stderr), 0 when no finding with a remedy is left.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from dataclasses import asdict
from typing import Any, TextIO

from eagle_tui.assembly.remote import connect_one, one_transport
from eagle_tui.assembly.spec import ssh_spec_from_args
from eagle_tui.commands import argtypes
from eagle_tui.commands.common import add_ssh_args
from eagle_tui.commands.lint_container import (
    Reading,
    again,
    container_dict,
    container_line,
    fixed_text,
    is_container_finding,
    read_compose_service,
    read_words,
    relint_words,
)
from eagle_tui.console import fail, say, warn
from eagle_tui.model.boundary.loaders import LoadError
from eagle_tui.model.boundary.shellwords import join
from eagle_tui.model.boundary.termtext import Inert, inert_lines
from eagle_tui.model.ingest.normalize import sanitize
from eagle_tui.model.launching.cmdline import CommandError, ParsedCommand, launch_profile
from eagle_tui.model.launching.container_checks import lint_container
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
        "--speculative-algorithm EAGLE --speculative-draft-model-path D; a container's: "
        "eagle-tui lint -- docker run --gpus all -p 8000:8000 vllm/vllm-openai --model M")
    p.add_argument("--json", action="store_true", help="one JSON object (stable keys)")
    p.add_argument("--fix", action="store_true",
                   help="print the command with the lint's known fixes applied (one "
                   "shell-quoted line; with --json the argv); exit 0 when no fixable finding "
                   "is left (errors with no known fix are listed and counted all the same)")
    p.add_argument("--cwd", metavar="DIR", type=argtypes.path_text, default=None,
                   help="folder that relative model paths are relative to (default: the "
                   "current folder locally, the login folder over SSH)")
    p.add_argument("--compose", metavar="FILE", type=argtypes.path_text, default=None,
                   help="lint a compose file's service (its command, image, ports, GPUs, "
                   "shared memory and volumes) instead of a command")
    p.add_argument("--service", metavar="NAME", default=None,
                   help="the compose service (default: the one that starts a server)")
    add_ssh_args(p)
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD...",
                   help="the launch command (after --), or one quoted string")
    p.set_defaults(func=run)


def result_dict(cmd: ParsedCommand, res: LintResult,
                reading: Reading | None = None) -> dict[str, Any]:
    """The ``--json`` contract: engine, flags read, plan, findings and counts (and the
    container, when the command runs in one)."""
    out = {
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
    if reading is not None and reading.container is not None:
        out["container"] = container_dict(reading)
    return out


def finding_dict(f: Finding) -> dict[str, Any]:
    return {"level": f.level, "code": f.code, "message": f.message, "flag": f.flag,
            "fix": f.fix, "remedy": f.remedy.describe() if f.remedy else None,
            "part": "container" if is_container_finding(f) else "engine"}


def print_text(cmd: ParsedCommand, res: LintResult, out: TextIO, host: str = "",
               reading: Reading | None = None) -> None:
    where = f" on {host}" if host else ""
    label = launch_profile(res.engine).label
    say(sanitize(f"{label} command ({res.entry}){where}; flags of {label} {res.table_version}"),
        out)
    line = container_line(reading) if reading is not None else None
    if line:
        say(sanitize(line), out)
    plan = res.plan
    if plan.algorithm:
        draft = f", draft {plan.draft}" if plan.draft else ""
        say(sanitize(f"  speculative: {plan.algorithm}{draft}"), out)
    else:
        say(inert_lines("  speculative: off"), out)
    for f in res.findings:
        part = "[container] " if is_container_finding(f) else ""
        say(inert_lines(f"  {_MARK[f.level]} {part}{sanitize(f.message)}"), out)
        if f.fix:
            say(inert_lines(f"           fix: {sanitize(f.fix)}"), out)
    n_err, n_warn = res.count("error"), res.count("warning")
    say(inert_lines(f"{n_err} error{'s' * (n_err != 1)}, "
                    f"{n_warn} warning{'s' * (n_warn != 1)}"), out)


async def lint_async(args: argparse.Namespace, words: list[str], out: TextIO) -> int:
    from eagle_tui.probe.container_facts import gather_container
    from eagle_tui.probe.facts import gather
    from eagle_tui.probe.tables import load_tables
    from eagle_tui.transport.base import TransportError

    tables = load_tables()
    try:
        reading = read_compose_service(args.compose, args.service, tables) if args.compose \
            else read_words(words, tables)
    except (CommandError, LoadError) as exc:
        fail("lint", exc)
        return EXIT_USAGE
    transport = one_transport(ssh_spec_from_args(args))

    async def check(r: Reading) -> tuple[LintResult, str]:
        if r.container is None:
            facts = await gather(r.cmd, transport, cwd=args.cwd)
            return lint(r.cmd, facts), facts.host
        facts, cfacts = await gather_container(r.container, transport, cwd=args.cwd)
        return lint_container(r.container, facts, cfacts), facts.host

    fixed: tuple[Fixed, Reading, LintResult] | None = None
    try:
        await connect_one(transport)
        res, host = await check(reading)
        if args.fix:  # the fixed command, linted again on the same host
            done = fix(reading.cmd, res, tables[reading.cmd.engine])
            whole, run = relint_words(reading, done.words)
            after = again(reading, run, whole, tables)
            fixed = dataclasses.replace(done, words=whole), after, (await check(after))[0]
    except (TransportError, TimeoutError) as exc:
        fail("lint", f"{transport.host}: {exc or 'timed out'}")
        return EXIT_USAGE
    finally:
        await transport.close()
    if fixed is not None:
        return print_fixed(*fixed, json_out=args.json, out=out)
    if args.json:
        json.dump(result_dict(reading.cmd, res, reading), out, ensure_ascii=True, default=str)
        say(Inert(""), out)
    else:
        print_text(reading.cmd, res, out, host, reading)
    return EXIT_OK if res.ok else EXIT_ERRORS


def print_fixed(done: Fixed, reading: Reading, res: LintResult, *, json_out: bool,
                out: TextIO) -> int:
    """``--fix``: the fixed command on ``out`` (a compose service's: its ``command:`` line),
    what changed and what is left on stderr."""
    cmd = reading.cmd
    left = [f for f in res.findings if f.remedy is not None]
    compose = fixed_text(reading, done.words)
    if json_out:
        json.dump({"argv": done.words, "command": compose or join(done.words),
                   "fixed": [finding_dict(f) for f in done.applied],
                   "left": [finding_dict(f) for f in left], **result_dict(cmd, res, reading)},
                  out, ensure_ascii=True, default=str)
        say(Inert(""), out)
    else:
        for f in done.applied:
            warn(inert_lines(f"eagle-tui lint: fixed {f.code}: {sanitize(f.remedy.describe())}"
                             if f.remedy else f.code))
        for f in res.findings:  # (an error without a fix is left too, but --fix did its part)
            if f.level == "error":
                how = "left" if f.remedy is not None else "left without a known fix"
                warn(inert_lines(f"eagle-tui lint: {how} ({f.code}): {sanitize(f.message)}"))
        say(sanitize(compose or join(done.words)), out)
    return EXIT_OK if not left else EXIT_ERRORS


def run(args: argparse.Namespace) -> int:
    words = list(args.cmd)
    if words and words[0] == "--":
        words = words[1:]
    if args.compose and words:
        fail("lint", "give a command or --compose FILE, not both")
        return EXIT_USAGE
    if args.service and not args.compose:
        fail("lint", "--service needs --compose FILE")
        return EXIT_USAGE
    if not words and not args.compose:
        fail("lint", "no command given (eagle-tui lint -- CMD..., or --compose FILE)")
        return EXIT_USAGE
    try:
        one_transport(ssh_spec_from_args(args))  # the SSH options are checked before parsing
    except ValueError as exc:
        fail("lint", exc)
        return EXIT_USAGE
    return asyncio.run(lint_async(args, words, sys.stdout))


__all__ = ["EXIT_ERRORS", "EXIT_OK", "EXIT_USAGE", "finding_dict", "print_fixed", "register",
           "result_dict", "run"]
