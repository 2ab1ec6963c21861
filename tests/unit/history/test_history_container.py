"""A launched container's run in the history: the ``container`` column (schema 3) added to an
older file without touching its rows, read back through its type gate, and the way ``stop``
reads it (a recorded id that is not one is refused, never passed to the CLI)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.commands.runs import container_of, container_rows
from eagle_tui.history.records import FIELDS
from eagle_tui.history.store import SCHEMA_VERSION, RunStore
from eagle_tui.launch.container import ContainerLaunched
from eagle_tui.launch.plan import handle_of
from eagle_tui.launch.process import Launched

CID = "f4e15ff1ccaf" + "0" * 52
BOX = {"cli": "podman", "id": CID, "name": "eagle-tui-run-1-abcdef", "image": "img:1",
       "options": {"shm-size": "1g", "publish": ["8000:8000"]}}


def _older(path: Path, version: int) -> None:
    cols = [(n, k) for n, k in FIELDS if n != "container"]
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                   + ", ".join(f"{n} {k}" for n, k in cols) + ")")
        db.execute("INSERT INTO runs (started, state, pid, token, command) VALUES "
                   "(1000.0, 'stopped', 42, 'tok', 'python3 -m x')")
        db.execute(f"PRAGMA user_version = {version}")


@pytest.mark.parametrize("version", [0, 1, 2])
def test_an_older_file_opens_and_gains_the_column(tmp_path: Path, version: int) -> None:
    path = tmp_path / "runs.sqlite3"
    _older(path, version)
    store = RunStore(path)
    (old,) = store.list()
    assert old.container is None and old.pid == 42 and old.command == "python3 -m x"
    assert isinstance(handle_of(old), Launched)
    new = store.add(kind="launched", engine="sglang", state="starting", container=BOX)
    assert store.get(str(new.id)).container == BOX
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3


@pytest.mark.parametrize("junk", ['"text"', "[1, 2]", "{bad json", "7"])
def test_a_container_that_is_no_object_reads_as_none(tmp_path: Path, junk: str) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    run = store.add(kind="launched", state="starting")
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE runs SET container = ? WHERE id = ?", (junk, run.id))
    assert store.get(str(run.id)).container is None


def test_stop_reads_the_container_back_through_the_grammar(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    ok = store.add(kind="launched", state="ready", token="tok", container=BOX)
    handle = handle_of(ok)
    assert handle == ContainerLaunched("podman", CID, BOX["name"], "img:1", "tok")
    assert handle.follow() == {"log": None, "log_offset": 0, "pid": None, "container": CID,
                               "container_cli": "podman"}
    for bad in ({**BOX, "id": "--rm"}, {**BOX, "id": "x" * 64}, {**BOX, "cli": "sh"},
                {**BOX, "id": 7}):
        rec = store.add(kind="launched", state="ready", container=bad)
        with pytest.raises(ValueError, match="recorded container is not one"):
            handle_of(rec)


def test_compare_marks_the_container_options_that_differ(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    a = store.add(kind="launched", state="stopped", container=BOX)
    other: dict[str, Any] = {**BOX, "options": {"shm-size": "16g", "publish": ["8000:8000"],
                                                "memory": "64g"}}
    b = store.add(kind="launched", state="stopped", container=other)
    plain = store.add(kind="launched", state="stopped")
    rows, changed = container_rows([a, b])
    marks = {r[0].strip("* ").strip(): r[0].startswith("*") for r in rows}
    assert marks == {"image": False, "cli": False, "memory": True, "publish": False,
                     "shm-size": True}
    assert changed == [{"option": "memory", "from": None, "to": "64g"},
                       {"option": "shm-size", "from": "1g", "to": "16g"}]
    assert container_rows([plain, plain]) == ([], [])
    assert container_of(a) == f"container {BOX['name']} · img:1" and container_of(plain) == ""
