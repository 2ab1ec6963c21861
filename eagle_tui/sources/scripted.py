"""A source that plays a fixed script of events: for tests, UI snapshots and demos.

The script may contain ``Exception`` instances: the source raises them at that point, which lets a
test drive the session's retry/backoff path. The position survives the retry (it lives on the
object, like the log tail's byte offset), so the events after the exception are still delivered,
exactly as a resuming live source would deliver them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence

from eagle_tui.model.events import Event


class ScriptedSource:
    """Yield ``events`` in order, sleeping ``delays`` seconds before each.

    ``delays`` is one float for every event or a sequence with one delay per event (a shorter
    sequence repeats its last value). ``hold=True`` keeps the source open after the script ends,
    so a session (or a Textual app under test) keeps running until it is stopped, the way a live
    source would.
    """

    def __init__(
        self,
        events: Iterable[Event | BaseException],
        delays: float | Sequence[float] = 0.0,
        *,
        name: str = "scripted",
        hold: bool = False,
    ) -> None:
        self.name = name
        self._script: list[Event | BaseException] = list(events)
        if isinstance(delays, int | float):
            self._delays: list[float] = [float(delays)]
        else:
            self._delays = [float(d) for d in delays] or [0.0]
        if any(d < 0 for d in self._delays):
            raise ValueError("ScriptedSource delays must be >= 0")
        self._hold = hold
        self.position = 0  # index of the next script item; survives a retry

    @property
    def finished(self) -> bool:
        return self.position >= len(self._script)

    def _delay(self, index: int) -> float:
        return self._delays[min(index, len(self._delays) - 1)]

    async def events(self) -> AsyncIterator[Event]:
        while self.position < len(self._script):
            index = self.position
            delay = self._delay(index)
            if delay > 0:
                await asyncio.sleep(delay)
            item = self._script[index]
            self.position = index + 1
            if isinstance(item, BaseException):
                raise item
            yield item
        if self._hold:
            await asyncio.Event().wait()  # until the session cancels us


__all__ = ["ScriptedSource"]
