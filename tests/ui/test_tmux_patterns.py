"""Hostile patterns in a real terminal (tmux): the filter, the search and a ``[[highlight]]``
rule of ``(a+)+$``-like shapes over lines of 40 ``a`` s and a ``!``, and every key answered.

``eagle-tui watch`` runs in its own tmux server (``benchmarks/bench_tui.py``'s harness) with a
config whose highlight rules are the shapes; each shape is typed into the filter box, then the
search box; the filter probe (``/`` then ``Esc``) runs after each, and ``q`` must end the app.
A key is *answered* when its effect reaches the screen within 5 s: the check is the count of
answered probes, all of them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.bench import bench_module

pytestmark = [pytest.mark.tmux, pytest.mark.slow]
SHAPES = ["(a+)+$", "(a|aa)+$", "(.*a){20}", "((a*)*)*b"]


def _bench() -> ModuleType:
    if shutil.which("tmux") is None:
        if os.environ.get("EAGLE_TUI_REQUIRE_TMUX"):
            pytest.fail("tmux is required (EAGLE_TUI_REQUIRE_TMUX is set) but not installed")
        pytest.skip("tmux not installed")
    return bench_module("bench_tui")


def test_hostile_patterns_in_tmux_leave_every_key_answered(tmp_path: Path) -> None:
    bench = _bench()
    log = tmp_path / "hostile.log"
    log.write_text("".join(f"[2025-11-20 10:14:31 TP0] {'a' * 40}!\n" for _ in range(200)))
    config = tmp_path / "config.toml"
    config.write_text("".join(f"[[highlight]]\npattern = '{s}'\nstyle = \"bold red\"\n\n"
                              for s in SHAPES))
    dash = bench.CONTENDERS["dashboard"]
    command = f"env EAGLE_TUI_CONFIG={config} " + dash.command(log)
    sent = answered = 0
    missed: list[str] = []
    with bench.pane(command) as p:
        _, ready = bench.wait_screen(p, lambda t: dash.first_frame in t and "200 lines" in t, 30)
        assert ready is not None, p.capture()

        def key(name: str, *, literal: bool = False) -> None:
            p._run("send-keys", "-t", "b", *(("-l",) if literal else ()), name)

        def answered_by(name: str, shown: str, gone: bool, literal: bool) -> int:
            key(name, literal=literal)
            text, took = bench.wait_screen(p, lambda t: (shown not in t) if gone else (shown in t),
                                           5)
            if name == "Escape":  # a key at once after ESC reads as Alt+key in a terminal
                time.sleep(0.2)
            if took is None:
                status = [row for row in text.splitlines() if "│ " in row and "·" in row]
                missed.append(f"{name} -> {shown!r} {'gone' if gone else 'shown'}: {status}")
            return took is not None

        for shape in SHAPES:
            steps = [("/", False, "filter: ", False), (shape, True, f"filter: {shape}", False),
                     ("Enter", False, f"filter {shape}", False),  # the status line keeps it
                     ("/", False, "filter: ", False), ("Escape", False, "filter: ", True),
                     ("C-f", False, "search: ", False), (shape, True, f"search: {shape}", False),
                     ("Enter", False, f"search {shape}", False),
                     ("/", False, "filter: show only", False),
                     ("Escape", False, "filter: show only", True)]
            for name, literal, shown, gone in steps:
                sent += 1
                answered += answered_by(name, shown, gone, literal)
        key("q")
        end = time.monotonic() + 10
        alive = True
        while alive and time.monotonic() < end:
            alive = subprocess.run([p.tmux, "-L", p.sock, "has-session", "-t", "b"],
                                   capture_output=True, timeout=10).returncode == 0
            time.sleep(0.05)
    assert answered == sent == 10 * len(SHAPES), "\n".join(missed)
    assert not alive, "q did not end the dashboard"
