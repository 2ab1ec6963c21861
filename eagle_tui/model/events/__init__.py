"""Typed events: the one vocabulary every layer speaks.

Every log line, HTTP answer, process sample and GPU sample becomes one of these small frozen
dataclasses. Parsers and sources *produce* them, :func:`eagle_tui.model.fold.reducer.reduce`
*consumes* them, the session records them to JSON lines and replays them. Keeping them plain data
(no methods with side effects, no references to I/O objects) is what makes record/replay, scripted
tests and the headless ``wait`` command share one code path with the dashboard.

Times: ``t`` is a wall-clock ``time.time()`` float stamped by whoever observed the event (the
source, not the server); ``time`` on log-derived events is the server's own timestamp text as it
appeared in the line (or ``None``), kept verbatim because log timestamps have no year (vLLM) or no
zone (SGLang) and must not be guessed at.
"""

from __future__ import annotations

from eagle_tui.model.events.hold import HoldLine, HoldSample
from eagle_tui.model.events.live import (
    Baseline,
    ConnectionState,
    DownloadSample,
    DraftConfig,
    GpuInfo,
    GpuProcess,
    GpuSample,
    GpuState,
    HealthSample,
    HealthState,
    MetricsSample,
    PreviousRun,
    ProcessExited,
    ProcessSample,
    ProcessStatus,
    RankLoads,
    ServerInfo,
    SourceFailed,
    SourceRecovered,
    StopRequested,
    Tick,
    UserMarker,
    UsualTimes,
)
from eagle_tui.model.events.log import (
    CrashEvent,
    DecodeStats,
    Engine,
    EngineDetected,
    HiddenStateDims,
    LineKind,
    LogLine,
    LogOpened,
    LogPrefixCounted,
    LogRestarted,
    ModelInfo,
    Phase,
    PhaseEvent,
    PrefillStats,
    Progress,
    Severity,
    SpecConfig,
    SpecHistogram,
    SpecStats,
    SpecTier,
    SummaryProgress,
)
from eagle_tui.model.events.startup import TIMINGS_SOURCES, EngineTimings, SubStep, WeightBytes

Event = (
    LogLine
    | EngineDetected
    | PhaseEvent
    | Progress
    | SpecConfig
    | SpecTier
    | DecodeStats
    | PrefillStats
    | SpecStats
    | SpecHistogram
    | HiddenStateDims
    | ModelInfo
    | CrashEvent
    | LogRestarted
    | LogOpened
    | LogPrefixCounted
    | SummaryProgress
    | HealthSample
    | MetricsSample
    | RankLoads
    | ServerInfo
    | DraftConfig
    | ProcessSample
    | ProcessExited
    | StopRequested
    | GpuSample
    | DownloadSample
    | SourceFailed
    | SourceRecovered
    | ConnectionState
    | Tick
    | Baseline
    | UserMarker
    | UsualTimes
    | PreviousRun
    | EngineTimings
    | SubStep
    | WeightBytes
    | HoldLine
    | HoldSample
)

EVENT_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        LogLine,
        EngineDetected,
        PhaseEvent,
        Progress,
        SpecConfig,
        SpecTier,
        DecodeStats,
        PrefillStats,
        SpecStats,
        SpecHistogram,
        HiddenStateDims,
        ModelInfo,
        CrashEvent,
        LogRestarted,
        LogOpened,
        LogPrefixCounted,
        SummaryProgress,
        HealthSample,
        MetricsSample,
        RankLoads,
        ServerInfo,
        DraftConfig,
        ProcessSample,
        ProcessExited,
        StopRequested,
        GpuProcess,
        GpuInfo,
        GpuSample,
        DownloadSample,
        SourceFailed,
        SourceRecovered,
        ConnectionState,
        Tick,
        Baseline,
        UserMarker,
        UsualTimes,
        PreviousRun,
        EngineTimings,
        SubStep,
        WeightBytes,
        HoldLine,
        HoldSample,
    )
}

__all__ = [
    "EVENT_TYPES",
    "TIMINGS_SOURCES",
    "Baseline",
    "ConnectionState",
    "CrashEvent",
    "DecodeStats",
    "DownloadSample",
    "DraftConfig",
    "Engine",
    "EngineDetected",
    "EngineTimings",
    "Event",
    "GpuInfo",
    "GpuProcess",
    "GpuSample",
    "GpuState",
    "HealthSample",
    "HealthState",
    "HiddenStateDims",
    "HoldLine",
    "HoldSample",
    "LineKind",
    "LogLine",
    "LogOpened",
    "LogPrefixCounted",
    "LogRestarted",
    "MetricsSample",
    "ModelInfo",
    "Phase",
    "PhaseEvent",
    "PrefillStats",
    "PreviousRun",
    "ProcessExited",
    "ProcessSample",
    "ProcessStatus",
    "Progress",
    "RankLoads",
    "ServerInfo",
    "Severity",
    "SourceFailed",
    "SourceRecovered",
    "SpecConfig",
    "SpecHistogram",
    "SpecStats",
    "SpecTier",
    "StopRequested",
    "SubStep",
    "SummaryProgress",
    "Tick",
    "UserMarker",
    "UsualTimes",
    "WeightBytes",
]
