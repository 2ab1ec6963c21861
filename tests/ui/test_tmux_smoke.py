"""Smoke test in a real terminal: the installed ``eagle-tui demo`` inside tmux.

Captures the pane until all five panes are drawn and the simulated server is serving, checks the
compact layout after a resize to 80×24, then quits with ``q`` and checks the process ended. It
uses its own tmux socket (``-L``) and kills only that server.

Skipped only when tmux is missing and ``EAGLE_TUI_REQUIRE_TMUX`` is unset (CI sets it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

TMUX = shutil.which("tmux")
PANES = ("Startup", "Metrics", "GPUs", "Log", "Alerts")


def eagle_tui_command() -> str:
    beside = Path(sys.executable).parent / "eagle-tui"
    found = str(beside) if beside.exists() else shutil.which("eagle-tui")
    if found is None:
        pytest.fail("the eagle-tui console script is not installed (pip install -e .)")
    return found


@pytest.fixture
def tmux() -> Iterator[Callable[..., str]]:
    if TMUX is None:
        if os.environ.get("EAGLE_TUI_REQUIRE_TMUX"):
            pytest.fail("tmux is required (EAGLE_TUI_REQUIRE_TMUX is set) but not installed")
        pytest.skip("tmux not installed")
    sock = f"eagle-smoke-{uuid.uuid4().hex[:8]}"

    def run(*args: str) -> str:
        return subprocess.run([TMUX, "-L", sock, *args], check=True, capture_output=True,
                              text=True, timeout=10).stdout

    try:
        yield run
    finally:
        subprocess.run([TMUX, "-L", sock, "kill-server"], capture_output=True, timeout=10)


def wait_for(capture: Callable[[], str], ok: Callable[[str], bool], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    text = capture()
    while not ok(text) and time.monotonic() < deadline:
        time.sleep(0.25)
        text = capture()
    return text


def test_demo_dashboard_in_tmux(tmux: Callable[..., str]) -> None:
    # COLUMNS/LINES (pytest exports them) would override the pane's real size
    cmd = f"env -u COLUMNS -u LINES {eagle_tui_command()} demo --speed 20"
    tmux("new-session", "-d", "-s", "smoke", "-x", "160", "-y", "48", cmd)
    tmux("set-option", "-t", "smoke", "remain-on-exit", "on")

    def capture() -> str:
        return tmux("capture-pane", "-p", "-t", "smoke")

    def serving(text: str) -> bool:
        return all(f"─ {p}" in text for p in PANES) and "tok/s" in text and (
            "SERVING" in text or "READY" in text)

    text = wait_for(capture, serving, 90)
    assert serving(text), text
    assert "\x1b" not in text
    assert "8× NVIDIA H200" in text  # the demo's simulated GPUs
    assert "● following" in text

    tmux("resize-window", "-t", "smoke", "-x", "80", "-y", "24")
    text = wait_for(capture, lambda t: "Startup  Log  GPUs  Metrics  Alerts" in t, 15)
    assert "Startup  Log  GPUs  Metrics  Alerts" in text, text

    tmux("send-keys", "-t", "smoke", "q")
    dead = wait_for(lambda: tmux("list-panes", "-t", "smoke", "-F", "#{pane_dead}"),
                    lambda t: t.strip() == "1", 20)
    assert dead.strip() == "1", capture()
