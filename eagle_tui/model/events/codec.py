"""Events ↔ JSON: the ``--record`` file format and ``wait --json``'s building block.

One event is one JSON object, ``{"type": "<class name>", <field>: <value>, ...}``; a record file
is one such object per line after a header line (:data:`RECORD_HEADER`). Decoding is driven by the
dataclasses' own type hints, so a new event type or field needs no codec change, and a malformed
line is a :class:`CodecError` that names the problem instead of a half-built event.

Unknown keys are ignored (a recording made by a newer eagle-tui still replays); missing required
fields, wrong types and unknown event types are errors.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from functools import cache
from typing import Any, Final, Literal

from eagle_tui.errors import InputError
from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.events import EVENT_TYPES, Event

RECORD_FORMAT: Final = "eagle-tui-record"
RECORD_VERSION: Final = 1
RECORD_HEADER: Final = {"format": RECORD_FORMAT, "version": RECORD_VERSION}
# a record line: a LogLine holds at most 1 MB of text, which JSON escapes to at most 6 MB
MAX_RECORD_BYTES: Final = 8 << 20

_EVENT_CLASSES: Final = frozenset(typing.get_args(Event))


class CodecError(InputError):
    """A JSON value that is not a valid event; ``str()`` says which field and why."""


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    return value


def to_dict(ev: Event) -> dict[str, Any]:
    """``{"type": ..., **fields}`` with enums as their values and tuples as lists."""
    if type(ev) not in _EVENT_CLASSES:
        raise CodecError(f"not an event: {type(ev).__name__}")
    out: dict[str, Any] = {"type": type(ev).__name__}
    out.update(_encode(ev))
    return out


def dumps(ev: Event) -> str:
    """One compact JSON line (no newline)."""
    return json.dumps(to_dict(ev), separators=(",", ":"), ensure_ascii=False)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(hint: Any, value: Any, where: str) -> Any:
    """Decode ``value`` as ``hint`` (one branch per type form the events use)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return value
    if origin is typing.Union or origin is types.UnionType:
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _decode(arg, value, where)
            except CodecError as exc:
                errors.append(str(exc))
        raise CodecError(errors[0] if len(errors) == 1 else f"{where}: {value!r} matches no type")
    if origin is Literal:
        if value not in args:
            raise CodecError(f"{where}: {value!r} is not one of {list(args)}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise CodecError(f"{where}: expected a list, got {type(value).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(args) != len(value):
            raise CodecError(f"{where}: expected {len(args)} items, got {len(value)}")
        pairs = enumerate(zip(args, value, strict=True))
        return tuple(_decode(a, v, f"{where}[{i}]") for i, (a, v) in pairs)
    if isinstance(hint, type):
        if issubclass(hint, enum.Enum):
            try:
                return hint(value)
            except ValueError:
                raise CodecError(f"{where}: {value!r} is not a {hint.__name__}") from None
        if dataclasses.is_dataclass(hint):
            if not isinstance(value, dict):
                raise CodecError(f"{where}: expected an object, got {type(value).__name__}")
            return _build(hint, value, where)
        if hint is bool:
            if not isinstance(value, bool):
                raise CodecError(f"{where}: expected true/false, got {value!r}")
            return value
        if hint is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise CodecError(f"{where}: expected an integer, got {value!r}")
            return value
        if hint is float:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise CodecError(f"{where}: expected a number, got {value!r}")
            return float(value)
        if hint is str:
            if not isinstance(value, str):
                raise CodecError(f"{where}: expected a string, got {value!r}")
            return value
    raise CodecError(f"{where}: unsupported field type {hint!r}")


def _build(cls: type, data: dict[str, Any], where: str) -> Any:
    kwargs: dict[str, Any] = {}
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        if f.name in data:
            kwargs[f.name] = _decode(hints[f.name], data[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise CodecError(f"{where}: missing field {f.name!r}")
    return cls(**kwargs)


def from_dict(data: object) -> Event:
    """Rebuild an event from :func:`to_dict`'s output; :class:`CodecError` if it is not one."""
    if not isinstance(data, dict):
        raise CodecError(f"expected a JSON object, got {type(data).__name__}")
    name = data.get("type")
    if not isinstance(name, str):
        raise CodecError("missing \"type\"")
    cls = EVENT_TYPES.get(name)
    if cls is None or cls not in _EVENT_CLASSES:
        raise CodecError(f"unknown event type {name!r}")
    event: Event = _build(cls, data, name)
    return event


def loads(line: str | bytes) -> Event:
    """Decode one JSON line."""
    try:
        data = load_json(line, "a record line", max_bytes=MAX_RECORD_BYTES)
    except LoadError as exc:
        raise CodecError(exc.reason) from None
    return from_dict(data)


def header_line() -> str:
    """The first line of a record file."""
    return json.dumps(RECORD_HEADER, separators=(",", ":"))


def is_header(data: object) -> bool:
    """True for a decoded record-file header of a version this code reads."""
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        return False
    version = data.get("version")
    if version != RECORD_VERSION:
        raise CodecError(f"record format version {version!r} is not supported "
                         f"(this eagle-tui reads version {RECORD_VERSION})")
    return True


__all__ = [
    "MAX_RECORD_BYTES",
    "RECORD_FORMAT",
    "RECORD_HEADER",
    "RECORD_VERSION",
    "CodecError",
    "dumps",
    "from_dict",
    "header_line",
    "is_header",
    "loads",
    "to_dict",
]
