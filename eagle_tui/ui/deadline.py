"""A one-shot timer on the event loop's own clock that stays stopped once stopped.

Textual's ``set_timer`` makes a ``Timer`` with a task of its own, an event and a coroutine per
call, which hold each other until the cyclic collector frees them: the log's repaint and the
panes' update set one every frame. Here the loop's timer (``call_at``) hands the callback to the
owner's message queue (``call_next``, where Textual's timer puts it too), and nothing is left
behind. And Textual's ``Timer.stop()`` cancels the timer's task, but a timer whose time came in
the same turn of the event loop as the call that stops it still runs its callback once (the
log's repaint updated the panes that were due with it and stopped their timer, and the timer
updated them again right after): here the callback runs only while its deadline is the one
pending.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol


class TimerOwner(Protocol):
    """Where the callback runs: a Textual widget or app (its message queue)."""

    def call_next(self, callback: Callable[..., Any], *args: Any) -> None: ...


class Deadline:
    """At most one pending call of a callback, ``due`` at a time of ``time.monotonic()``."""

    def __init__(self, owner: TimerOwner) -> None:
        self._owner = owner
        self._handle: asyncio.TimerHandle | None = None
        self._serial = 0  # the pending call's number: a stop or a new start moves it on
        self._armed = False
        self.due = 0.0

    @property
    def pending(self) -> bool:
        return self._armed

    def start(self, wait: float, callback: Callable[[], None]) -> None:
        """Call ``callback`` in ``wait`` seconds (a pending call is stopped)."""
        self.stop()
        self._armed = True
        loop = asyncio.get_running_loop()
        self._handle = loop.call_at(loop.time() + wait, self._due, self._serial, callback)
        self.due = time.monotonic() + wait

    def _due(self, serial: int, callback: Callable[[], None]) -> None:
        self._handle = None
        self._owner.call_next(self._fire, serial, callback)

    def _fire(self, serial: int, callback: Callable[[], None]) -> None:
        if serial == self._serial:  # (not stopped, not replaced since)
            self._serial += 1
            self._armed = False
            callback()

    def stop(self) -> None:
        self._serial += 1
        self._armed = False
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


__all__ = ["Deadline", "TimerOwner"]
