"""Every read of a path goes through the one opener (``eagle_tui/files.py``).

A plain ``open``/``os.open``/``Path.open``/``read_text``/``read_bytes`` of a path that comes from
outside blocks on a FIFO and never ends on ``/dev/zero`` (the scrollback's ``os.open`` of a log
replaced by a FIFO left ``q`` dead). This test walks the package's syntax trees and fails on any
such call outside the opener module, except the few internal uses listed below with the reason
each is safe. Writes (a mode with ``w``/``a``/``x``, ``os.open`` with ``O_WRONLY``) are not reads.
"""

from __future__ import annotations

import ast

from tests.support.paths import REPO

ROOT = REPO
PACKAGE = ROOT / "eagle_tui"
OPENER = "eagle_tui/files.py"

# (file, the call's source text) → why it may bypass the opener
ALLOWED: dict[tuple[str, str], str] = {
    ("eagle_tui/report/workfiles.py", "open(path)"):
        "_read_int: a worker's memory figure in the report's own private temp folder",
    ("eagle_tui/report/workfiles.py", "open('/proc/self/smaps_rollup', 'rb')"):
        "the kernel's memory figures of this process",
    ("eagle_tui/report/parallel.py", "open(path, 'rb')"):
        "a worker's summary, written by the report's own child into its private temp folder",
    ("eagle_tui/sources/prefix.py", "open(out, 'rb')"):
        "the summary our own child process wrote into a private temp folder",
    ("eagle_tui/sources/process.py", "open(f'/proc/{pid}/stat', 'rb')"):
        "the kernel's process table",
    ("eagle_tui/sources/process.py", "open(f'/proc/{cur}/task/{tid}/children', 'rb')"):
        "the kernel's process table (a thread's children)",
    ("eagle_tui/sources/process.py", "open(f'/proc/{pid}/fdinfo/{fd}', encoding='ascii')"):
        "the kernel's process table",
    ("eagle_tui/launch/members.py", "open(f'{root}/{pid}/environ', 'rb')"):
        "the kernel's process table (a run's token in a process's environment)",
    ("eagle_tui/launch/members.py",
     "open(f'{root}/{pid}/stat', encoding='utf-8', errors='replace')"):
        "the kernel's process table (a member's start time)",
    ("eagle_tui/sim/smi.py", "open(state_path, encoding='utf-8')"):
        "the simulator's own GPU state file, written by the simulator",
    ("eagle_tui/sim/runtime.py", "open(log_path, mode, buffering=0)"):
        "the simulator writing its log (mode 'ab' or 'wb')",
    ("eagle_tui/ui/theme.py",
     "(resources.files(THEME_PACKAGE) / name).read_text(encoding='utf-8')"):
        "a theme shipped inside the package",
    ("eagle_tui/probe/tables.py", "raw.read_text(encoding='utf-8')"):
        "a flag table shipped inside the package (importlib.resources)",
}
NOT_FILES = {"ChannelStream.open"}  # an SSH channel, not a path
WRITE_FLAGS = ("O_WRONLY", "O_RDWR")


def _is_write_mode(call: ast.Call) -> bool:
    mode = next((kw.value for kw in call.keywords if kw.arg == "mode"), None)
    if mode is None:
        # open(path, mode) / Path.open(mode)
        args = call.args[1:] if isinstance(call.func, ast.Name) else call.args[:1]
        mode = args[0] if args else None
    return (isinstance(mode, ast.Constant) and isinstance(mode.value, str)
            and any(c in mode.value for c in "wax+"))


def reads(source: str) -> list[str]:
    """The calls in ``source`` that open or read a path (as source text)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        text = ast.unparse(node)
        if isinstance(func, ast.Name) and func.id == "open":
            if not _is_write_mode(node):
                found.append(text)
        elif isinstance(func, ast.Attribute) and func.attr in ("read_text", "read_bytes"):
            found.append(text)
        elif isinstance(func, ast.Attribute) and func.attr == "open":
            owner = ast.unparse(func.value)
            if owner == "os":
                if not any(flag in text for flag in WRITE_FLAGS):
                    found.append(text)
            elif f"{owner}.open" not in NOT_FILES and not _is_write_mode(node):
                found.append(text)
    return found


def _all_reads() -> dict[tuple[str, str], int]:
    seen: dict[tuple[str, str], int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == OPENER:
            continue
        for text in reads(path.read_text(encoding="utf-8")):
            seen[(rel, text)] = seen.get((rel, text), 0) + 1
    return seen


def test_no_read_of_a_path_outside_the_opener() -> None:
    stray = sorted(key for key in _all_reads() if key not in ALLOWED)
    assert stray == [], ("read these through eagle_tui.files (open_regular/read_text/"
                         f"read_bytes/pread_regular), or list them with a reason: {stray}")


def test_every_allowed_read_still_exists() -> None:
    """A stale entry would let a new read with the same text through unseen."""
    assert sorted(set(ALLOWED) - set(_all_reads())) == []


def test_the_checker_sees_each_form() -> None:
    src = """
import os
from pathlib import Path
open(p)
open(p, "rb")
os.open(p, os.O_RDONLY)
Path(p).read_text()
Path(p).read_bytes()
Path(p).open()
Path(p).open("rb")
open(p, "w")
open(p, mode="ab")
Path(p).open("w", encoding="utf-8")
os.open(p, os.O_WRONLY | os.O_CREAT)
ChannelStream.open(x)
"""
    assert reads(src) == ["open(p)", "open(p, 'rb')", "os.open(p, os.O_RDONLY)",
                          "Path(p).read_text()", "Path(p).read_bytes()", "Path(p).open()",
                          "Path(p).open('rb')"]
