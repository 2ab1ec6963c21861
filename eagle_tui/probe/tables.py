"""The engines' flag tables, as dumped from their own argparse (``eagle_tui/data/flags/``).

One table per engine version (``sglang-0.5.23.json``, ``vllm-0.32.json``), made by
``tests/realserver/dump_flags.py`` from the installed engine, so the lint reads a command line
exactly as that engine would. Without a version asked for, the newest table is used.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from eagle_tui.model.boundary.loaders import load_json
from eagle_tui.model.launching.cmdline import Engine, FlagSpec, FlagTable

ENGINES: tuple[Engine, ...] = ("sglang", "vllm")


def _version_key(name: str) -> tuple[int, ...]:
    version = name.rsplit("-", 1)[-1].removesuffix(".json")
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def available(engine: Engine) -> list[str]:
    """The table versions shipped for ``engine``, oldest first."""
    folder = resources.files("eagle_tui.data").joinpath("flags")
    names = [p.name for p in folder.iterdir() if p.name.startswith(f"{engine}-")]
    return [n.removeprefix(f"{engine}-").removesuffix(".json")
            for n in sorted(names, key=_version_key)]


@cache
def load_table(engine: Engine, version: str | None = None) -> FlagTable:
    """The flag table of ``engine`` (``version``: a shipped one; default the newest)."""
    versions = available(engine)
    if not versions:
        raise LookupError(f"no flag table for {engine}")
    chosen = version if version in versions else versions[-1]
    raw = resources.files("eagle_tui.data").joinpath("flags").joinpath(f"{engine}-{chosen}.json")
    data: dict[str, Any] = load_json(raw.read_text(encoding="utf-8"), f"flag table {raw.name}")
    flags = tuple(
        FlagSpec(tuple(f["opts"]), f["dest"], f["nargs"],
                 tuple(f["choices"]) if f.get("choices") else None)
        for f in data["flags"])
    vllm = engine == "vllm"  # vLLM's FlexibleArgumentParser: ``_`` for ``-``, dotted JSON keys
    return FlagTable(engine, str(data["version"]), flags, bool(data.get("allow_abbrev", True)),
                     underscores=vllm, dotted=vllm)


def load_tables() -> dict[Engine, FlagTable]:
    return {engine: load_table(engine) for engine in ENGINES}


__all__ = ["ENGINES", "available", "load_table", "load_tables"]
