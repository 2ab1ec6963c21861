"""How an engine's log is recognised and read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LogFacet:
    """What in a log line names this engine."""

    text_markers: tuple[str, ...] = ()  # a message holding one of these was printed by it
    logger_hints: tuple[str, ...] = ()  # a logger name holding one of these (lower case) is its
    traceback_marker: str | None = None  # a traceback frame path only its code has


__all__ = ["LogFacet"]
