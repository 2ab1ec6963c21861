"""Read a compose file: YAML with bounds on its size, its depth and what its aliases expand to.

YAML's aliases let a few hundred bytes stand for billions of nodes (each level of anchors
repeating the last ten times), which ``safe_load`` builds as shared objects and any walk over
them then expands. So the parser's events are read first, counting every node as often as an
alias repeats it and the nesting as it goes; a document over :data:`MAX_BYTES`, :data:`MAX_NODES`
expanded nodes or :data:`MAX_DEPTH` levels is refused with one :class:`LoadError`, before
anything is built. Only YAML's safe schema is read (no tags that construct objects).
"""

from __future__ import annotations

from typing import Any

import yaml

from eagle_tui.errors import InputError
from eagle_tui.files import os_error_message, read_bytes
from eagle_tui.model.boundary.loaders import LoadError

MAX_BYTES = 1 << 20  # a compose file is a few KB
MAX_NODES = 100_000
MAX_DEPTH = 64
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _check(text: str, source: str) -> None:
    """The expanded node count and depth of the document, from its events alone."""
    sizes: dict[str, int] = {}
    stack: list[tuple[str | None, int]] = []
    total = 0
    for event in yaml.parse(text, Loader=_LOADER):
        size = 0
        if isinstance(event, yaml.AliasEvent):
            size = sizes.get(event.anchor or "", 1)
        elif isinstance(event, yaml.ScalarEvent):
            size = 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            stack.append((event.anchor, 1))
            if len(stack) > MAX_DEPTH:
                raise LoadError(source, f"nested deeper than {MAX_DEPTH} levels")
            continue
        elif isinstance(event, yaml.CollectionEndEvent) and stack:
            anchor, size = stack.pop()
            if anchor:
                sizes[anchor] = size
        else:
            continue
        if stack:
            anchor, count = stack[-1]
            stack[-1] = (anchor, count + size)
            size = count + size
        else:
            total += size
            size = total
        if size > MAX_NODES:
            raise LoadError(source, f"its aliases expand to more than {MAX_NODES:,} nodes")


def load_compose(data: str | bytes, source: str) -> Any:
    """The document (plain dicts, lists and scalars), or :class:`LoadError`."""
    if len(data) > MAX_BYTES:
        raise LoadError(source, f"larger than {MAX_BYTES >> 20} MB")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LoadError(source, f"not UTF-8 text (byte {exc.start})") from None
    else:
        text = data
    try:
        _check(text, source)
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise LoadError(source, f"not valid YAML{where}: {problem}") from None
    except RecursionError:
        raise LoadError(source, f"nested deeper than {MAX_DEPTH} levels") from None


def read_compose(path: str) -> Any:
    """The compose file at ``path`` (a regular file, read up to one byte past the cap)."""
    try:
        data = read_bytes(path, MAX_BYTES)
    except OSError as exc:
        raise LoadError(path, os_error_message(path, exc).removeprefix(f"{path}: ")) from None
    except InputError as exc:
        raise LoadError(path, str(exc).removeprefix(f"{path}: ")) from None
    return load_compose(data, path)


__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "load_compose", "read_compose"]
