"""Ending a child process the tests started: TERM, then KILL if it is still there."""

from __future__ import annotations

import subprocess


def end_process(proc: subprocess.Popen[str] | subprocess.Popen[bytes], grace_s: float = 10.0
                ) -> None:
    """TERM ``proc``; KILL it when it has not exited within ``grace_s``."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
