"""An engine's deliberate holds: sleep, pause and fault-tolerance recovery.

A held server is neither idle, stalled, starting nor dead: it was told to stop generating (or
waits for an operator to recover it). Each engine says where that shows: a gauge on
``/metrics`` (its name and label), endpoints that answer a JSON boolean, a path that says "up"
while its readiness path says "not ready" (a paused server), and its log lines
(``read_line``). The poller asks the endpoints only where they exist and at a slow cadence
(``sources/hold.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from eagle_tui.model.events import HoldLine
from eagle_tui.model.record import Record, record


@record
class HoldQuery(Record):
    """``GET path`` answers ``{key: true|false}``; ``says`` which hold it reports."""

    path: str
    key: str
    says: str  # "paused" or "sleeping"


@record
class HoldFacet(Record):
    """Where an engine shows that it sleeps, is paused or recovers from a fault."""

    # (name, label, awake value, {label value: sleep level}): the sleep gauge, one series per
    # label value; the engine sleeps when the awake series reads 0
    sleep_gauge: str | None = None
    sleep_label: str = ""
    awake_value: str = ""
    level_values: tuple[tuple[str, int], ...] = ()
    queries: tuple[HoldQuery, ...] = ()  # endpoints answering a JSON boolean (404: not there)
    # answers 200 while the server is healthy, paused or not: with the readiness path's 503 it
    # says "paused" (None: the engine has no such pair)
    up_path: str | None = None
    # (message, line number, the log's time text) → the hold event of one of its log lines
    read_line: Callable[[str, int, str | None], HoldLine | None] | None = None

    @property
    def any(self) -> bool:
        return bool(self.sleep_gauge or self.queries or self.up_path or self.read_line)

    def gauge_key(self, value: str) -> str:
        """The key a scrape keeps one series of the sleep gauge under (``NAME{label=value}``)."""
        return f"{self.sleep_gauge}{{{self.sleep_label}={value}}}"

    def sleep_of(self, gauges: Mapping[str, float]) -> tuple[bool, int | None] | None:
        """(asleep, level) from a scrape's gauges; ``None`` without the gauge. Asleep when no
        engine is awake; the level is the highest whose series reads 1 (0: scheduling only)."""
        if self.sleep_gauge is None:
            return None
        awake = gauges.get(self.gauge_key(self.awake_value))
        if awake is None:
            return None
        if awake >= 1:
            return False, None
        levels = [lv for value, lv in self.level_values
                  if gauges.get(self.gauge_key(value), 0.0) >= 1]
        return True, max(levels, default=0)


__all__ = ["HoldFacet", "HoldQuery"]
