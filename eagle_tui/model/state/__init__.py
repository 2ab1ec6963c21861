"""The one immutable dashboard state: a record of records, one per concern.

Everything a consumer shows (the TUI, ``wait``'s progress lines, ``report``'s JSON) is a pure
function of this state, and the state is a pure function of the event stream
(:func:`~eagle_tui.model.fold.reducer.reduce`, its only writer). That is what lets a recorded
session replay into exactly the live state, and lets tests drive the whole product with scripted
events.

Each field is a frozen record of one concern, copied on write: a batch of events that does not
touch a concern leaves its record the very same object, so a reader tells "changed" by identity.
Each record's module holds the views that read only it (``state.startup.ready``,
``state.clock.elapsed``); views across records are modules of their own (:mod:`..figures`,
:mod:`..liveness`, :mod:`..alerts`, …) and import this package, which imports none of them.

More in docs/architecture.md, "Module notes", ``model/state/__init__``.
"""

from __future__ import annotations

from dataclasses import field

from eagle_tui.model.record import Record, record
from eagle_tui.model.state.activity import ActivityTrack
from eagle_tui.model.state.alert import Alert
from eagle_tui.model.state.hold import HoldMark, Holds
from eagle_tui.model.state.live import Gpus, LiveSources, LiveTimes
from eagle_tui.model.state.log import RECENT_LINES, LogCounters, LogStats
from eagle_tui.model.state.run import Clock, PhaseMark, Startup
from eagle_tui.model.state.server import ServedConfig, ServerMetrics


@record
class DashboardState(Record):
    """Everything the dashboard shows, folded from the events by :func:`.fold.reduce`."""

    startup: Startup = field(default_factory=Startup)
    config: ServedConfig = field(default_factory=ServedConfig)
    log: LogCounters = field(default_factory=LogCounters)
    stats: LogStats = field(default_factory=LogStats)  # from the log's stats lines
    metrics: ServerMetrics = field(default_factory=ServerMetrics)  # from /metrics
    live: LiveSources = field(default_factory=LiveSources)
    liveness: LiveTimes = field(default_factory=LiveTimes)
    gpu: Gpus = field(default_factory=Gpus)
    # what a silent startup is doing, from when each signal last moved (.activity)
    activity: ActivityTrack = field(default_factory=ActivityTrack)
    alerts: tuple[Alert, ...] = ()
    clock: Clock = field(default_factory=Clock)
    holds: Holds = field(default_factory=Holds)  # asleep, paused, recovering


RECORDS: tuple[str, ...] = tuple(DashboardState.__dataclass_fields__)

__all__ = [
    "RECENT_LINES",
    "RECORDS",
    "Clock",
    "DashboardState",
    "Gpus",
    "HoldMark",
    "Holds",
    "LiveSources",
    "LiveTimes",
    "LogCounters",
    "LogStats",
    "PhaseMark",
    "ServedConfig",
    "ServerMetrics",
    "Startup",
]
