"""Terminal safety and a responsive UI in a real terminal (tmux) under hostile log lines.

The small CI version of ``benchmarks/bench_hostile.py``: the dashboard follows a log while the
24 hostile terminal sequences (``bench_hostile.HOSTILE``: retitle, clear, leave the alternate
screen, OSC 52, hyperlinks, DCS, 8-bit CSI, ...) and then 40,000-digit ``Capturing batches``
lines are appended; every key probe must reach the screen, and afterwards the pane title is
unchanged, the alternate screen still on and the dashboard still drawn.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.bench import bench_module

pytestmark = [pytest.mark.tmux, pytest.mark.slow]


def _bench() -> ModuleType:
    if shutil.which("tmux") is None:
        if os.environ.get("EAGLE_TUI_REQUIRE_TMUX"):
            pytest.fail("tmux is required (EAGLE_TUI_REQUIRE_TMUX is set) but not installed")
        pytest.skip("tmux not installed")
    return bench_module("bench_hostile")


@pytest.mark.parametrize("name", ["escapes", "digits"])
def test_hostile_lines_leave_the_terminal_intact_and_keys_answered(name: str,
                                                                   tmp_path: Path) -> None:
    bench = _bench()
    row = bench.scenario(name, tmp_path, 2.5)
    assert row["terminal intact"] == "yes", row
    assert row["missed"] == "0" and int(row["keys"]) >= 4, row
