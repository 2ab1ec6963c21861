"""Source of :class:`~eagle_tui.model.events.ConnectionState` events for one SSH host.

Why a source: the session already merges, records and replays sources, so the dashboard's
"reconnecting (attempt n, last error ...)" banner and a ``wait`` run's log get the transport's
state through the same path as every other fact — and a recorded session replays it.

Any transport that offers ``connection_events()`` works (the SSH transport does; the local one has
no connection to report and is simply not given one of these).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from eagle_tui.model.events import ConnectionState, Event


@runtime_checkable
class HasConnectionEvents(Protocol):
    @property
    def host(self) -> str: ...

    def connection_events(self) -> AsyncIterator[ConnectionState]: ...


class ConnectionSource:
    """Yields the transport's current state, then every change; ends when it is closed."""

    def __init__(self, transport: HasConnectionEvents, *, name: str = "") -> None:
        self.transport = transport
        self.name = name or f"ssh {transport.host}"

    async def events(self) -> AsyncIterator[Event]:
        async for state in self.transport.connection_events():
            yield state


__all__ = ["ConnectionSource", "HasConnectionEvents"]
