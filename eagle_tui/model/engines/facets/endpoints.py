"""Where an engine answers over HTTP: readiness, what it says about itself, its models."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Endpoints:
    """Paths on the server's base URL (``None``: the engine has no such endpoint)."""

    health: str = "/health"
    metrics: str = "/metrics"
    models: str = "/v1/models"
    server_info: str | None = None


__all__ = ["Endpoints"]
