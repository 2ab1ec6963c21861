"""The suite never touches the user's own eagle-tui folders (tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import platformdirs

from eagle_tui.history.store import data_dir
from eagle_tui.ui.config import default_config_path


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def test_every_app_folder_is_redirected_away_from_the_users(isolation_guard: Any) -> None:
    resolved = {
        "history": data_dir(),
        "config": default_config_path(),
        "data": Path(platformdirs.user_data_dir("eagle-tui", appauthor=False)),
        "state": Path(platformdirs.user_state_dir("eagle-tui", appauthor=False)),
        "cache": Path(platformdirs.user_cache_dir("eagle-tui", appauthor=False)),
    }
    for name, path in resolved.items():
        for kind, user in isolation_guard.user_dirs.items():
            assert not _inside(path, user), f"{name} resolves into the user's {kind} folder {user}"
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
                "EAGLE_TUI_DATA_DIR"):
        assert "eagle-tui-tests-" in os.environ[var], var


def test_each_test_gets_folders_of_its_own(tmp_path: Path) -> None:
    first = os.environ["EAGLE_TUI_DATA_DIR"]
    assert Path(first).is_dir()
    assert first != os.environ.get("_EAGLE_TUI_PREVIOUS_TEST_DIR")
    os.environ["_EAGLE_TUI_PREVIOUS_TEST_DIR"] = first


def test_each_test_gets_folders_of_its_own_too() -> None:
    assert os.environ["EAGLE_TUI_DATA_DIR"] != os.environ.get("_EAGLE_TUI_PREVIOUS_TEST_DIR")


def test_the_guard_sees_a_write(tmp_path: Path, isolation_guard: Any) -> None:
    fingerprint = isolation_guard.fingerprint
    folder = tmp_path / "eagle-tui"
    before = fingerprint(folder)
    assert before is None
    folder.mkdir()
    (folder / "history.sqlite3").write_bytes(b"x")
    after = fingerprint(folder)
    assert after is not None and after != before
    (folder / "history.sqlite3").write_bytes(b"xy")
    assert fingerprint(folder) != after


def test_the_guard_names_a_touched_user_folder(isolation_guard: Any) -> None:
    before = {kind: isolation_guard.fingerprint(path)
              for kind, path in isolation_guard.user_dirs.items()}
    assert isolation_guard.touched(before) == []
    kind = next(iter(before))
    assert isolation_guard.touched({**before, kind: (("ghost", 1, 1),)}) == [
        f"{kind}: {isolation_guard.user_dirs[kind]}"]
