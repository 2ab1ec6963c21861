"""One bounded reader of ``ps --format json`` → :class:`ContainerRow` (discovery's first look).

The docker CLI prints one JSON object per line, its values flattened to text (``Names``
comma-joined, ``Labels`` ``k=v,k=v``, ``Command`` a quoted string); podman prints one JSON array
whose values keep their types (``Names`` a list, ``Labels`` an object, ``Command`` the argv).
Both are read here; a line or item that is not a container is skipped, the text is capped
(:data:`MAX_BYTES`) and at most :data:`MAX_ROWS` rows are read. Pure.
"""

from __future__ import annotations

from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.containers.inspect import (
    MAX_LABELS,
    MAX_TEXT,
    InspectError,
    labels_of,
    text,
    words,
)
from eagle_tui.model.record import Record, record

MAX_BYTES = 8 << 20
MAX_ROWS = 1000


@record
class ContainerRow(Record):
    """One container as ``ps`` lists it."""

    id: str
    name: str = ""
    image: str = ""
    state: str = ""  # running, exited, ...
    status: str = ""  # "Up 3 seconds", "Exited (137) 2 seconds ago"
    command: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()


def _flat_labels(value: str) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for item in value.split(",")[:MAX_LABELS]:
        key, eq, val = item.partition("=")
        if eq and key:
            out.append((key[:MAX_TEXT], val[:MAX_TEXT]))
    return tuple(out)


def _command(value: object) -> tuple[str, ...]:
    """Podman's argv; docker's ``"PATH ARGS..."`` (Go-quoted, its words joined by spaces, not
    shell-quoted: a word's own spaces are lost, so this is for a first look only)."""
    if isinstance(value, list):
        return words(value)
    line = text(value, 64_000).strip()
    if len(line) >= 2 and line[0] == line[-1] == '"':
        line = line[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return tuple(w[:MAX_TEXT] for w in line.split()[:2000])


def row_of(obj: object) -> ContainerRow | None:
    if not isinstance(obj, dict):
        return None
    cid = text(obj.get("ID") or obj.get("Id"), 128)
    if not cid:
        return None
    names = obj.get("Names")
    if isinstance(names, list):
        name = next((text(n) for n in names if isinstance(n, str)), "")
    else:
        name = text(names).split(",")[0]
    raw = obj.get("Labels")
    labels = labels_of(raw) if isinstance(raw, dict) else _flat_labels(text(raw, 64_000))
    return ContainerRow(cid, name.removeprefix("/"), text(obj.get("Image")),
                        text(obj.get("State"), 32).lower(), text(obj.get("Status"), 256),
                        _command(obj.get("Command")), labels)


def read_ps(data: str | bytes) -> list[ContainerRow]:
    """The containers of one ``ps --format json`` answer, either CLI's shape; raises
    :class:`InspectError` only when the text is over its cap or a broken array."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    if len(data) > MAX_BYTES:
        raise InspectError(f"container list over {MAX_BYTES >> 20} MiB")
    body = data.strip()
    if not body:
        return []
    if body.startswith("["):  # podman: one array
        try:
            items = load_json(body, "container list", max_bytes=MAX_BYTES)
        except LoadError as exc:
            raise InspectError(str(exc)) from None
        items = items if isinstance(items, list) else []
    else:  # docker: one object a line
        items = []
        for line in body.splitlines()[:MAX_ROWS]:
            try:
                items.append(load_json(line, "container list line", max_bytes=1 << 20))
            except LoadError:
                continue
    return [r for o in items[:MAX_ROWS] if (r := row_of(o)) is not None]


__all__ = ["ContainerRow", "read_ps", "row_of"]
