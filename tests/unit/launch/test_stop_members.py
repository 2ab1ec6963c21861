"""Run membership's pure parts: the token matcher, the grace bound, the remote scan's answer.

The matcher is checked with generated environ blobs (near-miss tokens never match, the exact
entry always does), and the remote ``sh`` scan is run on generated fake ``/proc`` trees against
the local scanner: both must find exactly the processes whose environ has the entry.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eagle_tui.commands.stop import grace_seconds
from eagle_tui.launch.members import (
    SCAN_SH,
    LocalScanner,
    Proc,
    Scan,
    ScanError,
    ShellScanner,
    carries,
    check_grace,
    parse_scan,
    valid_token,
)
from eagle_tui.launch.stopping import StopReport, describe, leader_note, stop_run
from eagle_tui.transport.local import LocalTransport

tokens = st.text("0123456789abcdef", min_size=16, max_size=16)
entries = st.binary(max_size=40).map(lambda b: b.replace(b"\0", b""))


def near_misses(token: str) -> list[bytes]:
    """Entries that look like the run's and are not it."""
    t = token
    flipped = t[:-1] + ("0" if t[-1] != "0" else "1")
    return [f"EAGLE_TUI_RUN={x}".encode() for x in
            (t[:-1], t + "0", flipped, t.upper() if t.upper() != t else t + "A", " " + t,
             t + " ", t + "\n", "", f"{t}{t}")] + [
        f"XEAGLE_TUI_RUN={t}".encode(), f"EAGLE_TUI_RUN_={t}".encode(),
        f"EAGLE_TUI_RUN ={t}".encode(), f"eagle_tui_run={t}".encode(), t.encode(),
        f"ARGS=--x EAGLE_TUI_RUN={t}".encode(), f"EAGLE_TUI_RUN={t}".encode()[1:],
        f"NOTE=x\nEAGLE_TUI_RUN={t}".encode(), f"EAGLE_TUI_RUN={t}\nX=1".encode()]


@given(tokens, st.lists(entries, max_size=6), st.data())
def test_near_miss_tokens_never_match(token: str, noise: list[bytes],
                                      data: st.DataObject) -> None:
    misses = data.draw(st.lists(st.sampled_from(near_misses(token)), min_size=1, max_size=4))
    parts = noise + misses
    blob = b"\0".join(data.draw(st.permutations(parts))) + data.draw(st.sampled_from([b"", b"\0"]))
    assert not carries(blob, token)
    # the exact entry anywhere among them does match
    at = data.draw(st.integers(0, len(parts)))
    exact = [*parts[:at], f"EAGLE_TUI_RUN={token}".encode(), *parts[at:]]
    assert carries(b"\0".join(exact) + b"\0", token)


@given(st.text(max_size=70))
def test_only_launch_shaped_tokens_match_anything(token: str) -> None:
    if not valid_token(token):
        assert not carries(f"EAGLE_TUI_RUN={token}\0".encode(errors="replace"), token)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_grace_is_finite_positive_and_at_most_an_hour(value: float) -> None:
    ok = math.isfinite(value) and 0 < value <= 3600
    if ok:
        assert check_grace(value) == value
    else:
        with pytest.raises(ValueError, match="--grace"):
            check_grace(value)


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "NaN", "Infinity", "1e400", "-1", "0",
                                  "-0", "3600.001", "1e9", "", "x", "0x10", "10s", "1_0e999"])
def test_grace_flag_refuses(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as err:
        grace_seconds(text)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("text", "value"), [("10", 10.0), ("0.1", 0.1), ("3600", 3600.0)])
def test_grace_flag_accepts(text: str, value: float) -> None:
    assert grace_seconds(text) == value


def test_a_cut_scan_is_an_error_and_noise_lines_are_skipped() -> None:
    with pytest.raises(ScanError):
        parse_scan(b"P 10 5 1 10 10\n")
    got = parse_scan(b"Welcome to the GPU box\nP x 5 1 10 10\nP 10 5 1 10 10\nP 11 6 10 10 10 9"
                     b"\nL 77\nE 1\n")
    assert got.members == (Proc(10, "5", 1, 10, 10),) and got.leader_start == "77"


def test_describe_says_counts_and_pids() -> None:
    rep = StopReport(found=(5, 6, 7), termed=(5, 6, 7), killed=(7,), late=(6,), left=(),
                     seconds=1.25, grace=0.5)
    text = describe(rep)
    assert text.startswith("3 processes (pids 5 6 7)")
    assert "2 ended after TERM" in text and "1 KILLed after the 0.5 s grace (pids 7)" in text
    assert "1 appeared during the stop (pids 6)" in text and rep.signal == "KILL"
    assert describe(StopReport((), (), (), (), (), 0.0, 10)) .startswith("not running")
    many = describe(StopReport(tuple(range(1, 31)), (), (), (), tuple(range(1, 31)), 1, 1))
    assert "and 18 more" in many and "30 still running" in many


def test_leader_note() -> None:
    assert leader_note(Scan((), None), 5, "9") == ""
    assert leader_note(Scan((Proc(5, "9"),), "9"), 5, "9") == ""
    assert "another process now" in leader_note(Scan((), "10"), 5, "9")
    assert "does not show the run's token" in leader_note(Scan((), "9"), 5, "9")


# ------------------------------------------------------------- fake /proc: sh scan == local scan
STAT_TAIL = "S {ppid} {pgid} {sid} 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 {start} 1 1"
comms = st.text(st.characters(codec="ascii", exclude_characters="\0\n/"), max_size=12)


@st.composite
def fake_procs(draw: st.DrawFn, token: str) -> list[tuple[int, bytes, str, bool]]:
    """``(pid, environ, stat, member)`` for a few processes, members and near misses."""
    pids = draw(st.lists(st.integers(2, 99999), min_size=1, max_size=8, unique=True))
    out = []
    for pid in pids:
        member = draw(st.booleans())
        parts = draw(st.lists(entries, max_size=4))
        parts += [f"EAGLE_TUI_RUN={token}".encode()] if member else draw(
            st.lists(st.sampled_from(near_misses(token)), max_size=2))
        env = b"\0".join(draw(st.permutations(parts))) + b"\0"
        state = draw(st.sampled_from("SSSRDZ"))
        comm = draw(comms)
        text = f"{pid} ({comm}) " + STAT_TAIL.format(ppid=1, pgid=pid, sid=pid,
                                                     start=pid * 7).replace("S", state, 1)
        out.append((pid, env, text + "\n", member and state != "Z"))
    return out


def write_proc(root: Path, procs: list[tuple[int, bytes, str, bool]]) -> None:
    for pid, env, text, _member in procs:
        (root / str(pid)).mkdir()
        (root / str(pid) / "environ").write_bytes(env)
        (root / str(pid) / "stat").write_text(text)


def fake_grep_without_z(bin_dir: Path) -> None:
    """A ``grep`` that refuses ``-z`` (BusyBox-like): the scan's loop fallback runs."""
    real = shutil.which("grep")
    script = bin_dir / "grep"
    script.write_text("#!/bin/sh\nfor a in \"$@\"; do case $a in -*z*) exit 2;; esac; done\n"
                      f"exec {real} \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tokens, st.data())
def test_shell_scan_and_local_scan_find_exactly_the_token_carriers(
        token: str, data: st.DataObject) -> None:
    procs = data.draw(fake_procs(token))
    want = sorted(pid for pid, _e, _s, member in procs if member)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proc"
        root.mkdir()
        write_proc(root, procs)
        local = LocalScanner(str(root))._scan(token, 0)
        shell = asyncio.run(ShellScanner(LocalTransport(), root=str(root)).scan(token))
        assert [p.pid for p in local.members] == want
        assert shell.members == local.members
        assert all(p.start == str(p.pid * 7) for p in shell.members)
        # the loop the scan falls back to where grep has no -z finds the same
        bin_dir = Path(tmp) / "bin"
        bin_dir.mkdir()
        fake_grep_without_z(bin_dir)
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
        res = subprocess.run(["sh", "-c", SCAN_SH, "scan", str(root), token, "0", "4096"],
                             capture_output=True, env=env, timeout=30, check=True)
        assert parse_scan(res.stdout).members == local.members
        # a host whose sh is bash
        if shutil.which("bash"):
            res = subprocess.run(["bash", "-c", SCAN_SH, "scan", str(root), token, "0", "9"],
                                 capture_output=True, timeout=30, check=True)
            assert parse_scan(res.stdout).members == local.members


def test_the_remote_scan_is_capped(tmp_path: Path) -> None:
    token = "0123456789abcdef"
    procs = [(pid, f"EAGLE_TUI_RUN={token}\0".encode(),
              f"{pid} (x) " + STAT_TAIL.format(ppid=1, pgid=1, sid=1, start=1) + "\n", True)
             for pid in range(100, 130)]
    write_proc(tmp_path, procs)
    res = subprocess.run(["sh", "-c", SCAN_SH, "scan", str(tmp_path), token, "0", "7"],
                         capture_output=True, timeout=30, check=True)
    assert len(parse_scan(res.stdout).members) == 7


# ------------------------------------------------------------- the stop loop, scripted scanner
class Scripted:
    """A scanner whose members are given per scan; counts scans and records signals."""

    def __init__(self, rounds: list[list[int]], then: Callable[[int], list[int]]) -> None:
        self.rounds = rounds
        self.then = then
        self.scans = 0
        self.sent: list[tuple[str, int]] = []

    async def scan(self, token: str, leader: int = 0) -> Scan:
        n = self.scans
        self.scans += 1
        pids = self.rounds[n] if n < len(self.rounds) else self.then(n)
        return Scan(tuple(Proc(p, "1") for p in pids))

    async def send(self, procs: Sequence[Proc], sig: str, token: str) -> list[int]:
        self.sent += [(sig, p.pid) for p in procs]
        return [p.pid for p in procs]


def test_the_stop_ends_after_two_empty_scans_and_terms_late_members_once() -> None:
    sc = Scripted([[1, 2], [1, 2, 3], [3], [], [4], [], []], lambda n: [])
    rep = asyncio.run(stop_run(sc, "0123456789abcdef", grace=60, poll=0.001))
    assert sc.sent == [("TERM", 1), ("TERM", 2), ("TERM", 3), ("TERM", 4)]
    assert rep.found == (1, 2, 3, 4) and rep.late == (3, 4) and rep.left == ()
    assert sc.scans == 7 and rep.signal == "TERM"


@pytest.mark.parametrize("shape", ["stubborn", "forking"])
def test_the_stop_never_hangs_on_members_that_do_not_go(shape: str) -> None:
    """Members that never exit (or a fork each scan): KILL after the grace, then the stop ends
    with them reported; its scans are bounded by (grace + kill wait) / poll."""
    grace, wait, poll = 0.05, 0.05, 0.01
    sc = Scripted([], (lambda n: [7]) if shape == "stubborn" else (lambda n: [100 + n]))
    rep = asyncio.run(stop_run(sc, "0123456789abcdef", grace=grace, kill_wait=wait, poll=poll))
    assert rep.left and rep.signal == "KILL" and ("KILL", rep.left[0]) in sc.sent
    assert sc.scans <= (grace + wait) / poll + 2


def test_stop_run_refuses_an_unbounded_grace() -> None:
    sc = Scripted([[1]], lambda n: [1])
    for bad in (math.inf, math.nan, -1.0, 0.0, 1e9):
        with pytest.raises(ValueError, match="--grace"):
            asyncio.run(stop_run(sc, "0123456789abcdef", grace=bad))
    assert sc.scans == 0 and sc.sent == []
