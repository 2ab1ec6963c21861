"""How a session's batches reach the dashboard: one Textual message, merged while pending.

The session (on its own thread, :mod:`eagle_tui.assembly.threaded`, or in the UI's loop) calls
:class:`BatchInbox` after every batch. The inbox posts a :class:`SessionBatch` message to the app
with ``App.post_message``, which Textual makes thread-safe, so the handler runs in the app's own
task and context (timers the handler starts fire; nothing re-creates Textual's context by hand).

Why merge: under a flooding log the session reduces a batch every ``batch_interval``, and when
the UI is busy painting it must not find a queue of stale batches in front of the next key. While
a message is pending (posted, not yet handled), a new batch is folded into it: its events
appended, its state replaced. The UI thus holds at most one batch message, carrying the newest
state with every event since the last one it took. The UI may leave one open on purpose
(``held``: its lines wait for the log's next repaint); grown to ``HOLD_LIMIT`` events, the inbox
posts :class:`HeldGrown`: a flood is taken in pieces, not in one long stall at the repaint.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from textual.message import Message
from textual.message_pump import MessagePump

from eagle_tui.model.events import Event
from eagle_tui.model.state import DashboardState

HOLD_LIMIT = 1_000  # events in a held message before it is posted again

class SessionBatch(Message):
    """The newest state and every event since the UI last took a batch."""

    def __init__(self, state: DashboardState, events: list[Event],
                 origin: BatchInbox | None = None) -> None:
        super().__init__()
        self.state = state
        self.events = events
        self.origin = origin  # the inbox that posted it (a relaunch replaces the inbox)
        self.held = False  # left open by the UI until its next repaint
        self.reposted = False


class HeldGrown(Message):
    """A held batch reached ``HOLD_LIMIT`` events: the UI takes it now."""

    def __init__(self, batch: SessionBatch) -> None:
        super().__init__()
        self.batch = batch


class BatchInbox:
    """A session subscriber (any thread) that keeps at most one :class:`SessionBatch` pending
    for ``target``; the target's handler calls :meth:`take` to open it."""

    def __init__(self, target: MessagePump) -> None:
        self._target = target
        self._lock = threading.Lock()
        self._pending: SessionBatch | None = None
        self.posted = 0  # messages posted (tests compare it with the batches delivered)

    def __call__(self, state: DashboardState, events: Sequence[Event]) -> None:
        with self._lock:
            pending = self._pending
            if pending is not None:  # the UI has not taken the last one yet: merge
                pending.events.extend(events)
                pending.state = state
                if not pending.held or pending.reposted or len(pending.events) < HOLD_LIMIT:
                    return
                pending.reposted = True
                message: Message = HeldGrown(pending)
            else:
                message = self._pending = SessionBatch(state, list(events), self)
                self.posted += 1
        if not self._target.post_message(message) and isinstance(message, SessionBatch):
            with self._lock:  # the app is closing: nothing will take it
                self._pending = None

    def take(self, message: SessionBatch) -> tuple[DashboardState, list[Event]]:
        """In the handler: close the message to merges and return its state and events."""
        with self._lock:
            if self._pending is message:
                self._pending = None
        return message.state, message.events


__all__ = ["HOLD_LIMIT", "BatchInbox", "HeldGrown", "SessionBatch"]
