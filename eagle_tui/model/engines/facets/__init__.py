"""The facets of an engine profile, one module per concern (logs, metrics, fleet, endpoints,
launch, holds); each is plain data plus pure functions an engine's package fills in."""

from eagle_tui.model.engines.facets.endpoints import Endpoints
from eagle_tui.model.engines.facets.fleet import FleetFacet
from eagle_tui.model.engines.facets.hold import HoldFacet, HoldQuery
from eagle_tui.model.engines.facets.launch import LaunchFacet
from eagle_tui.model.engines.facets.logs import LogFacet
from eagle_tui.model.engines.facets.metrics import MetricsFacet

__all__ = ["Endpoints", "FleetFacet", "HoldFacet", "HoldQuery", "LaunchFacet", "LogFacet",
           "MetricsFacet"]
