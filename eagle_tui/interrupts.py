"""A Ctrl-C that Python swallowed is sent again: importing this module installs the hook.

A ``KeyboardInterrupt`` raised where Python ignores exceptions (a weakref callback of the
import system, a ``__del__``) is printed as "Exception ignored" and lost: ``wait`` went on for
its whole timeout after a Ctrl-C 80 ms into its start. ``sys.unraisablehook`` sees it; the hook
delivers it to the main thread again (``_thread.interrupt_main`` from a short-lived thread, a
moment later), where it lands in code that stops as a Ctrl-C should (exit 130, no traceback).
Other unraisable exceptions go to Python's own hook. ``cli`` imports this module first.
"""

from __future__ import annotations

import _thread
import sys
import time
from typing import Any

AGAIN_AFTER_S = 0.005  # the main thread is out of the ignoring code by then (else: again)


def _hook(unraisable: Any) -> None:
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        # from another thread: called here, in the main thread, it raises inside this hook
        try:
            _thread.start_new_thread(_again, ())
        except RuntimeError:  # the interpreter is shutting down: nothing left to stop
            pass
        return
    sys.__unraisablehook__(unraisable)


def _again() -> None:
    time.sleep(AGAIN_AFTER_S)
    _thread.interrupt_main()


def install() -> None:
    """Install the hook (again: a test harness may have put its own in its place)."""
    sys.unraisablehook = _hook


install()

__all__ = ["install"]
