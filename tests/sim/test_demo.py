"""``eagle-tui demo --headless`` end to end, and cleanup on every exit path.

The demo runs as the installed command would (``python -m eagle_tui demo``) with its own
``TMPDIR``, so the test can see that its temporary directory is gone afterwards; every process it
ever had below it is recorded with psutil while it runs and must be gone after it exits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from tests.support.procs import sigint_as_at_a_terminal
from tests.support.sim_helpers import alive

pytestmark = pytest.mark.slow

FAST = ("--speed", "60", "--gpus", "2")


class DemoRun:
    """The demo process, its output and every descendant it had (sampled every 50 ms)."""

    def __init__(self, tmp: Path, *args: str) -> None:
        self.tmp = tmp / "tmp"
        self.tmp.mkdir()
        env = dict(os.environ, TMPDIR=str(self.tmp), PYTHONUNBUFFERED="1")
        # SIGINT as at a terminal, even when the suite runs as a background job (which starts
        # with SIGINT ignored, and Python then never raises KeyboardInterrupt)
        self.proc = subprocess.Popen([sys.executable, "-m", "eagle_tui", "demo", "--headless",
                                      *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=env, preexec_fn=sigint_as_at_a_terminal)
        self.seen: dict[int, psutil.Process] = {}
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def _sample(self) -> None:
        try:
            for p in psutil.Process(self.proc.pid).children(recursive=True):
                self.seen.setdefault(p.pid, p)
        except psutil.NoSuchProcess:
            pass

    def wait_for(self, text: str, limit: float = 60.0) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and self.proc.poll() is None:
            self._sample()
            if any(text in line for line in self.lines):
                return
            time.sleep(0.05)
        raise AssertionError(f"{text!r} not seen; output:\n" + "\n".join(self.lines[-40:]))

    def finish(self, limit: float = 90.0) -> int:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and self.proc.poll() is None:
            self._sample()
            time.sleep(0.05)
        if self.proc.poll() is None:
            self.proc.kill()
            raise AssertionError("demo did not finish; output:\n" + "\n".join(self.lines[-40:]))
        self._reader.join(timeout=10)
        return self.proc.returncode

    def assert_clean(self) -> None:
        deadline = time.monotonic() + 5  # stand-ins notice their parent within 0.5 s
        while time.monotonic() < deadline and alive(list(self.seen.values())):
            time.sleep(0.1)
        left = alive(list(self.seen.values()))
        for p in left:  # never leave them to the next test, but fail
            p.kill()
        assert not left, [p.cmdline() for p in left]
        assert list(self.tmp.iterdir()) == []

    @property
    def output(self) -> str:
        return "\n".join(self.lines)


def is_simulator(p: psutil.Process) -> bool:
    return p.cmdline()[1:3] == ["-m", "eagle_tui.sim"]


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_healthy_serves_with_moving_metrics(tmp_path: Path, engine: str) -> None:
    run = DemoRun(tmp_path, "--scenario", "healthy", "--engine", engine, *FAST, "--duration", "3")
    assert run.finish() == 0, run.output
    out = run.output
    assert "READY after" in out
    if engine == "sglang":  # its prefill (piecewise) graphs, a sub-step with progress
        assert "phase: cuda_graph (piecewise graphs capture " in out, out
    live = [line for line in run.lines if line.startswith("[live")]
    assert len(live) >= 2
    assert "tok/s -" not in live[-1] and "accept len -" not in live[-1]
    assert "x the 90 tok/s baseline" in live[-1]
    assert "alerts: none" in live[-1]
    assert "no alerts" in out
    assert len(run.seen) >= 4  # simulator, its rank stand-ins, nvidia-smi
    run.assert_clean()


def test_the_adaptive_demo_shows_its_tier_moving(tmp_path: Path) -> None:
    run = DemoRun(tmp_path, "--scenario", "adaptive", "--engine", "sglang", *FAST,
                  "--duration", "8")
    assert run.finish() == 0, run.output
    live = [line for line in run.lines if line.startswith("[live")]
    tiers = {line.split("tier ")[1].split(" [")[0] for line in live if "tier steps" in line}
    assert len(tiers) >= 2, live  # the adaptive server moved its steps while it served
    assert "no alerts" in run.output
    run.assert_clean()


def test_misconfigured_is_caught(tmp_path: Path) -> None:
    # the default 8 GPUs: DeepSeek-V3, whose EAGLE-3 draft expects 3 x 7168 = 21504 dims
    run = DemoRun(tmp_path, "--scenario", "misconfigured", "--speed", "80", "--duration", "4")
    assert run.finish() == 0, run.output
    out = run.output
    assert "READY after" in out
    assert "hidden dim 7168" in out
    assert "expected 21504 = 3×7168" in out
    assert "Drafts are being rejected" in out
    assert "Relaunch with --speculative-algorithm EAGLE3" in out
    assert "below the non-speculative baseline of 90.0 tok/s" in out
    run.assert_clean()


def test_oom_exits_with_the_diagnosis(tmp_path: Path) -> None:
    run = DemoRun(tmp_path, "--scenario", "oom", *FAST, "--duration", "3")
    assert run.finish() == 1, run.output
    out = run.output
    assert "CRASHED after" in out
    assert "CUDA out of memory" in out
    assert "[live" not in out
    run.assert_clean()


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_demo_leaves_nothing(tmp_path: Path, sig: int, code: int) -> None:
    run = DemoRun(tmp_path, "--scenario", "slow-start", "--speed", "20", "--gpus", "2")
    run.wait_for("loading_weights")
    assert any(is_simulator(p) for p in alive(list(run.seen.values())))
    run.proc.send_signal(sig)
    assert run.finish(limit=30) == code
    run.assert_clean()


def test_server_killed_mid_startup_is_reported(tmp_path: Path) -> None:
    run = DemoRun(tmp_path, "--scenario", "slow-start", "--speed", "20", "--gpus", "2")
    run.wait_for("loading_weights")
    sim = [p for p in alive(list(run.seen.values())) if is_simulator(p)]
    assert len(sim) == 1
    sim[0].kill()
    assert run.finish(limit=30) == 1
    assert "CRASHED after" in run.output
    run.assert_clean()
