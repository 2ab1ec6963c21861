"""An engine's Prometheus ``/metrics``: the prefix of its names."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricsFacet:
    """Names on the server's ``/metrics`` page."""

    prefix: str = ""  # every metric of the engine's own starts with this ("sglang:")


__all__ = ["MetricsFacet"]
