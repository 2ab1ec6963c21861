"""The rules both process watchers share (``sources/process_rules.py``)."""

from __future__ import annotations

import psutil

from eagle_tui.model.events import ProcessExited, ProcessSample
from eagle_tui.sources.process_rules import (
    STATUS_BY_PS_LETTER,
    STATUS_BY_PSUTIL_NAME,
    end_of_watch,
    has_exited,
    topmost,
)


def test_both_state_tables_name_the_same_kernel_states_alike() -> None:
    psutil_names = {psutil.STATUS_RUNNING: "R", psutil.STATUS_SLEEPING: "S",
                    psutil.STATUS_DISK_SLEEP: "D", psutil.STATUS_IDLE: "I",
                    psutil.STATUS_ZOMBIE: "Z", psutil.STATUS_DEAD: "X",
                    psutil.STATUS_STOPPED: "T", psutil.STATUS_TRACING_STOP: "t"}
    assert set(psutil_names) == set(STATUS_BY_PSUTIL_NAME)
    for name, letter in psutil_names.items():
        assert STATUS_BY_PSUTIL_NAME[name] == STATUS_BY_PS_LETTER[letter]
    assert {s for s in STATUS_BY_PS_LETTER.values() if has_exited(s)} == {"zombie", "exited"}
    assert not has_exited("running") and not has_exited("unknown")


def test_topmost_is_the_holder_whose_parent_does_not_hold() -> None:
    parents = {100: 1, 101: 100, 102: 101, 200: 1}
    assert topmost({101, 102, 100}, parents.get) == 100
    assert topmost({101, 102}, parents.get) == 101
    assert topmost({100, 200}, parents.get) == 100  # two roots: the lowest pid
    assert topmost({300}, parents.get) is None  # not seen any more
    assert topmost(set(), parents.get) is None


def test_a_watch_ends_the_same_way_whatever_watched() -> None:
    assert end_of_watch(5.0, 7, seen=False) == [ProcessSample(5.0, 7, "not_found"),
                                                ProcessExited(5.0, 7)]
    assert end_of_watch(5.0, 7, seen=True) == [ProcessExited(5.0, 7)]
    assert end_of_watch(5.0, 7, seen=True, final="zombie", name="python", exit_code=137,
                        signal=9) == [ProcessSample(5.0, 7, "zombie", "python"),
                                      ProcessExited(5.0, 7, 137, 9)]

