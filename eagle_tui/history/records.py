"""One run of a server, as the history keeps it (no I/O here).

``kind`` says how eagle-tui knew the run: ``launched`` (it started it, so it may stop it),
``watched`` or ``attached`` (read-only, always). ``pgid``/``proc_start``/``token`` identify the
launched process group for ``stop``: the group id, the leader's start time in clock ticks since
boot (``/proc/PID/stat`` field 22) and a random token in every member's environment
(``EAGLE_TUI_RUN``), so a reused pid or a foreign group is never signalled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: Column name → SQLite type, in table order (after ``id``).
FIELDS: tuple[tuple[str, str], ...] = (
    ("name", "TEXT"),
    ("kind", "TEXT NOT NULL DEFAULT 'launched'"),
    ("demo", "INTEGER NOT NULL DEFAULT 0"),
    ("engine", "TEXT"),
    ("version", "TEXT"),
    ("host", "TEXT NOT NULL DEFAULT ''"),
    ("command", "TEXT"),  # redacted, shell-quoted
    ("argv", "TEXT"),  # JSON list, redacted
    ("flags", "TEXT"),  # JSON {dest: value}, redacted
    ("env_names", "TEXT"),  # JSON list of --env names (never values)
    ("cwd", "TEXT"),
    ("started", "REAL NOT NULL"),
    ("ended", "REAL"),
    ("state", "TEXT NOT NULL"),
    ("log_path", "TEXT"),
    ("url", "TEXT"),
    ("pid", "INTEGER"),
    ("pgid", "INTEGER"),
    ("proc_start", "TEXT"),
    ("token", "TEXT"),
    ("parent", "INTEGER"),  # the run this one relaunched
    ("phases", "TEXT"),  # JSON {phase: seconds}
    ("ready_s", "REAL"),
    ("crash", "TEXT"),  # JSON {kind, hint, line}
    ("metrics", "TEXT"),  # JSON summary (tok/s median/p10/p90, accept len, rate, ...)
    ("windows", "TEXT"),  # JSON list of benchmark windows
    ("baseline", "REAL"),
    ("notes", "TEXT"),
)
JSON_FIELDS = frozenset({"argv", "flags", "env_names", "phases", "crash", "metrics", "windows"})
_KINDS = {name: kind.split()[0] for name, kind in FIELDS} | {"id": "INTEGER"}
_INT_MAX = 2**63  # SQLite's own integers; a larger one would overflow a pid or a group id
# A time is seconds since 1970 that the calendar functions can show (year 5138 at most): a
# started time of 7e16 overflowed ``time.localtime`` in ``runs list``.
_TIMES = (0.0, 1e11)
_LISTS_OF_STR = frozenset({"argv", "env_names"})
_DICTS = frozenset({"flags", "crash", "metrics"})


def typed(name: str, value: Any) -> Any:
    """``value`` as column ``name`` holds it, or ``None`` when it is not of the column's type.

    SQLite keeps whatever was written into a column, and the history is a file anyone with the
    account can edit (or another version wrote): a host that is a number, a pid that is text, a
    started time of ``'x'`` or an argv that is a JSON object went as they were to formatting,
    ``shlex`` or ``os.kill`` and ended in an internal error. Each column is checked once, here;
    a value of another type reads as NULL (the field's default), as a column the file lacks.
    """
    if value is None:
        return None
    if name in JSON_FIELDS:
        return _json_shape(name, value)
    kind = _KINDS.get(name)
    if kind == "TEXT":
        return value if isinstance(value, str) else _text(value)
    if kind == "INTEGER":
        ok = isinstance(value, int) and not isinstance(value, bool) and abs(value) < _INT_MAX
        return value if ok else None
    if kind == "REAL":
        low, high = _TIMES if name in ("started", "ended") else (-1e18, 1e18)
        ok = isinstance(value, int | float) and not isinstance(value, bool) \
            and math.isfinite(value) and low <= value < high
        return float(value) if ok else None
    return value


def _text(value: Any) -> str | None:
    """A BLOB in a text column: the store's own form of text holding surrogates (or bytes a
    script wrote), read back as that text."""
    if not isinstance(value, bytes):
        return None
    try:
        return value.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return value.decode("utf-8", "surrogateescape")


def _json_shape(name: str, value: Any) -> Any:
    if name in _LISTS_OF_STR:
        return value if isinstance(value, list) and all(isinstance(w, str) for w in value) \
            else None
    if name in _DICTS:
        return value if isinstance(value, dict) else None
    if name == "phases":
        return {k: float(v) for k, v in value.items() if isinstance(v, int | float)
                and not isinstance(v, bool) and math.isfinite(v)} \
            if isinstance(value, dict) else None
    if name == "windows":
        return [w for w in value if isinstance(w, dict)] if isinstance(value, list) else None
    return value


@dataclass(frozen=True)
class RunRecord:
    """A row of the history (JSON columns decoded)."""

    id: int
    started: float
    state: str
    name: str | None = None
    kind: str = "launched"
    demo: bool = False
    engine: str | None = None
    version: str | None = None
    host: str = ""
    command: str | None = None
    argv: list[str] | None = None
    flags: dict[str, Any] | None = None
    env_names: list[str] | None = None
    cwd: str | None = None
    ended: float | None = None
    log_path: str | None = None
    url: str | None = None
    pid: int | None = None
    pgid: int | None = None
    proc_start: str | None = None
    token: str | None = None
    parent: int | None = None
    phases: dict[str, float] | None = None
    ready_s: float | None = None
    crash: dict[str, Any] | None = None
    metrics: dict[str, Any] | None = None
    windows: list[dict[str, Any]] | None = None
    baseline: float | None = None
    notes: str | None = None

    @property
    def label(self) -> str:
        return f"#{self.id} {self.name}" if self.name else f"#{self.id}"


__all__ = ["FIELDS", "JSON_FIELDS", "RunRecord", "typed"]
