"""``NO_COLOR`` (https://no-color.org) means no colour in the dashboard (issue 17, item 6):
Textual alone turned every colour into a 256-colour grey. Checked in a real terminal (tmux
``capture-pane -e`` shows the SGR sequences the pane holds)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
TMUX = shutil.which("tmux")
SAMPLE = ROOT / "eagle_tui" / "data" / "sample-sglang-eagle3.log"
COLOUR_SGR = re.compile(r"\x1b\[[0-9;]*(?:38|48);[25];[0-9;]*m|\x1b\[[0-9;]*\b(?:3|4|9|10)[0-7]m")


def _pane(no_color: bool) -> str:
    if TMUX is None:
        if os.environ.get("EAGLE_TUI_REQUIRE_TMUX"):
            pytest.fail("tmux is required (EAGLE_TUI_REQUIRE_TMUX is set) but not installed")
        pytest.skip("tmux not installed")
    sock = f"eagle-nocolor-{uuid.uuid4().hex[:8]}"
    env = f"NO_COLOR=1 PYTHONPATH={ROOT}" if no_color else f"PYTHONPATH={ROOT}"
    cmd = (f"env -u COLUMNS -u LINES {'-u NO_COLOR ' if not no_color else ''}{env} "
           f"{sys.executable} -m eagle_tui replay {SAMPLE}")

    def tmux(*args: str) -> str:
        return subprocess.run([TMUX, "-L", sock, *args], check=True, capture_output=True,
                              text=True, timeout=10).stdout

    try:
        tmux("new-session", "-d", "-s", "nc", "-x", "140", "-y", "40", cmd)
        deadline = time.monotonic() + 60
        text = ""
        while time.monotonic() < deadline:
            text = tmux("capture-pane", "-e", "-p", "-t", "nc")
            if "Metrics" in text and "Log" in text and "tok/s" in text:
                time.sleep(1.0)
                return tmux("capture-pane", "-e", "-p", "-t", "nc")
            time.sleep(0.25)
        pytest.fail(f"the dashboard did not draw:\n{text}")
    finally:
        subprocess.run([TMUX, "-L", sock, "kill-server"], capture_output=True, timeout=10)


def test_no_color_draws_without_any_colour() -> None:
    text = _pane(no_color=True)
    assert COLOUR_SGR.search(text) is None, repr(COLOUR_SGR.search(text))
    assert "tok/s" in text


def test_colour_is_there_without_no_color() -> None:
    assert COLOUR_SGR.search(_pane(no_color=False)) is not None
