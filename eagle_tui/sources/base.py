"""The one shape every data source has: a name and an async iterator of typed events.

A source never touches the UI and never decides what a failure means for the user. If its
iterator raises, the :class:`~eagle_tui.session.Session` reports a ``SourceFailed`` event and calls
``events()`` again after a backoff, so a source that wants to *resume* (the log tail continuing at
its last complete line) keeps that position on ``self`` rather than inside the generator.
An iterator that simply ends means "this source has nothing more to say" (a replay reached its
end, the watched process exited); it is not restarted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from eagle_tui.model.events import Event


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


__all__ = ["Source"]
