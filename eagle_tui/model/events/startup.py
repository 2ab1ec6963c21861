"""Startup figures the engine itself reports, and the steps inside a phase it prints.

Kept apart from the phase events (``log.py``): these add detail to a phase (its duration as the
engine measured it, a silent compile's name, the checkpoint's bytes) and never move the phase.
"""

from __future__ import annotations

from eagle_tui.model.record import Record, record

# Where an engine-reported figure was read (the log line, the ``/metrics`` gauges or the
# server's own JSON about itself): said next to the figure.
TIMINGS_SOURCES = ("log", "/metrics", "server_info")


@record
class EngineTimings(Record):
    """Startup durations measured by the engine (seconds), not estimated from log stamps.

    ``phases``: eagle-tui's phase keys (``Phase`` values: ``loading_weights``, ``kv_cache``,
    ``cuda_graph``) with the engine's figure for each; ``figures``: the engine's own names and
    values as it reported them (``load_weight``, ``cuda_graph.draft_decode``); ``source``: one
    of :data:`TIMINGS_SOURCES`.
    """

    source: str
    phases: tuple[tuple[str, float], ...] = ()
    figures: tuple[tuple[str, float], ...] = ()
    lineno: int = 0


@record
class SubStep(Record):
    """A step inside the compile/graph phase that has no phase line of its own (a kernel JIT
    compile, an autotune pass): ``what`` names it, ``done``/``total`` are its progress where it
    prints one, ``finished`` is set by the line saying it ended."""

    what: str
    lineno: int
    time: str | None = None
    detail: str = ""
    done: int | None = None
    total: int | None = None
    finished: bool = False


@record
class WeightBytes(Record):
    """The checkpoint's size (GiB) and the percent of it read so far, from the engine's log."""

    lineno: int
    size_gib: float | None = None
    percent: float | None = None


__all__ = ["TIMINGS_SOURCES", "EngineTimings", "SubStep", "WeightBytes"]
