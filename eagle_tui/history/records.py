"""One run of a server, as the history keeps it (no I/O here).

``kind`` says how eagle-tui knew the run: ``launched`` (it started it, so it may stop it),
``watched`` or ``attached`` (read-only, always). ``pgid``/``proc_start``/``token`` identify the
launched process group for ``stop``: the group id, the leader's start time in clock ticks since
boot (``/proc/PID/stat`` field 22) and a random token in every member's environment
(``EAGLE_TUI_RUN``), so a reused pid or a foreign group is never signalled.
"""

from __future__ import annotations

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


__all__ = ["FIELDS", "JSON_FIELDS", "RunRecord"]
