"""The one shape every data source has: a name and an async iterator of typed events.

A source never touches the UI and never decides what a failure means for the user. If its
iterator raises, the :class:`~eagle_tui.session.Session` reports a ``SourceFailed`` event and calls
``events()`` again after a backoff, so a source that wants to *resume* (the log tail continuing at
its last complete line) keeps that position on ``self`` rather than inside the generator.
An iterator that simply ends means "this source has nothing more to say" (a replay reached its
end, the watched process exited); it is not restarted.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Protocol, runtime_checkable

from eagle_tui.model.events import Event
from eagle_tui.model.views.ticks import grid_due


@runtime_checkable
class Source(Protocol):
    """Anything the session can run: ``name`` is shown in ``SourceFailed`` and the UI."""

    name: str

    def events(self) -> AsyncIterator[Event | list[Event]]:
        """Yield events until done; raise to ask the session for a retry with backoff.

        A source that produces events in bursts (the log tail: one chunk read → hundreds of
        events) may yield them as a ``list``, which costs the session one queue operation.
        """
        ...


class _Polls(Protocol):
    max_polls: int | None
    polls: int


def under_limit(source: _Polls) -> Callable[[], bool]:
    """``paced``'s ``more`` for a source that counts its polls up to ``max_polls`` (``None``:
    no limit); the count is the source's own, so a restarted ``events()`` goes on from it."""
    return lambda: source.max_polls is None or source.polls < source.max_polls


async def paced(interval: float | Callable[[], float], more: Callable[[], bool] = lambda: True,
                count: int | None = None) -> AsyncIterator[None]:
    """One step of a poll loop per iteration while ``more()`` (and at most ``count`` steps):
    each step starts on the session's grid (``model/views/ticks.grid_due``: its answer joins the
    batch of the log read and the tick there), ``interval`` seconds (or what ``interval()`` says
    once the step's body ran) after the last one started, ½ to 1½ for the first one after an
    off-grid start; the time the body took counts toward the interval."""
    loop = asyncio.get_running_loop()
    steps = 0
    while more() and (count is None or steps < count):
        started = loop.time()
        yield
        steps += 1
        if not more() or steps == count:  # the last step: no wait after it
            return
        every = interval() if callable(interval) else interval
        await asyncio.sleep(max(0.0, grid_due(started, every) - loop.time()))


__all__ = ["Source", "paced", "under_limit"]
