"""Where an engine answers over HTTP: readiness, what it says about itself, its models."""

from __future__ import annotations

from collections.abc import Callable

from eagle_tui.model.events import RankLoads, ServerInfo
from eagle_tui.model.record import Record, record


@record
class Endpoints(Record):
    """Paths on the server's base URL (``None``: the engine has no such endpoint)."""

    health: str = "/health"
    metrics: str = "/metrics"
    models: str = "/v1/models"
    server_info: str | None = None  # what it says about itself (settings, lifetime figures)
    server_info_aliases: tuple[str, ...] = ()  # older names of it, asked after it
    # its JSON (and the time it was read) → the event; with ``server_info``
    read_server_info: Callable[[object, float], ServerInfo] | None = None
    # readiness that does no work (200 ready, 503 not yet), asked before ``health``; a version
    # without it answers 404 and ``health`` is asked instead
    ready: tuple[str, ...] = ()
    # whether ``health`` makes the server work (a generation) once it is up, so that a poll of
    # an idle server shows in its log as a request
    health_works: bool = False
    # where only a working ``health`` says "ready": paths that do no work and answer 200 while
    # the server is up, asked instead of it after its first 200
    alive: tuple[str, ...] = ()
    # each data-parallel rank's load (its path, the query that narrows it, and the reader of
    # its JSON); ``None``: the engine has none
    loads: str | None = None
    loads_query: str = ""
    read_loads: Callable[[object, float], RankLoads] | None = None


__all__ = ["Endpoints"]
