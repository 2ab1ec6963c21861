"""Child processes the tests start: SIGINT as at a terminal; ending one (TERM, then KILL)."""

from __future__ import annotations

import signal
import subprocess


def sigint_as_at_a_terminal() -> None:
    """A ``preexec_fn``: SIGINT's default action in the child, even when the suite runs as a
    background job (which starts with SIGINT ignored, inherited, and Python then never raises
    KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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
