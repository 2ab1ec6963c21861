"""Logger prefixes, and which engine a line names.

An engine prints its own prefix (SGLang ``[2025-11-06 01:22:10 TP0] msg``, vLLM ``INFO 10-30
14:18:55 [file.py:123] msg``: each profile's ``logs.prefix``); uvicorn prints ``INFO:     msg``;
Python's default logging ``INFO:logger.name:msg``; Rust tracing ``2026-01-05T10:00:00.1Z  INFO
target: msg``. :func:`split_prefix` peels whichever is present and returns the message, the
server's own time text and a hint of the engine (an engine's own prefix, or a logger name its
profile claims). Parsers then search *the message* for phrases, never positions, so a format
nobody has seen yet still mostly works.

Engines are asked in registration order (``registry.profiles``); the table of their prefixes by
first character is rebuilt only when the registry changes, so a line costs one dict lookup and
the matches of the prefixes that may start it.
"""

from __future__ import annotations

import re

from eagle_tui.model.engines import EngineProfile, generation, profiles
from eagle_tui.model.engines.facets.logs import LogPrefix
from eagle_tui.model.events import Engine
from eagle_tui.model.record import Record, record

_UVICORN = re.compile(r"(DEBUG|INFO|WARNING|ERROR|CRITICAL):(?:     ?| {1,4}|$)", re.ASCII)
_PYLOG = re.compile(r"(DEBUG|INFO|WARNING|ERROR|CRITICAL):([\w.]+):", re.ASCII)
_PYTIME = re.compile(
    r"(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)(?:[,.]\d+)?(?: ?\| ?| - | )"
    r"(?:([\w.]+)(?: ?\| ?| - | ))?(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?: ?\| ?| - |:? )",
    re.ASCII,
)
_RUST = re.compile(
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?) +(TRACE|DEBUG|INFO|WARN|ERROR) +"
    r"(?:([\w:]+): )?",
    re.ASCII,
)


@record
class Prefixed(Record):
    """A message with its logger prefix removed. ``level`` is upper-case or ``None``."""

    msg: str
    time: str | None = None
    level: str | None = None
    engine: Engine | None = None  # what the prefix shape says about the engine
    uvicorn: bool = False


_Table = dict[str, tuple[tuple[str, LogPrefix], ...]]
_known: tuple[EngineProfile, ...] = ()
_table: _Table = {}
_built_at = -1  # the registry's generation the two were built at


def _engines() -> tuple[EngineProfile, ...]:
    """The registered profiles, and the prefix table rebuilt if they changed."""
    global _known, _table, _built_at
    if generation() != _built_at:
        now = tuple(profiles())
        table: dict[str, list[tuple[str, LogPrefix]]] = {}
        for p in now:
            if p.logs.prefix is not None:
                for ch in p.logs.prefix.first_chars:
                    table.setdefault(ch, []).append((p.name, p.logs.prefix))
        _known, _table, _built_at = now, {ch: tuple(v) for ch, v in table.items()}, generation()
    return _known


def _hint(name: str | None) -> Engine | None:
    if not name:
        return None
    low = name.lower()
    for p in _engines():
        logs = p.logs
        if any(h in low for h in logs.logger_hints) or low.startswith(logs.logger_starts):
            return p.name
    return None


def _own(text: str, engine: str, pre: LogPrefix) -> Prefixed | None:
    m = pre.pattern.match(text)
    if m is None:
        return None
    stamp: str | None = m.group(pre.time) if pre.time else None
    if pre.date and m.group(pre.date):
        stamp = f"{m.group(pre.date)} {stamp}"
    rest = text[m.end() :]
    if pre.uvicorn_after:
        u = _UVICORN.match(rest)
        if u is not None:
            return Prefixed(rest[u.end() :], stamp, u.group(1), engine, True)
    return Prefixed(rest, stamp, m.group(pre.level) if pre.level else None, engine)


def split_prefix(text: str) -> Prefixed:
    """Peel one logger prefix (an engine's own, Python logging, Rust tracing) and a uvicorn
    level."""
    first = text[:1]
    _engines()
    for engine, pre in _table.get(first, ()):
        found = _own(text, engine, pre)
        if found is not None:
            return found
    if first in "DIWEC":
        p = _PYLOG.match(text)
        if p is not None:
            return Prefixed(text[p.end() :], None, p.group(1), _hint(p.group(2)))
        u = _UVICORN.match(text)
        if u is not None:
            return Prefixed(text[u.end() :], None, u.group(1), None, True)
        return Prefixed(text)
    if first.isdigit():
        r = _RUST.match(text)
        if r is not None:
            level = "WARNING" if r.group(2) == "WARN" else r.group(2)
            return Prefixed(text[r.end() :], r.group(1), level, _hint(r.group(3)))
        t = _PYTIME.match(text)
        if t is not None:
            level = "WARNING" if t.group(3) == "WARN" else t.group(3)
            return Prefixed(text[t.end() :], t.group(1), level, _hint(t.group(2)))
    return Prefixed(text)


def engine_of(prefixed: Prefixed, process: str | None) -> Engine | None:
    """What this line says about the engine, or ``None`` when it says nothing: its prefix, its
    process tag, a text marker (each asked of every engine before the next)."""
    if prefixed.engine is not None:
        return prefixed.engine
    engines = _engines()
    if process:
        for p in engines:
            if p.logs.process is not None and p.logs.process.search(process):
                return p.name
    msg = prefixed.msg
    for p in engines:
        for marker in p.logs.text_markers:
            if marker in msg:
                return p.name
    return None


def read_prefix(text: str, process: str | None) -> tuple[Prefixed, Engine | None]:
    """:func:`split_prefix` and :func:`engine_of` at once (one call from the parser's line
    path): the message with its prefix peeled, and what the line says about the engine."""
    pre = split_prefix(text)
    return pre, engine_of(pre, process)


__all__ = ["Prefixed", "engine_of", "read_prefix", "split_prefix"]
