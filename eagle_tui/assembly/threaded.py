"""Run a session (and its transports) on a background thread; its subscribers are called there.

Why: the session's work (tailing, parsing, reducing) is CPU-bound Python. In the UI's own event
loop a busy log keeps the loop parsing when a key arrives, and the key waits (the key→screen
figures: docs/performance.md). On its own thread the session has its own event loop and the
interpreter's thread switch gives the UI thread the GIL for each key and frame. The price is
throughput: the two threads share one core's worth of GIL.

What crosses threads: the frozen ``DashboardState`` and the batch's event list, once per batch.
Subscribers are called on the session thread; one that hands the batch to another thread must
do it thread-safely (the dashboard's posts a Textual message, and
:class:`eagle_tui.ui.inbox.BatchInbox` merges batches while one is pending). This module knows
nothing of Textual. Everything the session owns (sources, transports, the record file) lives and
dies on the session thread, including closing the transports.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import cast

from eagle_tui.model.events import Event
from eagle_tui.model.state import DashboardState
from eagle_tui.session import Session

Subscriber = Callable[[DashboardState, Sequence[Event]], None]
Closer = Callable[[], Awaitable[None]]
# An opener connects (SSH: before the terminal is taken over, so a refusal is a plain message)
# and returns the session, or a function that builds it: that runs on the session thread after
# the UI's first frame, so the first frame does not wait for the sources' imports.
Opener = Callable[[], Awaitable[tuple[Session | Callable[[], Session], Closer]]]


async def _no_close() -> None:
    return None


def session_opener(session: Session) -> Opener:
    """An opener for a session that owns nothing to close (replay, scripted)."""

    async def open_() -> tuple[Session, Closer]:
        return session, _no_close

    return open_


class ThreadedSession:
    """A :class:`~eagle_tui.ui.app.SessionLike` whose session runs on its own thread.

    ``start()`` (blocking, before the UI starts) runs ``opener`` on the new thread's loop and
    re-raises its exception, so an SSH host-key refusal is still a plain error message. The
    sources start when ``run()`` is first awaited (the UI does that after its first frame).
    """

    def __init__(self, opener: Opener, *, name: str = "eagle-session") -> None:
        self._opener = opener
        self._name = name
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: Session | None = None
        self._opened: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._done: concurrent.futures.Future[DashboardState] = concurrent.futures.Future()
        self._lock = threading.Lock()
        self._subscribers: list[Subscriber] = []
        self._state = DashboardState()
        self._stop_requested = False
        self._go: asyncio.Event | None = None
        self._early: list[Event] = []  # posted before the session was built

    # ------------------------------------------------------------------ session thread
    def start(self, timeout: float | None = 60.0) -> None:
        if self._thread is not None:
            raise RuntimeError("ThreadedSession.start() called twice")
        self._thread = threading.Thread(target=self._thread_main, name=self._name, daemon=True)
        self._thread.start()
        self._opened.result(timeout)  # re-raises the opener's error

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # surfaced through the futures, never lost
            if not self._opened.done():
                self._opened.set_exception(exc)
            if not self._done.done():
                self._done.set_exception(exc)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        try:
            opened, close = await self._opener()
        except BaseException as exc:
            self._opened.set_exception(exc)
            raise
        if isinstance(opened, Session):
            self._attach(opened)
        self._go = asyncio.Event()
        self._opened.set_result(None)
        try:
            # sources start when the UI asks (after its first frame), not while it starts up
            await self._go.wait()
            session = self._session
            if session is None:
                if self._stop_requested:  # the UI ended before the sources were needed
                    self._done.set_result(self._state)
                    return
                session = self._attach(cast(Callable[[], Session], opened)())
            if self._stop_requested:
                session.stop()
            final = await session.run()
        except BaseException as exc:
            self._done.set_exception(exc)
            raise
        finally:
            await close()
        self._done.set_result(final)

    def _attach(self, session: Session) -> Session:
        """On the session thread: adopt the session; events posted before it go in first."""
        session.subscribe(self._fanout)
        with self._lock:
            self._state = session.state
            self._session = session
            early, self._early = self._early, []
        if early:
            session.post(*early)
        return session

    def _fanout(self, state: DashboardState, events: Sequence[Event]) -> None:
        """On the session thread, after every batch: every subscriber, in subscription order."""
        self._state = state
        for cb in list(self._subscribers):
            cb(state, events)

    # ------------------------------------------------------------------ any thread
    @property
    def state(self) -> DashboardState:
        return self._state

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(state, batch)`` on the session thread after every batch."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def post(self, *events: Event) -> None:
        with self._lock:
            session, loop = self._session, self._loop
            if session is None:  # not built yet: ``_attach`` posts these first
                self._early.extend(events)
                return
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(session.post, *events)

    async def run(self) -> DashboardState:
        """In the caller's loop: let the sources start, then wait for the session thread to end.

        Returns the final state (the thread's exception is raised here instead).
        """
        if self._thread is None:
            self.start()
        self._release()
        final = await asyncio.wrap_future(self._done)
        self._state = final
        return final

    def _release(self) -> None:
        """Let the session thread start its sources."""
        go, loop = self._go, self._loop
        if go is not None and loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(go.set)
            except RuntimeError:
                pass

    def stop(self) -> None:
        self._stop_requested = True
        self._release()  # a session never started still has to end (and close transports)
        session, loop = self._session, self._loop
        if session is not None and loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(session.stop)
            except RuntimeError:  # the loop closed in between: the session already ended
                pass

    def join(self, timeout: float | None = 10.0) -> None:
        """Wait for the session thread (transports closed) after the UI has exited."""
        if self._thread is not None:
            self._thread.join(timeout)


__all__ = ["ThreadedSession", "session_opener"]
