"""What changed between runs: flags (inside JSON values too), phases, and the figures.

The fix of the seed's bug is one flag (``--speculative-algorithm EAGLE`` → ``EAGLE3``; in vLLM
one key, ``"method"``, inside ``--speculative-config``), and a comparison must show it as one
changed line, not as two different 200-character JSON strings. So flag values are flattened
first: a JSON object becomes one entry per key (``speculative_config.method``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.record import Record, record

MISSING = "(not set)"


@record
class FlagChange(Record):
    """One flag whose value differs between two runs (``MISSING`` where it was not given)."""

    flag: str
    before: str
    after: str


def _as_obj(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip().startswith("{") and len(value) < 64_000:
        try:
            return load_json(value, "a flag's JSON value")
        except LoadError:
            return value
    return value


def flatten(flags: Mapping[str, Any]) -> dict[str, str]:
    """``{"speculative_config": {"method": "eagle"}}`` → ``{"--speculative-config.method": ...}``.

    Keys are the flags as typed (``--`` and dashes; JSON keys after a dot, as vLLM's own
    dotted form writes them)."""
    out: dict[str, str] = {}

    def walk(prefix: str, value: Any) -> None:
        value = _as_obj(value)
        if isinstance(value, dict) and value:
            for key in sorted(value):
                walk(f"{prefix}.{key}", value[key])
        elif isinstance(value, list):
            out[prefix] = " ".join(str(v) for v in value)
        elif isinstance(value, bool):
            out[prefix] = "true" if value else "false"
        else:
            out[prefix] = str(value)

    for name in sorted(flags):
        walk("--" + name.replace("_", "-"), flags[name])  # as the user types it
    return out


def flag_changes(runs: Sequence[Mapping[str, Any]]) -> list[FlagChange]:
    """The flags that differ anywhere among ``runs`` (each a flags dict), as first → last."""
    if len(runs) < 2:
        return []
    flat = [flatten(f) for f in runs]
    keys = sorted(set().union(*flat))
    out: list[FlagChange] = []
    for key in keys:
        values = [f.get(key, MISSING) for f in flat]
        if len(set(values)) > 1:
            out.append(FlagChange(key, values[0], values[-1]))
    return out


def speedup(tok_s: float | None, baseline: float | None) -> float | None:
    if tok_s is None or not baseline or baseline <= 0:
        return None
    return tok_s / baseline


__all__ = ["MISSING", "FlagChange", "flag_changes", "flatten", "speedup"]
