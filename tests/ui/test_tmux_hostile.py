"""Terminal safety and a responsive UI in a real terminal (tmux) under hostile log lines.

The small CI version of ``benchmarks/bench_hostile.py``: the dashboard follows a log while the
24 hostile terminal sequences (``bench_hostile.HOSTILE``: retitle, clear, leave the alternate
screen, OSC 52, hyperlinks, DCS, 8-bit CSI, ...) and then 40,000-digit ``Capturing batches``
lines are appended; every key probe must reach the screen, and afterwards the pane title is
unchanged, the alternate screen still on and the dashboard still drawn.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]
BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_hostile.py"


def _bench() -> ModuleType:
    if shutil.which("tmux") is None:
        if os.environ.get("EAGLE_TUI_REQUIRE_TMUX"):
            pytest.fail("tmux is required (EAGLE_TUI_REQUIRE_TMUX is set) but not installed")
        pytest.skip("tmux not installed")
    sys.path.insert(0, str(BENCH.parent))
    spec = importlib.util.spec_from_file_location("bench_hostile", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["escapes", "digits"])
def test_hostile_lines_leave_the_terminal_intact_and_keys_answered(name: str,
                                                                   tmp_path: Path) -> None:
    bench = _bench()
    row = bench.scenario(name, tmp_path, 2.5)
    assert row["terminal intact"] == "yes", row
    assert row["missed"] == "0" and int(row["keys"]) >= 4, row
