"""A launch command as lines a person edits: one argument per line, and back to argv.

The relaunch editor shows ``CUDA_VISIBLE_DEVICES=0`` (each leading env word on its line), the
entry (``python -m MODULE`` or ``SCRIPT serve MODEL``), then each flag with its value(s) on one
line. Every line is shell words (:mod:`~eagle_tui.model.boundary.shellwords`: a value with
spaces stays one word, a control character is spelled), so the argv is the lines' words in
order: the grouping is only how they are shown, and never changes what the command means.

One exception, made for reading: a JSON object value of a flag whose parser takes dotted keys
(the flag table's ``dotted``) is shown as one line per field, ``--speculative-config.method
eagle3``, and those lines are joined back into one JSON word on the way out (the parser would
accept the dotted words as they are, but one value is what the run history and the lint show).

Pure: no I/O. Bounded by the command reader's :data:`~.cmdline.MAX_TOKENS` words.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from itertools import pairwise
from typing import Any

from eagle_tui.model.boundary import shellwords
from eagle_tui.model.events import Engine
from eagle_tui.model.launching.cmdline import (
    MAX_TOKENS,
    CommandError,
    find_engine,
    parse_command,
    split_command,
)
from eagle_tui.model.launching.flags import FlagTable, ParsedCommand, json_or_text
from eagle_tui.model.record import Record, record

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_SAFE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")  # a JSON key a dotted option can spell


def _is_option(word: str) -> bool:
    return word.startswith("-") and word != "-" and not _NEGATIVE_NUMBER.match(word)


def command_lines(command: list[str] | str,
                  tables: dict[Engine, FlagTable] | None = None) -> list[str]:
    """The command as editor lines (see the module docstring); a command no engine's table
    reads is grouped by its words alone (a word that starts with ``-`` starts a line)."""
    words = split_command(command)
    parsed: ParsedCommand | None = None
    table: FlagTable | None = None
    if tables:
        try:
            parsed = parse_command(words, tables)
            table = tables.get(parsed.engine)
        except CommandError:
            parsed = None
    try:
        _engine, _entry, start, env = find_engine(words)
    except CommandError:
        return [shellwords.join(g) for g in _by_options(words)]
    lines = [shellwords.join([w]) for w in words[:len(env)]]
    head = words[len(env):start]
    args = words[start:]
    groups = _by_options(args, dotted=table is not None and table.dotted)
    if groups and not _is_option(groups[0][0]):  # ``serve MODEL``: the model is the entry's
        head = head + groups.pop(0)
    if head:
        lines.append(shellwords.join(head))
    expand = _expandable(parsed, table)
    for group in groups:
        fields = _fields(group, expand)
        lines.extend(fields if fields is not None else [shellwords.join(group)])
    return lines


def _by_options(words: list[str], dotted: bool = False) -> list[list[str]]:
    """Words grouped so that each option starts a group (its values follow it); with
    ``dotted``, a ``--opt.key`` takes the next word whatever it is and no more, as that
    parser does (a word after it is a group of its own)."""
    groups: list[list[str]] = []
    take = closed = False
    for w in words:
        if (_is_option(w) and not take) or not groups or closed:
            groups.append([w])
        else:
            groups[-1].append(w)
        closed = take
        take = dotted and not take and w.startswith("--") and "=" not in w and "." in w
        closed = closed or (dotted and "=" in w and "." in w.partition("=")[0]
                            and w.startswith("--"))
    return groups


def _expandable(parsed: ParsedCommand | None, table: FlagTable | None) -> set[str]:
    """Options whose one JSON-object word may be shown as fields: the table takes dotted keys,
    and the flag is given once, not also in dotted form (two values would not merge as one)."""
    if parsed is None or table is None or not table.dotted:
        return set()
    seen: dict[str, int] = {}
    for g in parsed.given:
        seen[g.spec.dest] = seen.get(g.spec.dest, 0) + 1
    dotted = {_option_of(w, table) for w in parsed.args if w.startswith("--") and "." in
              w.partition("=")[0]}
    return {opt for g in parsed.given for opt in g.spec.opts
            if seen[g.spec.dest] == 1 and g.typed == opt and opt not in dotted}


def _option_of(word: str, table: FlagTable) -> str | None:
    """The table's name of the option a (dotted) word sets, by exact name or unique prefix."""
    key = word.partition("=")[0].partition(".")[0]
    if table.underscores:
        key = "--" + key[2:].replace("_", "-")
    spec = table.by_opt.get(key)
    if spec is None and table.allow_abbrev:
        hits = {id(table.by_opt[o]): table.by_opt[o] for o in table.by_opt if o.startswith(key)}
        spec = next(iter(hits.values())) if len(hits) == 1 else None
    return spec.opts[0] if spec is not None else None


def _fields(group: list[str], expand: set[str]) -> list[str] | None:
    """``--opt '{"a": 1}'`` as ``--opt.a 1`` lines, or ``None`` when it is not that shape."""
    opt, eq, explicit = group[0].partition("=")
    if opt not in expand or len(group) < (1 if eq else 2):
        return None
    text = explicit if eq else group[1]
    rest = group[1:] if eq else group[2:]  # positionals after the value: a line of their own
    obj = json_or_text(text)
    if not isinstance(obj, dict) or not obj:
        return None
    out: list[str] = []
    if not _flatten(obj, opt, out):
        return None
    return out + ([shellwords.join(rest)] if rest else [])


def _flatten(obj: dict[str, Any], prefix: str, out: list[str]) -> bool:
    for key, value in obj.items():
        if not _SAFE_KEY.match(key):
            return False
        name = f"{prefix}.{key}"
        if isinstance(value, dict) and value:
            if not _flatten(value, name, out):
                return False
            continue
        shown = _shown(value)
        if shown is None:
            return False
        out.append(shellwords.join([name, shown]))
    return True


def _shown(value: Any) -> str | None:
    """A field's value as the word that reads back as it (``eagle3``, ``3``, ``'"3"'``)."""
    as_text = value if isinstance(value, str) else json.dumps(value)
    if _same(json_or_text(as_text), value):
        return as_text
    quoted = json.dumps(value)
    return quoted if _same(json_or_text(quoted), value) else None


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False)


def lines_argv(text: str, tables: dict[Engine, FlagTable] | None = None) -> list[str]:
    """The editor's text back to argv: each line's shell words in order, the dotted fields of
    a flag shown as fields joined into one JSON word where the first of them stood.

    Raises ``ValueError`` for a line with an unclosed quote (the editor says which line).
    """
    words: list[list[str]] = []
    for n, line in enumerate(text.split("\n"), 1):
        try:
            words.append(shellwords.split(line))
        except ValueError as exc:
            raise ValueError(f"line {n}: {exc}") from None
    flat = [w for ws in words for w in ws][:MAX_TOKENS]
    table = _table_for(flat, tables)
    if table is None or not table.dotted:
        return flat
    return _join_fields(flat, table)


def _table_for(words: list[str], tables: dict[Engine, FlagTable] | None) -> FlagTable | None:
    if not tables:
        return None
    try:
        engine = find_engine(words)[0]
    except CommandError:
        return None
    return tables.get(engine)


def _join_fields(words: list[str], table: FlagTable) -> list[str]:
    """Dotted ``--opt.key value`` pairs as one ``--opt JSON`` word pair where they are the
    fields :func:`command_lines` shows (so the lines read back as they were); otherwise, or
    when ``--opt`` is also given whole (the parser merges the two), they stay as typed."""
    whole = {_option_of(w, table) for w in words
             if w.startswith("--") and "." not in w.partition("=")[0]}
    found: dict[str, list[tuple[int, str, str]]] = {}  # option: (index, key, value) each
    i = 0
    while i < len(words):
        key, eq, _ = words[i].partition("=")
        opt = _option_of(key, table) if key.startswith("--") and "." in key else None
        if opt is None or opt in whole or eq or i + 1 >= len(words):
            if opt is not None:
                whole.add(opt)  # a field the editor would not show so: all stay as typed
            i += 1
            continue
        found.setdefault(opt, []).append((i, key, words[i + 1]))
        i += 2
    joined: dict[int, list[str]] = {}  # index of the first field: the words instead
    skip: set[int] = set()
    for opt, fields in found.items():
        obj = None if opt in whole else _object(opt, fields)
        if obj is None:
            continue
        joined[fields[0][0]] = [opt, json.dumps(obj)]
        skip.update(j for k, *_ in fields for j in (k, k + 1))
    out: list[str] = []
    for k, w in enumerate(words):
        out.extend(joined.get(k, []))
        if k not in skip:
            out.append(w)
    return out


def _object(opt: str, fields: list[tuple[int, str, str]]) -> dict[str, Any] | None:
    """The JSON object the fields set, if :func:`_flatten` shows it as those very fields (in a
    row: fields apart stay apart, where the person put them)."""
    if any(b[0] != a[0] + 2 for a, b in pairwise(fields)):
        return None
    obj: dict[str, Any] = {}
    for _i, key, text in fields:
        path = key.split(".")[1:]
        node = obj
        for part in path[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[path[-1]] = json_or_text(text)
    shown: list[str] = []
    if not obj or not _flatten(obj, opt, shown):
        return None
    typed = [shellwords.join([key, text]) for _i, key, text in fields]
    return obj if shown == typed else None


@record
class LineChange(Record):
    """One line of a diff: ``added`` (only ``new``), ``removed`` (only ``old``) or ``changed``."""

    kind: str
    old: str | None
    new: str | None


@lru_cache(maxsize=4096)  # (an edit changes one line: the others' keys are read again)
def line_key(line: str) -> str:
    """What a line sets: its option (``--port``, ``--speculative-config.method``), its env
    variable (``HF_TOKEN=``), or the line itself (the entry, a positional)."""
    try:
        words = shellwords.split(line)
    except ValueError:
        words = line.split()
    if not words:
        return ""
    first = words[0]
    if _is_option(first):
        return first.partition("=")[0]
    name, eq, _ = first.partition("=")
    if eq and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        return name + "="
    return line.strip()


def diff_lines(old: list[str], new: list[str]) -> list[LineChange]:
    """What changed from ``old`` to ``new``, line by line, keyed by what each line sets (a line
    whose option stayed and whose value moved is ``changed``, not removed and added)."""
    old_c = [x.strip() for x in old if x.strip()]
    new_c = [x.strip() for x in new if x.strip()]
    pool: dict[str, list[str]] = {}
    for line in old_c:
        pool.setdefault(line_key(line), []).append(line)
    out: list[LineChange] = []
    unmatched_new: list[str] = []
    for line in new_c:
        queue = pool.get(line_key(line))
        if queue and line in queue:
            queue.remove(line)
        else:
            unmatched_new.append(line)
    for line in unmatched_new:
        queue = pool.get(line_key(line))
        if queue:
            out.append(LineChange("changed", queue.pop(0), line))
        else:
            out.append(LineChange("added", None, line))
    out.extend(LineChange("removed", line, None) for q in pool.values() for line in q)
    return out


def first_difference(old: list[str], new: list[str]) -> int | None:
    """The index of the first line of ``new`` that is not the line at that place in ``old``."""
    for i, line in enumerate(new):
        if i >= len(old) or old[i] != line:
            return i
    return None


__all__ = ["LineChange", "command_lines", "diff_lines", "first_difference", "line_key",
           "lines_argv"]
