"""A one-shot timer that stays stopped once stopped.

Textual's ``Timer.stop()`` cancels the timer's task, but a timer whose time came in the same turn
of the event loop as the call that stops it still runs its callback once: the log's repaint
updated the panes that were due with it and stopped their timer, and the timer updated them
again right after. Here the callback runs only while its deadline is the one pending.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class _Stoppable(Protocol):
    def stop(self) -> None: ...


class TimerOwner(Protocol):
    """What sets the timer: a Textual widget or app (``set_timer``)."""

    def set_timer(self, delay: float, callback: Callable[[], None]) -> _Stoppable: ...


class Deadline:
    """At most one pending call of a callback, ``due`` at a time of ``time.monotonic()``."""

    def __init__(self, owner: TimerOwner) -> None:
        self._owner = owner
        self._timer: _Stoppable | None = None
        self.due = 0.0

    @property
    def pending(self) -> bool:
        return self._timer is not None

    def start(self, wait: float, callback: Callable[[], None]) -> None:
        """Call ``callback`` in ``wait`` seconds (a pending call is stopped)."""
        self.stop()

        def fire() -> None:
            if self._timer is timer:  # (not stopped, not replaced)
                self._timer = None
                callback()

        timer = self._timer = self._owner.set_timer(wait, fire)
        self.due = time.monotonic() + wait

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None


__all__ = ["Deadline", "TimerOwner"]
