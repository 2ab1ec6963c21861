"""The history file read tolerantly: written by a newer or an older eagle-tui, or not a history.

Before: one extra column (a newer version's) made every read build ``RunRecord(**row)`` with an
unknown keyword: ``runs list``, ``runs show`` and ``watch`` exited 70. Now reads name their
columns, migrations only add, a column we can do without reads as NULL, and a file without one
we need (or not a database at all) is one line and exit 2.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eagle_tui.history.records import FIELDS
from eagle_tui.history.store import REQUIRED, SCHEMA_VERSION, HistoryError, RunStore
from tests.support.paths import REPO

ROOT = REPO
OPTIONAL = [name for name, _ in FIELDS if name not in REQUIRED]


def _db(path: Path, columns: list[tuple[str, str]], *, version: int,
        rows: list[dict[str, object]] | None = None, extra_table: bool = False) -> Path:
    """A history file as another version would write it: ``columns`` after ``id``."""
    with sqlite3.connect(path) as db:
        cols = ", ".join(f'"{n}" {k}' for n, k in columns)
        db.execute(f"CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, {cols})")
        for row in rows or []:
            names = [n for n in row if n in {c for c, _ in columns}]
            quoted = ", ".join(f'"{n}"' for n in names)
            db.execute(f"INSERT INTO runs ({quoted}) VALUES "
                       f"({', '.join('?' for _ in names)})", [row[n] for n in names])
        if extra_table:
            db.execute("CREATE TABLE gpu_samples (run INTEGER, t REAL, util REAL)")
        db.execute(f"PRAGMA user_version = {version}")
    return path


def _eagle(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "EAGLE_TUI_DATA_DIR": str(data)}
    return subprocess.run([sys.executable, "-m", "eagle_tui", *args], cwd=data, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


ROW = {"name": "run-a", "engine": "sglang", "started": 1_700_000_000.0, "state": "exited",
       "metrics": '{"tok_s_median": 90.0}', "demo": 0, "kind": "launched", "host": ""}


def test_a_newer_file_with_an_extra_column_and_table_is_read(tmp_path: Path) -> None:
    cols = [*FIELDS, ("gpu_model", "TEXT NOT NULL DEFAULT 'h100'"), ("energy_j", "REAL")]
    path = _db(tmp_path / "runs.sqlite3", cols, version=SCHEMA_VERSION + 1,
               rows=[{**ROW, "energy_j": 5.0}], extra_table=True)
    store = RunStore(path)
    (rec,) = store.list()
    assert rec.name == "run-a" and rec.metrics == {"tok_s_median": 90.0}
    assert store.get("last").id == rec.id == store.get("run-a").id
    new = store.add(engine="vllm", state="running")  # a write names its columns too
    assert store.get(str(new.id)).engine == "vllm"
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1


@pytest.mark.parametrize("args", [["runs", "list"], ["runs", "show", "last"]])
def test_runs_commands_read_a_newer_file(tmp_path: Path, args: list[str]) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _db(data / "runs.sqlite3", [*FIELDS, ("extra", "TEXT")], version=SCHEMA_VERSION + 3,
        rows=[{**ROW, "extra": "x"}], extra_table=True)
    proc = _eagle(data, *args)
    assert proc.returncode == 0, proc.stderr
    assert "run-a" in proc.stdout


def test_watch_records_into_a_newer_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _db(data / "runs.sqlite3", [*FIELDS, ("extra", "TEXT")], version=SCHEMA_VERSION + 1,
        rows=[ROW])
    log = tmp_path / "server.log"
    log.write_text("[2026-01-01 00:00:00] INFO hello\n")
    proc = _eagle(data, "watch", "--headless", "--log", str(log), "--duration", "1")
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr


def test_an_older_file_gains_the_columns_it_lacks(tmp_path: Path) -> None:
    old = [(n, k) for n, k in FIELDS if n not in ("windows", "baseline", "notes", "kind")]
    path = _db(tmp_path / "runs.sqlite3", old, version=0, rows=[ROW])
    store = RunStore(path)
    (rec,) = store.list()
    assert rec.kind == "launched" and rec.windows is None  # the added columns' defaults
    store.note(rec.id, "kept")
    assert store.get(str(rec.id)).notes == "kept"
    with sqlite3.connect(path) as db:
        names = {r[1] for r in db.execute("PRAGMA table_info(runs)")}
        assert {n for n, _ in FIELDS} <= names
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_newer_file_that_renamed_an_optional_column_reads_it_as_null(tmp_path: Path) -> None:
    cols = [(("comment" if n == "notes" else n), k) for n, k in FIELDS if n != "demo"]
    path = _db(tmp_path / "runs.sqlite3", cols, version=SCHEMA_VERSION + 1,
               rows=[{**ROW, "comment": "x"}])
    (rec,) = RunStore(path).list()
    assert rec.notes is None and rec.demo is False and rec.name == "run-a"


@pytest.mark.parametrize("dropped", REQUIRED[1:])
def test_a_file_without_a_column_we_need_is_one_line_and_exit_2(tmp_path: Path,
                                                                dropped: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    cols = [(n, k) for n, k in FIELDS if n != dropped]
    _db(data / "runs.sqlite3", cols, version=SCHEMA_VERSION + 7)
    newer = SCHEMA_VERSION + 7
    with pytest.raises(HistoryError, match=f"no {dropped} column.*newer eagle-tui, schema {newer}"):
        RunStore(data / "runs.sqlite3")
    proc = _eagle(data, "runs", "list")
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and dropped in proc.stderr


@pytest.mark.parametrize("content", [b"", b"not a database at all\n" * 100,
                                     b"SQLite format 3\x00" + bytes(range(256)) * 8])
def test_zero_byte_and_garbage_files(tmp_path: Path, content: bytes) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "runs.sqlite3").write_bytes(content)
    proc = _eagle(data, "runs", "list")
    if not content:  # an empty file is an empty database: the history starts in it
        assert proc.returncode == 0, proc.stderr
        return
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "run history" in proc.stderr and "Traceback" not in proc.stderr


def test_a_read_only_folder_is_one_line_and_exit_2() -> None:
    """As root permissions do not bind: the command then runs as ``nobody``."""
    base = Path(tempfile.mkdtemp(prefix="eagle-ro-"))
    try:
        os.chmod(base, 0o755)
        data = base / "data"
        data.mkdir()
        RunStore(data / "runs.sqlite3").add(engine="sglang", name="a")
        os.chmod(data / "runs.sqlite3", 0o644)
        os.chmod(data, 0o555)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1",
               "EAGLE_TUI_DATA_DIR": str(data), "HOME": str(base)}
        argv = [sys.executable, "-m", "eagle_tui", "runs", "list"]
        if os.geteuid() == 0:
            nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            # a checkout in a private folder (``mktemp -d`` is 0700) is closed to nobody: then
            # nobody cannot import eagle-tui at all, and there is no read-only case to run
            probe = subprocess.run([*nobody, sys.executable, "-c", "import eagle_tui.cli"],
                                   cwd=base, env=env, capture_output=True, timeout=60,
                                   check=False)
            if probe.returncode != 0:
                pytest.skip("the checkout or its venv is not readable by nobody (a 0700 folder)")
            argv = [*nobody, *argv]
        proc = subprocess.run(argv, cwd=base, env=env, capture_output=True, text=True,
                              timeout=60, check=False)
        assert proc.returncode == 2, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "run history" in proc.stderr
    finally:
        os.chmod(base / "data", 0o755)
        subprocess.run(["rm", "-rf", str(base)], check=False)


column_types = st.sampled_from(["TEXT", "REAL", "INTEGER", "BLOB", "", "TEXT DEFAULT 'x'"])
extra_names = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True).filter(
    lambda n: n not in {c for c, _ in FIELDS} | {"id"})


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dropped=st.sets(st.sampled_from(OPTIONAL)),
       extra=st.dictionaries(extra_names, column_types, max_size=4),
       version=st.integers(0, 50), shuffle=st.randoms())
def test_generated_schemas_read_or_refuse_in_one_line(
        tmp_path_factory: pytest.TempPathFactory, dropped: set[str], extra: dict[str, str],
        version: int, shuffle: object) -> None:
    """Any subset of our optional columns, in any order, with any extra columns and any
    version: the rows are read (missing columns NULL), never a crash."""
    cols = [(n, k) for n, k in FIELDS if n not in dropped] + list(extra.items())
    shuffle.shuffle(cols)  # type: ignore[attr-defined]
    path = _db(tmp_path_factory.mktemp("schema") / "runs.sqlite3", cols, version=version,
               rows=[ROW])
    store = RunStore(path)
    (rec,) = store.list()
    assert rec.started == ROW["started"] and rec.state == "exited"
    assert rec.name == (None if "name" in dropped else "run-a")
    assert store.get("last").id == rec.id
