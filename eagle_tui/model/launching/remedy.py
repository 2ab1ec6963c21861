"""Remedies as edits of a launch command's words: the fix a finding or an alert knows.

A :class:`Remedy` is a short title and the edits that make the command right (set a flag's
value, add or remove a flag, set one key of a JSON-valued flag such as vLLM's
``--speculative-config``). :func:`apply` edits the words the user typed *in place*: the
option is found the way the engine's parser found it (an abbreviation, ``--flag=value``, a
dotted ``--flag.key value``), so the fixed command keeps the user's spelling and never holds the
same flag twice.

Pure: the types import nothing of the engines, so an engine's rules can build them.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from eagle_tui.model.launching.flags import FlagTable, ParsedCommand, as_json
from eagle_tui.model.record import Record, record

Op = Literal["set", "add", "remove", "set-key"]
Value = str | int | float | bool | None


@record
class Edit(Record):
    """One change: ``flag`` is the option's canonical spelling (``--speculative-algorithm``)."""

    op: Op
    flag: str
    value: Value = None  # the new value (``set``/``add``; ``None``: a switch), or the key's
    key: str | None = None  # ``set-key``: the key of the flag's JSON object

    def describe(self) -> str:
        if self.op == "remove":
            return f"remove {self.flag}"
        if self.op == "set-key":
            return f"{self.flag} \"{self.key}\": {json.dumps(self.value)}"
        return f"{self.flag} {self.value}" if self.value is not None else self.flag


@record
class Remedy(Record):
    """A fix: a title for the user and the edits that make it."""

    title: str
    edits: tuple[Edit, ...]

    def describe(self) -> str:
        return f"{self.title} ({'; '.join(e.describe() for e in self.edits)})"


def set_flag(flag: str, value: Value, title: str | None = None) -> Remedy:
    """The one-edit remedy "``flag`` takes ``value``" (added when the command lacks it)."""
    return Remedy(title or f"{flag} {value}", (Edit("set", flag, value),))


def set_key(flag: str, key: str, value: Value, title: str | None = None) -> Remedy:
    return Remedy(title or f"\"{key}\": {json.dumps(value)} in {flag}",
                  (Edit("set-key", flag, value, key),))


def apply(cmd: ParsedCommand, remedy: Remedy, table: FlagTable) -> list[str]:
    """The command's words (``cmd.prefix + cmd.args``) with the remedy's edits made."""
    args = list(cmd.args)
    for edit in remedy.edits:
        args = _apply_one(args, edit, table)
    return [*cmd.prefix, *args]


def _text(value: Value) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _spans(args: list[str], dest: str, table: FlagTable) -> list[tuple[int, int, str, str]]:
    """Where each occurrence of ``dest`` is: ``(start, end, key as typed, dotted key or '')``,
    scanning the words the way the engine's parser does (abbreviations, ``_``, ``=``, dots)."""
    out: list[tuple[int, int, str, str]] = []
    i = 0
    n = len(args)
    while i < n:
        tok = args[i]
        if tok == "--":
            break
        if not _is_option(tok):
            i += 1
            continue
        key, eq, _ = tok.partition("=")
        norm = key
        if table.underscores and key.startswith("--"):
            head, dot, tail = key[2:].partition(".")
            norm = "--" + head.replace("_", "-") + dot + tail
        name, dot, path = norm.partition(".") if table.dotted and norm.startswith("--") \
            else (norm, "", "")
        spec = _match(name, table)
        if spec is None:
            i += 1
            continue
        end = i + 1
        if not eq:
            if dot:
                end = min(i + 2, n)
            elif spec.nargs in (None, "?", 1):
                if end < n and not _is_option(args[end]):
                    end += 1
            elif spec.nargs != 0:
                while end < n and not _is_option(args[end]):
                    end += 1
        if spec.dest == dest:
            out.append((i, end, key, path))
        i = end
    return out


def _match(key: str, table: FlagTable) -> Any:
    spec = table.by_opt.get(key)
    if spec is not None or not (table.allow_abbrev and key.startswith("--")):
        return spec
    hits = {id(s): s for o, s in table.by_opt.items() if o.startswith(key)}
    return next(iter(hits.values())) if len(hits) == 1 else None


def _is_option(tok: str) -> bool:
    if not tok.startswith("-") or tok == "-":
        return False
    try:
        float(tok)
    except ValueError:
        return True
    return False


def _apply_one(args: list[str], edit: Edit, table: FlagTable) -> list[str]:
    spec = table.by_opt.get(edit.flag)
    if spec is None:
        raise KeyError(f"{edit.flag}: not a flag of {table.engine} {table.version}")
    spans = _spans(args, spec.dest, table)
    plain = [s for s in spans if not s[3]]
    if edit.op == "remove":
        for start, end, _, _ in reversed(spans):
            del args[start:end]
        return args
    if edit.op in ("set", "add"):
        new = [edit.flag] if edit.value is None else [edit.flag, _text(edit.value)]
        if not plain:
            return [*args, *new]
        start, end, typed, _ = plain[-1]
        words = [typed] if edit.value is None else [f"{typed}={_text(edit.value)}"] \
            if "=" in args[start] else [typed, _text(edit.value)]
        args[start:end] = words
        for s, e, _, _ in reversed(plain[:-1]):  # an earlier value would be a second copy
            del args[s:e]
        return args
    assert edit.key is not None
    dotted = [s for s in spans if s[3] == edit.key]
    if dotted:  # ``--speculative-config.method eagle`` sets that key last: edit it there
        start, end, typed, _ = dotted[-1]
        eq = "=" in args[start]
        args[start:end] = [args[start].split("=", 1)[0] + "=" + _text(edit.value)] if eq \
            else [args[start], _text(edit.value)]
        return args
    if plain:
        start, end, typed, _ = plain[-1]
        eq = "=" in args[start]
        old = args[start].split("=", 1)[1] if eq else args[start + 1] if end > start + 1 else ""
        obj = dict(as_json(old) or {})
        obj[edit.key] = edit.value
        text = json.dumps(obj)
        args[start:end] = [f"{typed}={text}"] if eq else [typed, text]
        return args
    return [*args, edit.flag, json.dumps({edit.key: edit.value})]


__all__ = ["Edit", "Remedy", "apply", "set_flag", "set_key"]
