"""How an engine is started: its entry points, its flag table, its lint."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LaunchFacet:
    """Entry points a command line starts the engine with, and its dumped flag table's name."""

    modules: tuple[str, ...] = ()  # ``python -m MODULE``
    scripts: tuple[str, ...] = ()  # console scripts followed by ``serve``
    flag_table: str = ""  # the stem of its table in ``eagle_tui/data/flags/`` (``NAME-VERSION``)


__all__ = ["LaunchFacet"]
