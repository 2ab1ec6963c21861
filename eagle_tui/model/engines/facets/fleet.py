"""An engine as the fleet view sees it through Prometheus (PromQL over its series)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FleetFacet:
    """Series whose presence on an instance says it runs this engine."""

    markers: tuple[str, ...] = ()


__all__ = ["FleetFacet"]
