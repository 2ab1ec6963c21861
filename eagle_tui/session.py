"""The session: runs the sources, merges and batches their events, keeps the one state.

Every consumer (the dashboard, ``eagle-tui wait``/``watch``, ``report``, the tests) goes through
this one object, so a recorded or scripted run exercises exactly the code the live one does.

Why batch: a busy server logs tens of thousands of lines a second and the UI cannot take them one
by one (a few hundred lines a second when handed over singly). Events are gathered for
``batch_interval`` seconds after the first one arrives, folded with :func:`reduce` once, and the
new state plus the batch's events go to every subscriber in one call. A chunk that is a batch's
worth already (``FULL_BATCH`` events: a flood) is folded at once: waiting only delays it.

More in docs/architecture.md, "Module notes", ``session``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from eagle_tui.errors import describe_error
from eagle_tui.model.events import (
    Event,
    LogLine,
    LogOpened,
    SourceFailed,
    SourceRecovered,
    SummaryProgress,
    Tick,
)
from eagle_tui.model.fold.prefix import Kept
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.ticks import can_wait, grid_wait, routine, tick_delay
from eagle_tui.recording import RecordFile
from eagle_tui.sources.base import Source

if TYPE_CHECKING:
    from eagle_tui.model.fold.prefix import PrefixSummary

log = logging.getLogger(__name__)

Subscriber = Callable[[DashboardState, Sequence[Event]], None]
Update = tuple[DashboardState, Sequence[Event]]
Summarizer = Callable[[LogOpened], AsyncIterator["Event | PrefixSummary"]]
# a source's chunk of this many events (a flood's read: the UI's HOLD_LIMIT) is folded at once
FULL_BATCH = 1_000


class _Wake:
    """Queue marker that only wakes the batch loop (a source ended, ``stop()`` was called)."""


_WAKE: Final = _Wake()
_END: Final = None  # end-of-stream marker for ``updates()`` iterators


class _Updates:
    """Async iterator over ``(state, batch)`` updates; registers at creation so none are missed."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._queue: asyncio.Queue[Update | None] = asyncio.Queue()
        if session.finished:
            self._queue.put_nowait(_END)
        else:
            session._update_queues.append(self._queue)

    def __aiter__(self) -> _Updates:
        return self

    async def __anext__(self) -> Update:
        item = await self._queue.get()
        if item is None:
            self.close()
            raise StopAsyncIteration
        return item

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self._session._update_queues.remove(self._queue)


class Session:
    """Owns the sources and the state. Use from one asyncio event loop.

    ``run()`` returns (with the final state) when ``stop()`` is called or every source has ended
    and its events have been reduced. ``state`` is always the latest reduced state.
    """

    def __init__(
        self,
        sources: Sequence[Source],
        *,
        record: Path | None = None,
        batch_interval: float = 0.05,
        initial: DashboardState | None = None,
        tick_interval: float | None = 1.0,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        max_queue: int = 50_000,
        clock: Callable[[], float] = time.time,
        summarizer: Summarizer | None = None,
        quiet_tick: float | None = None,
    ) -> None:
        if batch_interval < 0:
            raise ValueError("batch_interval must be >= 0")
        if tick_interval is not None and tick_interval <= 0:
            raise ValueError("tick_interval must be > 0 (or None for no ticks)")
        self.sources: tuple[Source, ...] = tuple(sources)
        if len(names := [s.name for s in self.sources]) != len(set(names)):
            raise ValueError(f"source names must be unique, got {names}")
        self.record_path = record
        self.batch_interval = batch_interval
        self.tick_interval = tick_interval
        # ticks slow to this grid at a quiet, ready server (``views/ticks``); None: never
        self.quiet_tick = quiet_tick
        self._last_event = 0.0  # when an event other than a tick came (set as the ticks begin)
        self._events_came: asyncio.Event | None = None
        self._quiet = False  # on its quiet grid: a batch of routine samples rides with its tick
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self._max_queue = max_queue
        self._clock = clock
        self._state = initial if initial is not None else DashboardState()
        self._subscribers: list[Subscriber] = []
        self._update_queues: list[asyncio.Queue[Update | None]] = []
        self._pending: list[Event] = []
        self._queue: asyncio.Queue[Event | list[Event] | _Wake] | None = None
        self._queued = 0  # events in the queue (a list counts its length)
        self._room: asyncio.Event | None = None  # set when the batch loop drained the queue
        self._live = 0
        self._stopping = False
        self._started = False
        self._finished = False
        self._record_file: RecordFile | None = None
        self.events_seen = self.batches = 0
        self._summarizer = summarizer
        # every event reduced since the start, while a summary may still be merged (None: not)
        self._kept: Kept | None = Kept() if summarizer is not None else None
        self._opened: LogOpened | None = None
        self._open_t: float | None = None
        self._summary_task: asyncio.Task[None] | None = None
        self._shown_lines = False  # a batch with log lines went out (the first one waits not)
        self._lines_came = asyncio.Event()  # set: the log's first lines are queued, not shown

    # ------------------------------------------------------------------ public API
    @property
    def state(self) -> DashboardState:
        return self._state

    @property
    def running(self) -> bool:
        return self._started and not self._finished

    @property
    def finished(self) -> bool:
        return self._finished

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(state, batch)`` in the event loop after every batch.

        Returns a function that unsubscribes. An exception in a callback propagates out of
        ``run()``: a consumer bug must be seen, not hidden.
        """
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.remove(callback)

        return unsubscribe

    def updates(self) -> _Updates:
        """Async iterator of ``(state, batch)`` after every batch; ends when the session ends."""
        return _Updates(self)

    def post(self, *events: Event) -> None:
        """Inject events (user intents such as a ``UserMarker``, a ``Baseline``).

        They are batched, recorded and reduced like source events. Before ``run()`` they are
        kept and delivered first.
        """
        if self._queue is None:
            self._pending.extend(events)
            return
        self._queue.put_nowait(list(events))  # never refused: the bound applies to sources
        self._queued += len(events)

    def stop(self) -> None:
        """Ask ``run()`` to finish: pending events are still reduced, sources are cancelled."""
        self._stopping = True
        if self._queue is not None:
            self._queue.put_nowait(_WAKE)

    async def run(self) -> DashboardState:
        """Run every source until ``stop()`` or until all sources have ended."""
        if self._started:
            raise RuntimeError("a Session can only be run once")
        self._started = True
        self._queue = asyncio.Queue()  # unbounded: ``_put`` bounds it in events
        self._room = asyncio.Event()
        if self.record_path is not None:
            self._record_file = RecordFile.create(self.record_path)
        self._live = len(self.sources)
        tasks = [
            asyncio.create_task(self._run_source(src), name=f"source:{src.name}")
            for src in self.sources
        ]
        if self.tick_interval is not None:
            tasks.append(asyncio.create_task(self._ticker(), name="source:tick"))
        clean = False
        try:
            await self._batch_loop()
            clean = True
        finally:
            if self._summary_task is not None:
                tasks.append(self._summary_task)
            for task in tasks:
                task.cancel()
            results = await asyncio.gather(*tasks, return_exceptions=True)
            for res in results:
                if isinstance(res, BaseException) and not isinstance(res, asyncio.CancelledError):
                    log.error("source task ended with %s", describe_error(res))
            try:
                if clean:  # events that arrived while stopping still count (a last crash line)
                    self._apply(self._drain(None))
            finally:
                self._finished = True
                for q in list(self._update_queues):
                    q.put_nowait(_END)
                self._update_queues.clear()
                if self._record_file is not None:
                    self._record_file.close()
        return self._state

    # ------------------------------------------------------------------ internals
    async def _put(self, ev: Event | list[Event]) -> None:
        """Queue one event or a list of them; wait while the queue holds ``max_queue`` events."""
        assert self._queue is not None and self._room is not None
        if isinstance(ev, list) and not ev:
            return
        while self._queued >= self._max_queue:
            self._room.clear()
            await self._room.wait()
        self._queued += len(ev) if isinstance(ev, list) else 1
        self._queue.put_nowait(ev)
        if not self._shown_lines and isinstance(ev, list) and any(
                type(e) is LogLine for e in ev):
            self._lines_came.set()  # a batch wait under way ends now: the first text goes out

    async def _run_source(self, src: Source) -> None:
        attempt = 0
        failing = False
        try:
            while not self._stopping:
                gen = src.events()
                try:
                    async for ev in gen:
                        if failing:
                            failing = False
                            attempt = 0
                            await self._put(SourceRecovered(src.name, self._clock()))
                        await self._put(ev)
                    return
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the failure boundary: reported, then retried
                    attempt += 1
                    delay = min(self.backoff_max, self.backoff_initial * 2.0 ** (attempt - 1))
                    log.debug("source %s failed (attempt %d)", src.name, attempt, exc_info=True)
                    failing = True
                    await self._put(
                        SourceFailed(src.name, describe_error(exc), self._clock(), attempt, delay)
                    )
                    await asyncio.sleep(delay)
                finally:
                    # close it now (files, subprocesses, HTTP clients), not whenever GC runs
                    aclose = getattr(gen, "aclose", None)
                    if aclose is not None:
                        try:
                            await aclose()
                        except Exception as exc:  # a cleanup error must not mask the run
                            log.warning("closing source %s: %s", src.name, describe_error(exc))
        finally:
            self._live -= 1
            if self._queue is not None:
                self._queue.put_nowait(_WAKE)

    async def _ticker(self) -> None:
        assert self.tick_interval is not None
        came = asyncio.Event()
        if self.quiet_tick is not None:
            self._events_came, self._last_event = came, self._clock()
        loop = asyncio.get_running_loop()
        while True:
            await self._put(Tick(self._clock()))
            delay = self.tick_interval if self.quiet_tick is None else tick_delay(
                self._state, self._clock(), self._last_event, self.tick_interval, self.quiet_tick)
            if delay <= self.tick_interval:  # (the 1 s ticks on the log's read grid)
                await asyncio.sleep(delay if delay < self.tick_interval
                                    else grid_wait(loop.time(), delay))
                continue
            came.clear()  # a quiet wait ends at the next event: the 1 s ticks are back at once
            self._quiet = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(came.wait(), delay)
            self._quiet = False

    def _drain(self, first: Event | list[Event] | _Wake | None) -> list[Event]:
        assert self._queue is not None
        batch: list[Event] = list(self._pending)
        self._pending.clear()
        self._lines_came.clear()
        item = first
        while True:
            if isinstance(item, list):
                batch.extend(item)
                self._queued -= len(item)
            elif item is not None and not isinstance(item, _Wake):
                batch.append(item)
                self._queued -= 1
            try:
                item = self._queue.get_nowait()
            except asyncio.QueueEmpty:
                break
        if self._room is not None:
            self._room.set()
        return batch

    async def _batch_loop(self) -> None:
        assert self._queue is not None
        loop = asyncio.get_running_loop()
        if self._pending:
            self._apply(self._drain(None))
        while not self._stopping:
            if self._live <= 0 and self._queue.empty() and not self._pending:
                break
            first = await self._queue.get()
            if not self._shown_lines and isinstance(first, list) and any(
                    type(ev) is LogLine for ev in first):
                # the log's first lines go out at once: the first text is not kept waiting
                self._shown_lines = True
            elif self.batch_interval > 0 and not isinstance(first, _Wake) and not (
                    isinstance(first, list) and len(first) >= FULL_BATCH):
                deadline = loop.time() + self.batch_interval
                while not self._stopping and (remaining := deadline - loop.time()) > 0:
                    if self._shown_lines:
                        await asyncio.sleep(remaining)
                        continue
                    # until the log's first lines are shown, their arrival ends the wait (a
                    # health or process event that came first must not hold them back)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._lines_came.wait(), remaining)
                    if self._lines_came.is_set():
                        self._shown_lines = True
                        break
            batch = self._drain(first)
            if self._quiet and len(batch) < FULL_BATCH and can_wait(batch, self._state):
                self._pending = batch
                continue
            self._apply(batch)

    def _record(self, events: Sequence[Event]) -> list[Event]:
        """``events`` to the ``--record`` file: a failed write comes back as an event."""
        out = self._record_file
        return [] if out is None else list(out.write(events, self._clock()))

    def _apply(self, batch: Iterable[Event]) -> None:
        events = list(batch)
        if not events:
            return
        events += self._record(events)
        self._state = reduce(self._state, events)
        if self._events_came is not None and not all(map(routine, events)):
            self._last_event = self._clock()
            self._events_came.set()
        self.events_seen += len(events)
        self.batches += 1
        if self._kept is not None and (opened := self._kept.add(events)) is not None:
            self._start_summary(opened)
        self._notify(events)

    def _notify(self, events: list[Event]) -> None:
        for q in self._update_queues:
            q.put_nowait((self._state, events))
        for cb in list(self._subscribers):
            cb(self._state, events)

    # ------------------------------------------------------------------ the summary's merge
    def _start_summary(self, opened: LogOpened) -> None:
        assert self._summarizer is not None
        self._opened = opened
        self._open_t = self._state.clock.now
        self._live += 1
        self._summary_task = asyncio.create_task(self._summarize(opened), name="summary")

    async def _summarize(self, opened: LogOpened) -> None:
        """The summarizer's events go through the queue; its state is merged (``_merge``)."""
        assert self._summarizer is not None
        gen = self._summarizer(opened)
        try:
            from eagle_tui.model.fold.prefix import PrefixSummary

            async for item in gen:
                if isinstance(item, PrefixSummary):
                    self._merge(item)
                else:
                    await self._put(item)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the failure boundary: reported; the tail goes on alone
            log.debug("the summary of %s failed", opened.path, exc_info=True)
            await self._put(SummaryProgress(opened.path, opened.host, 0, opened.start, 0,
                                            None, True, describe_error(exc)))
        finally:
            aclose = getattr(gen, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()
            self._kept = None
            self._live -= 1
            if self._queue is not None:
                self._queue.put_nowait(_WAKE)

    def _merge(self, summary: PrefixSummary) -> None:
        """Swap in the summary followed by every event since the start (between two batches:
        the queue's events not reduced yet go onto the merged state)."""
        assert self._kept is not None
        state, events = self._kept.merge(summary, self._open_t)
        self._kept = None
        if state is None:
            if events:
                self._apply(events)
            return
        self._state = state
        if failed := self._record(events):
            self._state = reduce(self._state, failed)
            events = [*events, *failed]
        self.events_seen += len(events)
        self.batches += 1
        self._notify(events)


__all__ = ["Session", "Subscriber", "Summarizer", "Update", "describe_error"]
