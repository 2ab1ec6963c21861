"""The live sources' records: health, process and connections (:class:`LiveSources`), when the
numbers last moved (:class:`LiveTimes`, read by :mod:`..liveness`) and the GPUs (:class:`Gpus`)."""

from __future__ import annotations

from eagle_tui.model.events import (
    ConnectionState,
    GpuSample,
    HealthSample,
    ProcessExited,
    ProcessSample,
    SourceFailed,
    StopRequested,
)
from eagle_tui.model.record import Record, record


@record
class LiveSources(Record):
    """The newest health and process samples, the process' exit, and each source's trouble."""

    health: HealthSample | None = None
    ever_ready_health: bool = False
    process: ProcessSample | None = None
    process_exit: ProcessExited | None = None
    process_ended: bool = False  # a watched process exited since this run's log began
    exit_line: int = 0  # the log lines read when that exit was seen
    stopped: StopRequested | None = None  # the user stopped this run from eagle-tui
    failures: tuple[SourceFailed, ...] = ()  # currently failing sources, one per source
    connections: tuple[ConnectionState, ...] = ()


@record
class LiveTimes(Record):
    """When stats last arrived, last showed work, and since when the newest stats say the server
    is idle (None: they say it works); when /health last said "ready"."""

    data_t: float | None = None
    active_t: float | None = None
    idle_t: float | None = None
    health_ok_t: float | None = None
    first_ready_t: float | None = None  # the server's first /health 200 (its readiness)


@record
class Gpus(Record):
    """The newest GPU sample and each GPU's peak memory."""

    sample: GpuSample | None = None
    mem_peak: tuple[tuple[str, int, int], ...] = ()  # (host, index, peak bytes)
