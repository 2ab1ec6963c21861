"""A snippet run in a fresh interpreter: what a command or a module loads shows only in a process
that has not imported it yet."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.paths import REPO


def run_probe(code: str, *flags: str) -> str:
    """``code``'s standard output, run by ``python [flags] -c code`` with this checkout first on
    the path; a failure fails the test with the probe's stderr."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
