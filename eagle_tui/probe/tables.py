"""The engines' flag tables, as dumped from their own argparse (``eagle_tui/data/flags/``).

One table per engine version (``sglang-0.5.23.json``, ``vllm-0.32.json``), made by
``tests/realserver/dump_flags.py`` from the installed engine, so the lint reads a command line
exactly as that engine would. Which files are an engine's, and the parser's quirks the files do
not record, are its profile's (``launch.flag_table``, ``.underscores``, ``.dotted``); a profile
may give its table inline instead. Without a version asked for, the newest table is used.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from eagle_tui.model.boundary.loaders import load_json
from eagle_tui.model.engines import profile_of, profiles
from eagle_tui.model.engines.facets.launch import LaunchFacet
from eagle_tui.model.launching.cmdline import Engine, FlagSpec, FlagTable


def _version_key(name: str) -> tuple[int, ...]:
    version = name.rsplit("-", 1)[-1].removesuffix(".json")
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def _source(engine: Engine) -> tuple[str | FlagTable, LaunchFacet]:
    """Where the engine's table comes from: a file stem or an inline table (a name no profile
    has is taken for a stem, as the files are named)."""
    profile = profile_of(engine)
    launch = profile.launch if profile is not None else LaunchFacet()
    return launch.flag_table or engine, launch


def available(engine: Engine) -> list[str]:
    """The table versions shipped for ``engine``, oldest first."""
    source, _ = _source(engine)
    if isinstance(source, FlagTable):
        return [source.version]
    return _files(source)


def _files(stem: str) -> list[str]:
    folder = resources.files("eagle_tui.data").joinpath("flags")
    names = [p.name for p in folder.iterdir() if p.name.startswith(f"{stem}-")]
    return [n.removeprefix(f"{stem}-").removesuffix(".json")
            for n in sorted(names, key=_version_key)]


def load_table(engine: Engine, version: str | None = None) -> FlagTable:
    """The flag table of ``engine`` (``version``: a shipped one; default the newest)."""
    source, launch = _source(engine)
    if isinstance(source, FlagTable):
        return source
    return _load(engine, source, version, launch.underscores, launch.dotted)


@cache
def _load(engine: Engine, stem: str, version: str | None, underscores: bool,
          dotted: bool) -> FlagTable:
    versions = _files(stem)
    if not versions:
        raise LookupError(f"no flag table for {engine}")
    chosen = version if version in versions else versions[-1]
    raw = resources.files("eagle_tui.data").joinpath("flags").joinpath(f"{stem}-{chosen}.json")
    data: dict[str, Any] = load_json(raw.read_text(encoding="utf-8"), f"flag table {raw.name}")
    flags = tuple(
        FlagSpec(tuple(f["opts"]), f["dest"], f["nargs"],
                 tuple(f["choices"]) if f.get("choices") else None)
        for f in data["flags"])
    return FlagTable(engine, str(data["version"]), flags, bool(data.get("allow_abbrev", True)),
                     underscores=underscores, dotted=dotted)


def load_tables() -> dict[Engine, FlagTable]:
    """Every registered engine's table (an engine without one is left out: its commands are
    recognised, and refused for want of a table)."""
    return {p.name: load_table(p.name) for p in profiles() if p.launch.flag_table}


__all__ = ["available", "load_table", "load_tables"]
