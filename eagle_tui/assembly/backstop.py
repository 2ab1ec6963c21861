"""A hard end for a command that promises one: ``wait --timeout``, ``watch --duration``.

Why: the promised end is kept by the command's event loop; a loop that blocks, or a source that
will not stop, would keep the script that called it waiting for ever. Past the end and
:data:`GRACE_S` more a watchdog thread writes every thread's stack to stderr (the evidence of the
bug), says so in one line and ends the process with exit 70: a bug, never a verdict.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import sys
import threading
from collections.abc import Iterator

from eagle_tui.errors import EXIT_INTERNAL

GRACE_S = 15.0


@contextlib.contextmanager
def backstop(seconds: float | None, command: str, *,
             grace: float | None = None) -> Iterator[None]:
    """Within the block the process ends ``seconds + grace`` (:data:`GRACE_S` by default)
    from now at the latest (``seconds`` ``None``: no promised end, no watchdog)."""
    if seconds is None:
        yield
        return
    grace = GRACE_S if grace is None else grace
    timer = threading.Timer(seconds + grace, _overrun, args=(command, seconds, grace))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _overrun(command: str, seconds: float, grace: float) -> None:
    err = sys.__stderr__
    for stream in (sys.stdout, sys.stderr):  # what the command printed comes out first
        with contextlib.suppress(Exception):
            stream.flush()
    if err is not None:
        with contextlib.suppress(Exception):
            faulthandler.dump_traceback(file=err, all_threads=True)
        with contextlib.suppress(Exception):
            err.write(f"eagle-tui {command}: error: still running {grace:g} s past its end "
                      f"({seconds:g} s): stopped; this is a bug of eagle-tui (the stacks "
                      "above say where it was)\n")
            err.flush()
    os._exit(EXIT_INTERNAL)


__all__ = ["GRACE_S", "backstop"]
