"""What eagle-tui knows about one engine, in one value: :class:`EngineProfile`.

Every question of the form "which engine, and what does it do" is asked of a profile found in
the :mod:`registry`, never answered by comparing an engine's name in code elsewhere. A profile
is plain data and pure functions grouped in facets, one per concern, so that an engine's
knowledge lives in its own package (``engines/sglang/``, ``engines/vllm/``) and a new engine is
one more package (``docs/architecture.md``, "Adding an engine").
"""

from __future__ import annotations

from dataclasses import field

from eagle_tui.model.engines.facets import (
    Endpoints,
    FleetFacet,
    HoldFacet,
    LaunchFacet,
    LogFacet,
    MetricsFacet,
)
from eagle_tui.model.record import Record, record

UNKNOWN = "unknown"  # the engine of a log or server nothing has recognised yet


@record
class EngineProfile(Record):
    """One engine: its name (the value records and history store), its label for people, and
    its facets."""

    name: str
    label: str
    default_port: int
    logs: LogFacet = field(default_factory=LogFacet)
    metrics: MetricsFacet = field(default_factory=MetricsFacet)
    fleet: FleetFacet = field(default_factory=FleetFacet)
    endpoints: Endpoints = field(default_factory=Endpoints)
    launch: LaunchFacet = field(default_factory=LaunchFacet)
    hold: HoldFacet = field(default_factory=HoldFacet)


__all__ = ["UNKNOWN", "EngineProfile"]
