"""The run history: one SQLite file in the user data directory.

Every run eagle-tui launches is a row (and, from the dashboard, every run it watches), so a
relaunch can be compared with the run before it and ``stop`` knows which process groups are
eagle-tui's to stop. SQLite in WAL mode with a busy timeout makes two eagle-tui processes
writing at once safe (a dashboard recording metrics while ``eagle-tui stop`` marks a run
stopped). Commands are stored redacted (:mod:`eagle_tui.model.launching.redact`); environment values
are never stored, only the names of variables passed with ``--env``.

Where: ``$EAGLE_TUI_DATA_DIR`` if set, else platformdirs' user data dir for ``eagle-tui``.
A directory that cannot be created or written gives :class:`HistoryError` with the path and the
reason, never a traceback.

More in docs/architecture.md, "Module notes", ``history/store``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eagle_tui.errors import EagleError
from eagle_tui.files import NotRegularFileError, check_regular
from eagle_tui.history.records import (
    FIELDS,
    FINAL_STATES,
    JSON_FIELDS,
    RunRecord,
    first_timeline,
    typed,
)
from eagle_tui.model.boundary.loaders import LoadError, load_json

SCHEMA_VERSION = 3  # 2: the timeline column (older rows get the one they imply); 3: container
# without these a row means nothing (the order of the runs, what became of them): a file that
# lacks one is refused rather than half read
REQUIRED = ("id", "started", "state")
_FALLBACK: dict[str, Any] = {"id": 0, "started": 0.0, "state": "unknown"}
BUSY_TIMEOUT_MS = 5_000
STOP_SEEN_S = 120.0  # an "ended" this recent before a "stopped" was the stop itself
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    {", ".join(f"{name} {kind}" for name, kind in FIELDS)}
);
"""
# made once the columns they index are known to be there (a file may come from another version)
_INDEXES = """
CREATE INDEX IF NOT EXISTS runs_started ON runs (started);
CREATE UNIQUE INDEX IF NOT EXISTS runs_name ON runs (name);
"""


class HistoryError(EagleError):
    """The run history cannot be used (unusable directory, unknown run, corrupt file)."""


def data_dir() -> Path:
    """Where the history lives (``$EAGLE_TUI_DATA_DIR`` or the platform's user data dir)."""
    env = os.environ.get("EAGLE_TUI_DATA_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("eagle-tui", appauthor=False))


def _encode(name: str, value: Any) -> Any:
    if name in JSON_FIELDS:
        return None if value is None else json.dumps(value, sort_keys=True, default=str)
    if isinstance(value, bool):
        return int(value)
    return value


def _storable(value: Any) -> Any:
    """``value`` as SQLite takes it: text holding a surrogate (an undecodable byte of an argv
    or a file name, ``launch --name $'\\xff'``) is not UTF-8, which SQLite's text must be, and
    raised out of ``launch`` as an internal error; it is kept as its bytes (a BLOB, read back
    by :func:`~eagle_tui.history.records.typed`), so the same path is found again."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass")
    return value


def _decode(row: sqlite3.Row) -> RunRecord:
    data: dict[str, Any] = {}
    for key in _COLUMNS:
        value = row[key]
        if key in JSON_FIELDS and value is not None:
            try:
                value = load_json(value, f"the history's {key}") if isinstance(value, str) \
                    else None
            except LoadError:
                value = None
        value = typed(key, value)
        if value is None and key in REQUIRED:  # (a row edited by hand: never a crash later)
            value = _FALLBACK[key]
        if value is not None:  # NULL (or a column the file lacks): the field's default
            data[key] = value
    data["demo"] = bool(data.get("demo"))
    return RunRecord(**data)


_COLUMNS = ("id", *(name for name, _ in FIELDS))


def _addable(kind: str) -> str:
    """The column type ``ALTER TABLE ADD COLUMN`` accepts: a NOT NULL column needs a default
    there, so one without it is added nullable (rows of the older file have no value)."""
    return kind.replace(" NOT NULL", "") if "DEFAULT" not in kind else kind


class RunStore:
    """The history file, opened on demand (one short transaction per call)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else data_dir() / "runs.sqlite3"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            check_regular(self.path)  # a FIFO here would block sqlite's open
            with self._connect() as db:
                db.executescript(_SCHEMA)
                self._migrate(db)
                if "name" in self._present:
                    db.executescript(_INDEXES)
        except NotRegularFileError as exc:
            raise HistoryError(f"run history unusable: {exc}") from None
        except (OSError, sqlite3.Error) as exc:
            raise HistoryError(f"run history unusable at {self.path}: {exc} (set "
                               "EAGLE_TUI_DATA_DIR to a writable folder)") from None
        # the select list: a column this file lacks (a newer version dropped it) reads as NULL
        self._select = ", ".join(c if c in self._present else f"NULL AS {c}" for c in _COLUMNS)

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Additive only: the columns this version knows that the file lacks are added, the
        file's own (a newer version's) are left alone, ``user_version`` is only ever raised."""
        present = {str(r[1]) for r in db.execute("PRAGMA table_info(runs)").fetchall()}
        missing = [c for c in REQUIRED if c not in present]
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if missing:
            raise HistoryError(
                f"run history at {self.path} has no {', '.join(missing)} column (written by a "
                f"newer eagle-tui, schema {version}); use that version, or set "
                "EAGLE_TUI_DATA_DIR to another folder")
        if version <= SCHEMA_VERSION:
            for name, kind in FIELDS:
                if name not in present:
                    db.execute(f"ALTER TABLE runs ADD COLUMN {name} {_addable(kind)}")
                    present.add(name)
            if version < 2:
                self._fill_timelines(db)
            if version < SCHEMA_VERSION:
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        self._present = frozenset(present)

    @staticmethod
    def _fill_timelines(db: sqlite3.Connection) -> None:
        """Rows written before the timeline: the one their columns imply."""
        rows = db.execute("SELECT id, started, state, ended, ready_s FROM runs "
                          "WHERE timeline IS NULL").fetchall()
        for r in rows:
            started = typed("started", r["started"])
            if started is None:
                continue
            line = first_timeline(started, typed("state", r["state"]) or "unknown",
                                  typed("ended", r["ended"]), typed("ready_s", r["ready_s"]))
            db.execute("UPDATE runs SET timeline = ? WHERE id = ?",
                       (_encode("timeline", line), r["id"]))

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            db.row_factory = sqlite3.Row
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            yield db
        finally:
            db.close()

    def _run(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        params = tuple(_storable(p) for p in params)
        try:
            with self._connect() as db:
                db.execute("BEGIN IMMEDIATE")
                try:
                    rows = db.execute(sql, params).fetchall()
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                return rows
        except sqlite3.Error as exc:
            raise HistoryError(f"run history at {self.path}: {exc}") from None

    # ------------------------------------------------------------------ writing
    def add(self, **fields: Any) -> RunRecord:
        """A new run; ``name`` defaults to ``<engine>-<id>`` (unique)."""
        fields.setdefault("started", time.time())
        fields.setdefault("state", "starting")
        fields.setdefault("timeline", [[fields["state"], fields["started"], ""]])
        unknown = set(fields) - {name for name, _ in FIELDS}
        if unknown:
            raise ValueError(f"unknown run fields: {sorted(unknown)}")
        names = list(fields)
        sql = (f"INSERT INTO runs ({', '.join(names)}) VALUES "
               f"({', '.join('?' for _ in names)}) RETURNING id")
        try:
            rows = self._run(sql, tuple(_encode(n, fields[n]) for n in names))
        except HistoryError as exc:
            if "UNIQUE" in str(exc) and "name" in fields:
                raise HistoryError(f"a run named {fields['name']!r} exists already") from None
            raise
        run_id = int(rows[0][0])
        if not fields.get("name"):
            self._run("UPDATE runs SET name = ? WHERE id = ?",
                      (f"{fields.get('engine') or 'run'}-{run_id}", run_id))
        return self.get(str(run_id))

    def update(self, run_id: int, *, unless_state: str | None = None, **fields: Any) -> None:
        """Set ``fields`` of run ``run_id`` (``unless_state``: not when its state is that one,
        or ``"final"``: not when it is one of :data:`FINAL_STATES`, so a watcher's summary never
        turns a run ``stop`` or ``K`` stopped, or one that ended, back into a live one). A new
        state joins the run's timeline."""
        if not fields:
            return
        unknown = set(fields) - {name for name, _ in FIELDS}
        if unknown:
            raise ValueError(f"unknown run fields: {sorted(unknown)}")
        if "state" in fields and "timeline" in self._present:
            self._update_with_timeline(run_id, unless_state, fields)
            return
        sets = ", ".join(f"{n} = ?" for n in fields)
        values = (*(_encode(n, v) for n, v in fields.items()), run_id)
        if unless_state is None:
            self._run(f"UPDATE runs SET {sets} WHERE id = ?", values)
        else:
            self._run(f"UPDATE runs SET {sets} WHERE id = ? AND state != ?",
                      (*values, unless_state))

    def _update_with_timeline(self, run_id: int, unless_state: str | None,
                              fields: dict[str, Any]) -> None:
        """An update that sets the state: a new state joins the timeline (with its time), in
        the same transaction as the read, so two writers never lose an entry."""
        try:
            with self._connect() as db:
                db.execute("BEGIN IMMEDIATE")
                try:
                    row = db.execute("SELECT state, timeline FROM runs WHERE id = ?",
                                     (run_id,)).fetchone()
                    current = typed("state", row["state"]) if row is not None else None
                    final = unless_state == "final" and current in FINAL_STATES
                    skip = row is None or final or (
                        unless_state is not None and current == unless_state)
                    if not skip:
                        fields = self._with_entry(row, current, fields)
                        sets = ", ".join(f"{n} = ?" for n in fields)
                        db.execute(f"UPDATE runs SET {sets} WHERE id = ?", tuple(
                            _storable(v) for v in (*(_encode(n, v) for n, v in fields.items()),
                                                   run_id)))
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        except sqlite3.Error as exc:
            raise HistoryError(f"run history at {self.path}: {exc}") from None

    @staticmethod
    def _with_entry(row: sqlite3.Row, current: str | None,
                    fields: dict[str, Any]) -> dict[str, Any]:
        state = fields["state"]
        if state == current or "timeline" in fields:
            return fields
        raw = row["timeline"]
        try:
            old = typed("timeline", load_json(raw, "the history's timeline")) \
                if isinstance(raw, str) else None
        except LoadError:
            old = None
        when = fields.get("ended") if state in FINAL_STATES | {"crashed"} else None
        entry = [state, when if isinstance(when, float) else time.time(), ""]
        line = list(old or [])
        if state == "stopped" and line and line[-1][0] == "ended" \
                and entry[1] - line[-1][1] < STOP_SEEN_S:
            line.pop()  # the watcher saw the server go while it was being stopped
        return {**fields, "timeline": [*line, entry][-200:]}

    def mark(self, run_id: int, state: str, note: str = "", t: float | None = None) -> None:
        """Add ``[state, t, note]`` to run ``run_id``'s timeline without changing its state
        (``relaunched``, ``#7``: what became of it after it ended)."""
        rec = self.get(str(run_id))
        entry = [state, t if t is not None else time.time(), note]
        self._run("UPDATE runs SET timeline = ? WHERE id = ?",
                  (_encode("timeline", [*(rec.timeline or []), entry][-200:]), run_id))

    def note(self, run_id: int, text: str) -> None:
        self.update(run_id, notes=text)

    def remove(self, run_id: int) -> None:
        self._run("DELETE FROM runs WHERE id = ?", (run_id,))

    # ------------------------------------------------------------------ reading
    def _demo_where(self, demo: bool | None) -> str:
        if demo is None or "demo" not in self._present:
            return ""
        return f"WHERE demo = {int(demo)}"

    def list(self, *, demo: bool | None = False, limit: int = 1000) -> list[RunRecord]:
        """Runs oldest first (``demo``: only demo runs, ``None``: both)."""
        where = self._demo_where(demo)
        rows = self._run(f"SELECT * FROM (SELECT {self._select} FROM runs {where} ORDER BY "
                         f"started DESC, id DESC LIMIT ?) ORDER BY started, id", (limit,))
        return [_decode(r) for r in rows]

    def get(self, ref: str, *, demo: bool | None = None) -> RunRecord:
        """A run by id, name, ``last`` or ``last~N`` (N runs before the last)."""
        ref = ref.strip()
        if ref == "last" or ref.startswith("last~"):
            back = ref.removeprefix("last").removeprefix("~") or "0"
            if not back.isdigit() or len(back) > 6:
                raise HistoryError(f"bad run reference {ref!r} (last, last~1, an id or a name)")
            where = self._demo_where(demo)
            rows = self._run(f"SELECT {self._select} FROM runs {where} ORDER BY started DESC, "
                             "id DESC LIMIT 1 OFFSET ?", (int(back),))
        elif ref.isdigit() and len(ref) < 19:
            rows = self._run(f"SELECT {self._select} FROM runs WHERE id = ?", (int(ref),))
        else:
            rows = self._run(f"SELECT {self._select} FROM runs WHERE name = ?", (ref,))
        if not rows:
            raise HistoryError(f"no run {ref!r} in the history ({self.path})")
        return _decode(rows[0])


def baseline_of(ref: str, store: RunStore | None = None) -> float:
    """The tok/s median of recorded run ``ref``: ``--baseline-run`` (``HistoryError`` when the
    run is unknown or has no tok/s figure)."""
    rec = (store or RunStore()).get(ref)
    value = (rec.metrics or {}).get("tok_s_median")
    if not isinstance(value, (int, float)) or value <= 0:
        raise HistoryError(f"run {rec.label} has no tok/s figure to use as the baseline")
    return float(value)


__all__ = ["HistoryError", "RunStore", "baseline_of", "data_dir"]
