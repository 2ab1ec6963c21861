"""What ``launch`` says once its dashboard closes: the run it showed last is left as it is.

The dashboard's ``q`` leaves the server running (by design), and after an ``F``, ``R`` or ``E``
the run on screen is a relaunch whose number the user never typed; nothing said which run was
left or how to stop it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eagle_tui.commands.launch import _left_as_it_is
from eagle_tui.history.store import RunStore


def test_a_run_left_running_is_named_with_its_stop_and_attach(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    first = store.add(name="misconf", state="stopped")
    relaunch = store.add(name="sglang-2", state="ready", parent=first.id)
    _left_as_it_is(store, relaunch.id)
    err = capsys.readouterr().err.splitlines()
    assert err == ["eagle-tui launch: run #2 sglang-2 left as it is (ready): `eagle-tui stop 2` "
                   "stops it, `eagle-tui attach 2` watches it again"]
    _left_as_it_is(store, first.id)  # stopped (K, or stop): nothing to say
    _left_as_it_is(store, 99)  # (gone from the history meanwhile)
    assert capsys.readouterr().err == ""
