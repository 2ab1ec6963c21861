"""Parse an engine's launch command the way the engine's own argparse would.

A lint that reads flags differently from the engine is worse than none: ``--speculative-algo
EAGLE`` *is* ``--speculative-algorithm EAGLE`` to SGLang (argparse accepts any unambiguous
prefix), ``--speculative_config`` is ``--speculative-config`` to vLLM (its parser turns
underscores into dashes), and ``--speculative-config.method eagle3`` sets one key of that JSON.
So this module re-implements exactly the parts of argparse that decide *which flag a token is*
and *which tokens are its value*, driven by a :class:`FlagTable` dumped from the installed
engine's own parser (``eagle_tui/data/flags/``; see ``tests/realserver/dump_flags.py``, or given
inline by the engine's profile). Which engine a command starts is asked of the registered
profiles' entry points (``engines/<name>/launch.py``), never decided here by name.

Pure: no I/O. The tables are loaded by ``eagle_tui.probe.tables``. Work is bounded: the command
is at most :data:`MAX_TOKENS` tokens of at most :data:`MAX_TOKEN` characters each (longer
input is cut and reported), and JSON values are parsed only up to :data:`MAX_JSON` characters.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from eagle_tui.errors import UsageError
from eagle_tui.model.boundary import shellwords
from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.engines import EngineProfile, profile_of, profiles
from eagle_tui.model.engines.facets.launch import SERVE
from eagle_tui.model.events import Engine
from eagle_tui.model.launching.flags import (
    MAX_JSON,
    FlagSpec,
    FlagTable,
    Given,
    ParsedCommand,
    Problem,
    as_json,
    json_or_text,
)

MAX_TOKENS = 2_000
MAX_TOKEN = 64_000

#: Programs that run the next word as the command (``nohup``, ``setsid``, ...), with how many
#: of their own option words to skip when one of these options is seen.
_WRAPPERS: dict[str, dict[str, int]] = {
    "nohup": {}, "setsid": {"-f": 0, "-w": 0, "--fork": 0, "--wait": 0}, "exec": {},
    "time": {"-p": 0}, "stdbuf": {"-o": 1, "-e": 1, "-i": 1}, "nice": {"-n": 1},
    "ionice": {"-c": 1, "-n": 1}, "taskset": {"-c": 0}, "numactl": {}, "env": {"-i": 0, "-u": 1},
    "sudo": {"-E": 0, "-u": 1}, "chrt": {},
}
_ENV_WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*=")  # (lookbehind: linear search)
_SHELL_STOP = frozenset({">", ">>", "2>", "2>>", "&>", "&", "|", "||", "&&", ";", "2>&1", "1>"})
_PYTHON = re.compile(r"(?:^|/)python(?:\d+(?:\.\d+)*)?$")
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class CommandError(UsageError):
    """Not a launch command of a known engine (the lint cannot say anything about it)."""


def split_command(argv: list[str] | str) -> list[str]:
    """One string (pasted from a shell) or an argv list, as a bounded list of words."""
    if isinstance(argv, str):
        try:
            words = shellwords.split(argv[: MAX_TOKENS * 64])
        except ValueError as exc:  # an unclosed quote
            raise CommandError(f"cannot split the command: {exc}") from None
    else:
        words = list(argv)
        if len(words) == 1 and " " in words[0].strip():
            return split_command(words[0])
    return words[:MAX_TOKENS]


def find_engine(words: list[str]) -> tuple[Engine, str, int, list[tuple[str, str]]]:
    """Which engine the words start, how, where its arguments begin, and the leading env."""
    env: list[tuple[str, str]] = []
    i = 0
    n = len(words)
    while i < n:
        w = words[i]
        if _ENV_WORD.match(w):
            key, _, value = w.partition("=")
            env.append((key, value))
            i += 1
            continue
        base = w.rsplit("/", 1)[-1]
        if base in _WRAPPERS:
            i += 1
            opts = _WRAPPERS[base]
            while i < n and words[i].startswith("-"):
                i += 1 + opts.get(words[i], 0)
            if base in ("numactl", "chrt", "taskset"):  # their options may take values
                while i < n and not _looks_like_program(words[i]):
                    i += 1
            continue
        if _PYTHON.search(w):
            j = i + 1
            while j < n and words[j].startswith("-") and words[j] != "-m":
                j += 2 if words[j] in ("-X", "-W") else 1
            if j + 1 < n and words[j] == "-m":
                found = _module_entry(words[j + 1], j + 2 < n and words[j + 2] == SERVE)
                if found is not None:
                    engine, entry, served = found
                    return engine, entry, j + 3 if served else j + 2, env
            # a console script as /proc shows it: its shebang's python, then the script's path
            # (``.../bin/python3 .../bin/SCRIPT serve ...`` is what ``SCRIPT serve ...`` runs)
            script = words[j].rsplit("/", 1)[-1] if j < n else ""
            by_script = _script_engine(script) if j + 1 < n and words[j + 1] == SERVE else None
            if by_script is not None:
                return by_script, f"{script} {SERVE}", j + 2, env
            raise CommandError(f"not an {engine_labels()} launch command ({w} does not run "
                               f"{_either(_modules_named())})")
        by_script = _script_engine(base) if i + 1 < n and words[i + 1] == SERVE else None
        if by_script is not None:
            return by_script, f"{base} {SERVE}", i + 2, env
        raise CommandError(
            f"not an {engine_labels()} launch command (starts with {w!r}; "
            f"expected {_either(f'`{e} ...`' for p in profiles() for e in p.launch.examples())})")
    raise CommandError("empty command")


def _module_entry(module: str, serve: bool) -> tuple[Engine, str, bool] | None:
    """The engine ``python -m module`` starts, its entry as shown, and whether ``serve`` is
    the subcommand (then a word of the command, not one of the engine's arguments)."""
    for p in profiles():
        launch = p.launch
        if module in launch.modules or module.startswith(launch.module_prefixes):
            return p.name, f"python -m {module}", False
        if serve and module in launch.serve_modules:
            shown = launch.scripts[0] if launch.scripts else f"python -m {module}"
            return p.name, f"{shown} {SERVE}", True
    return None


def _script_engine(script: str) -> Engine | None:
    for p in profiles():
        if script in p.launch.scripts:
            return p.name
    return None


def _modules_named() -> list[str]:
    return [e.removeprefix("python -m ") for p in profiles() for e in p.launch.examples()
            if e.startswith("python -m ")]


def _either(items: Iterable[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    words = list(items)
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)


def engine_labels() -> str:
    """Every known engine's label, for messages (``SGLang or vLLM``)."""
    return _either(p.label for p in profiles())


def launch_profile(engine: Engine) -> EngineProfile:
    """The profile of a parsed command's engine (one the reader recognised, so registered)."""
    profile = profile_of(engine)
    if profile is None:
        raise CommandError(f"no engine named {engine!r} is registered")
    return profile


def _looks_like_program(word: str) -> bool:
    base = word.rsplit("/", 1)[-1]
    return bool(_PYTHON.search(word)) or _script_engine(base) is not None or base in _WRAPPERS


def parse_command(argv: list[str] | str, tables: dict[Engine, FlagTable]) -> ParsedCommand:
    """Parse a whole launch command (raises :class:`CommandError` for a non-engine command)."""
    words = split_command(argv)
    engine, entry, start, env = find_engine(words)
    args = words[start:]
    for k, w in enumerate(args):  # a pasted ``... > log 2>&1 &`` ends the engine's arguments
        if w in _SHELL_STOP or w.startswith((">", "2>", "&>", "1>")):
            args = args[:k]
            break
    problems: list[Problem] = []
    cut = []
    for w in args:
        if len(w) > MAX_TOKEN:
            problems.append(Problem("cut", w[:40] + "…", f"a word of {len(w):,} characters "
                                    f"was cut to {MAX_TOKEN:,}"))
            w = w[:MAX_TOKEN]
        cut.append(w)
    table = tables.get(engine)
    if table is None:
        raise CommandError(f"no flag table for {launch_profile(engine).label}")
    given, positionals, more = parse_args(cut, table)
    return ParsedCommand(engine, entry, tuple(env), tuple(words[:start]), tuple(cut),
                         tuple(given), tuple(positionals), tuple(problems + more), table.version)


def parse_args(args: list[str], table: FlagTable) -> tuple[list[Given], list[str], list[Problem]]:
    """The engine's own arguments → (flags given, positionals, problems), argparse's rules."""
    given: list[Given] = []
    positionals: list[str] = []
    problems: list[Problem] = []
    dotted: dict[str, tuple[int, str, dict[str, Any]]] = {}
    i = 0
    n = len(args)
    while i < n:
        tok = args[i]
        if tok == "--":
            positionals.extend(args[i + 1:])
            break
        if not _is_option(tok):
            positionals.append(tok)
            i += 1
            continue
        key, eq, explicit = tok.partition("=")
        if table.underscores and key.startswith("--"):
            head, dot, tail = key[2:].partition(".")
            key = "--" + head.replace("_", "-") + dot + tail
        if table.dotted and key.startswith("--") and "." in key:
            i = _dotted(args, i, key, eq, explicit, table, dotted, problems)
            continue
        spec, typed, problem = _match(key, table)
        if problem is not None:
            problems.append(problem)
            i += 1
            if not eq and i < n and not _is_option(args[i]):
                i += 1  # most likely the unknown option's value, not the model's path
            continue
        assert spec is not None
        start = i
        value, i = _value(spec, typed, args, i, explicit if eq else None, problems)
        given.append(Given(spec, typed, value, start))
    for name, (index, typed_opt, obj) in dotted.items():
        spec = table.by_opt.get(name)
        if spec is None:
            continue
        merged = _merge_json(_find_value(given, spec.dest), obj)
        given.append(Given(spec, typed_opt, merged, index))
    return given, positionals, problems


def _is_option(tok: str) -> bool:
    return tok.startswith("-") and tok != "-" and not _NEGATIVE_NUMBER.match(tok)


def _match(key: str, table: FlagTable) -> tuple[FlagSpec | None, str, Problem | None]:
    """argparse's option lookup: exact, then a unique prefix (``allow_abbrev``)."""
    spec = table.by_opt.get(key)
    if spec is not None:
        return spec, key, None
    if table.allow_abbrev and key.startswith("--"):
        hits = sorted({opt for opt in table.by_opt if opt.startswith(key)})
        specs = {id(table.by_opt[o]) for o in hits}
        if len(specs) == 1:
            return table.by_opt[hits[0]], key, None
        if len(hits) > 1:
            return None, key, Problem(
                "ambiguous", key, f"ambiguous option: {key} could match {', '.join(hits[:6])}"
                + (" …" if len(hits) > 6 else ""))
    near = difflib.get_close_matches(key, table.long_opts(), n=1, cutoff=0.6)
    return None, key, Problem("unknown", key, f"unrecognized argument: {key}",
                              near[0] if near else None)


def _value(spec: FlagSpec, typed: str, args: list[str], i: int, explicit: str | None,
           problems: list[Problem]) -> tuple[Any, int]:
    """The value argparse would store for ``spec`` at ``args[i]``, and the next index."""
    nargs = spec.nargs
    i += 1
    if nargs == 0:
        if explicit is not None:
            problems.append(Problem("missing-value", typed,
                                    f"argument {typed}: ignored explicit argument {explicit!r}"))
        return not typed.startswith("--no-"), i
    if explicit is not None:
        vals = [explicit]
    else:
        want = 1 if nargs is None else nargs
        vals = []
        while i < len(args) and not _is_option(args[i]):
            if isinstance(want, int) and len(vals) >= want:
                break
            if want == "?" and vals:
                break
            vals.append(args[i])
            i += 1
    if nargs in (None, "?") or (isinstance(nargs, int) and nargs == 1):
        if not vals:
            if nargs == "?":
                return None, i
            problems.append(Problem("missing-value", typed,
                                    f"argument {typed}: expected one argument"))
            return None, i
        value: Any = vals[0]
        _check_json(value, typed, problems)
    else:
        if nargs == "+" and not vals:
            problems.append(Problem("missing-value", typed,
                                    f"argument {typed}: expected at least one argument"))
        value = vals
    for v in vals:
        if spec.choices is not None and v not in spec.choices and v.upper() not in spec.choices:
            near = difflib.get_close_matches(v, list(spec.choices), n=1, cutoff=0.5)
            problems.append(Problem("choice", typed, f"argument {typed}: invalid choice: {v!r} "
                                    f"(choose from {', '.join(spec.choices[:12])})",
                                    near[0] if near else None))
    return value, i


def _dotted(args: list[str], i: int, key: str, eq: str, explicit: str,
            table: FlagTable, dotted: dict[str, tuple[int, str, dict[str, Any]]],
            problems: list[Problem]) -> int:
    """vLLM's ``--speculative-config.method eagle3`` (and ``.key+ a,b`` for lists)."""
    name, *path = key.split(".")
    spec, typed, problem = _match(name, table)
    if problem is not None or spec is None:
        if problem is not None:
            problems.append(problem)
        return i + 1
    if eq:
        text, nxt = explicit, i + 1
    elif i + 1 < len(args):
        text, nxt = args[i + 1], i + 2
    else:
        problems.append(Problem("missing-value", key, f"argument {key}: expected one argument"))
        return i + 1
    value: Any
    if path and path[-1].endswith("+"):
        path[-1] = path[-1][:-1]
        value = text.split(",")
    else:
        value = json_or_text(text)
    entry = dotted.setdefault(spec.opts[0], (i, typed, {}))
    node = entry[2]
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    if path:
        last = path[-1]
        if isinstance(value, list) and isinstance(node.get(last), list):
            node[last] = node[last] + value
        else:
            node[last] = value
    return nxt


def _check_json(value: str, typed: str, problems: list[Problem]) -> None:
    """A ``{...}`` value over the JSON loader's bounds is a problem, not a value read as text:
    the lint says so in one line rather than going on as if the flag were absent."""
    if not value.lstrip().startswith("{"):
        return
    try:
        load_json(value, f"argument {typed}", max_bytes=MAX_JSON)
    except LoadError as exc:
        if not exc.reason.startswith("not valid JSON"):  # (bad syntax: as before, text)
            problems.append(Problem("json", typed, str(exc)))


def _find_value(given: list[Given], dest: str) -> Any:
    for g in reversed(given):
        if g.spec.dest == dest:
            return g.value
    return None


def _merge_json(base: Any, update: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = dict(as_json(base) or {})
    for k, v in update.items():
        if isinstance(v, dict) and isinstance(merged.get(k), dict):
            merged[k] = _merge_json(merged[k], v)
        else:
            merged[k] = v
    return merged


__all__ = ["MAX_TOKENS", "CommandError", "Engine", "FlagSpec", "FlagTable", "Given",
           "ParsedCommand", "Problem", "as_json", "engine_labels", "find_engine", "launch_profile",
           "parse_args", "parse_command", "split_command"]
