"""Text of disputed width in a real terminal (tmux): a crash message stays inside its pane.

A crash message quoting a Hindi prompt (spacing marks: Rich counts 0 cells, tmux draws 1), emoji
with skin tones and joined emoji is replayed into the dashboard. Every row of the Startup pane
must end at its border with the Metrics pane's border right after it, and no letter of the
message may stand beyond it: before ``ui/cellwidth`` the rows were shifted and a letter was
left over the Metrics pane.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "sglang-cpu" / "eagle3.log"
PROMPT = ("नमस्ते दुनिया, कृपया मेरा सवाल पढ़ें और जवाब दें, धन्यवाद "
          + "\U0001f9d1\U0001f3fd" * 6 + " \U0001f468\u200d\U0001f469\u200d\U0001f467 \u2764\ufe0f")
CRASH = ("[2026-12-01 13:16:00] Scheduler hit an exception: Traceback (most recent call last):\n"
         '  File "/sgl/y.py", line 3, in g\n'
         f"torch.OutOfMemoryError: CUDA out of memory. prompt='{PROMPT}' "
         "Tried to allocate 2.00 GiB\n")
FOREIGN = re.compile("[\u0900-\u097f\U0001f300-\U0001faff]")


@pytest.fixture
def tmux() -> Iterator[list[str]]:
    path = shutil.which("tmux")
    if path is None:
        if os.environ.get("EAGLE_TUI_REQUIRE_TMUX"):
            pytest.fail("tmux is required (EAGLE_TUI_REQUIRE_TMUX is set) but not installed")
        pytest.skip("tmux not installed")
    cmd = [path, "-L", f"eagle-widths-{uuid.uuid4().hex[:8]}"]
    try:
        yield cmd
    finally:
        subprocess.run([*cmd, "kill-server"], capture_output=True, timeout=10, check=False)


def _startup_rows(screen: str) -> list[str]:
    rows = screen.splitlines()
    top = next(i for i, r in enumerate(rows) if r.startswith("┏"))
    bottom = next(i for i, r in enumerate(rows) if i > top and r.startswith("┗"))
    return rows[top + 1 : bottom]


def test_a_crash_message_of_disputed_widths_stays_in_its_pane(tmux: list[str],
                                                              tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    head = FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)[:70]
    log.write_text("".join(head) + CRASH, encoding="utf-8")
    app = f"env -u COLUMNS -u LINES {sys.executable} -m eagle_tui replay {log}"
    subprocess.run([*tmux, "new-session", "-d", "-s", "w", "-x", "160", "-y", "48", app],
                   check=True, timeout=10)
    end = time.monotonic() + 40
    screen = ""
    while time.monotonic() < end:
        screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "w"], check=True,
                                capture_output=True, text=True, timeout=10).stdout
        if "CRASHED" in screen and "Tried to allocate" in screen:
            break
        time.sleep(0.3)
    assert "Tried to allocate" in screen, screen
    time.sleep(1.5)  # the partial repaints that shifted the rows come after the first frame
    screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "w"], check=True,
                            capture_output=True, text=True, timeout=10).stdout
    rows = _startup_rows(screen)
    assert any(FOREIGN.search(r) for r in rows), screen  # the message is shown
    for row in rows:
        assert row.startswith("┃"), screen
        _, sep, rest = row[1:].partition("┃")
        assert sep and rest.startswith("│"), (row, screen)  # Metrics' border, no letter between
        assert not FOREIGN.search(rest), (row, screen)
