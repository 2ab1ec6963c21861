"""Helpers to run the real simulator process in tests, always cleaned up (whole process group)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil


@dataclass
class SimProc:
    proc: subprocess.Popen[bytes]
    info: dict[str, Any]
    workdir: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.info['port']}"

    @property
    def log(self) -> Path:
        return Path(self.info["log"])

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def running_sim(workdir: Path, engine: str, scenario: str, *, speed: float = 40.0,
                gpus: int = 2, extra: tuple[str, ...] = ()) -> Iterator[SimProc]:
    workdir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "eagle_tui.sim", "--engine", engine, "--scenario", scenario,
         "--port", "0", "--gpus", str(gpus), "--speed", str(speed), "--workdir", str(workdir),
         "--log", str(workdir / "server.log"), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    sim = None
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            err = proc.stderr.read() if proc.stderr else b""
            raise AssertionError(f"simulator did not start: {err.decode()}")
        sim = SimProc(proc, json.loads(line), workdir)
        yield sim
    finally:
        if sim is not None:
            sim.stop()
        else:
            proc.kill()
            proc.wait()


def health_states(url: str, until: str = "200", limit_s: float = 30.0,
                  read_timeout: float = 0.25) -> list[str]:
    """Poll /health every 20 ms (bounded in time) and return the distinct states in order:
    ``refused``, ``timeout`` (accepted but no answer), or the status code."""
    seen: list[str] = []
    deadline = time.monotonic() + limit_s
    with httpx.Client(timeout=httpx.Timeout(2.0, read=read_timeout), trust_env=False) as client:
        while time.monotonic() < deadline:
            try:
                state = str(client.get(f"{url}/health").status_code)
            except httpx.ConnectError:
                state = "refused"
            except httpx.TimeoutException:
                state = "timeout"
            if not seen or seen[-1] != state:
                seen.append(state)
            if state == until:
                break
            time.sleep(0.02)
    return seen


def descendants_of(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out
