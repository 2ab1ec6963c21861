"""One run of a server, as the history keeps it (no I/O here).

``kind`` says how eagle-tui knew the run: ``launched`` (it started it, so it may stop it),
``watched`` or ``attached`` (read-only, always). ``pgid``/``proc_start``/``token`` identify the
launched process group for ``stop``: the group id, the leader's start time in clock ticks since
boot (``/proc/PID/stat`` field 22) and a random token in every member's environment
(``EAGLE_TUI_RUN``), so a reused pid or a foreign group is never signalled. A launched
container's run keeps its CLI, id, name, image and options in ``container`` instead.
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
    ("log_offset", "INTEGER"),  # where the run's lines begin in log_path (a file it appended to)
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
    ("timeline", "TEXT"),  # JSON list of [state, time, note]: the states as they happened
    ("container", "TEXT"),  # JSON {cli, id, name, image, options}: a launched container's run
)
JSON_FIELDS = frozenset({"argv", "flags", "env_names", "phases", "crash", "metrics", "windows",
                         "timeline", "container"})
_KINDS = {name: kind.split()[0] for name, kind in FIELDS} | {"id": "INTEGER"}
_INT_MAX = 2**63  # SQLite's own integers; a larger one would overflow a pid or a group id
# A time is seconds since 1970 that the calendar functions can show (year 5138 at most): a
# started time of 7e16 overflowed ``time.localtime`` in ``runs list``.
_TIMES = (0.0, 1e11)
_LISTS_OF_STR = frozenset({"argv", "env_names"})
_DICTS = frozenset({"flags", "crash", "metrics", "container"})


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
    if kind == "INTEGER":  # ids, pids, groups, offsets, flags: none is negative
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _INT_MAX
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
    if name == "timeline":
        return [_entry(e) for e in value if _entry(e) is not None] \
            if isinstance(value, list) else None
    return value


def _entry(e: Any) -> list[Any] | None:
    """A timeline entry ``[state, time, note]`` (the note may be missing), or ``None``."""
    if not isinstance(e, list) or not 2 <= len(e) <= 3 or not isinstance(e[0], str):
        return None
    t = typed("started", e[1])
    note = e[2] if len(e) == 3 else ""
    if t is None or not isinstance(note, str):
        return None
    return [e[0], t, note]


# a run in one of these states stays in it: only the write that ended it may change it
FINAL_STATES = frozenset({"stopped", "ended", "exited"})


def state_text(state: str, timeline: list[list[Any]] | None) -> str:
    """``crashed → relaunched as #7``: the state, and what became of the run after it."""
    after = [e for e in timeline or () if e[0] == "relaunched"]
    if not after:
        return state
    return f"{state} → relaunched as {after[-1][2]}" if after[-1][2] else f"{state} → relaunched"


def first_timeline(started: float, state: str, ended: float | None,
                   ready_s: float | None) -> list[list[Any]]:
    """The timeline an older row implies (written before the history kept one)."""
    out: list[list[Any]] = [["started", started, ""]]
    if ready_s is not None:
        out.append(["ready", started + ready_s, ""])
    if state not in ("starting", "ready") and (ended is not None or state != "serving"):
        out.append([state, ended if ended is not None else started, "" if ended is not None
                    else "time unknown (recorded before the history kept a timeline)"])
    return out


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
    log_offset: int | None = None
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
    timeline: list[list[Any]] | None = None
    container: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        return f"#{self.id} {self.name}" if self.name else f"#{self.id}"


    @property
    def state_text(self) -> str:
        return state_text(self.state, self.timeline)

    def container_text(self, key: str) -> str:
        """A text field of the run's container (``""``: none, or not text)."""
        value = (self.container or {}).get(key)
        return value if isinstance(value, str) else ""


__all__ = ["FIELDS", "FINAL_STATES", "JSON_FIELDS", "RunRecord", "first_timeline", "state_text",
           "typed"]
