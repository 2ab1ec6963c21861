"""How long each startup phase usually takes for this model and these flags on this host.

The median over earlier runs in the history that reached ready with the same engine, host,
model and flags — flags that cannot change how long a startup takes (the port, the host
address, log levels, names, keys) are left out of the comparison.
"""

from __future__ import annotations

from statistics import median
from typing import Any

from eagle_tui.history.store import RunStore
from eagle_tui.model.bench.compare import flatten
from eagle_tui.model.events import UsualTimes

_VOLATILE = ("--port", "--host", "--log-level", "--served-model-name", "--api-key",
             "--decode-log-interval", "--uvicorn-log-level", "--disable-log-requests",
             "--enable-log-requests", "--log-requests")
LOOKBACK = 200


def same_setup(flags: dict[str, Any]) -> dict[str, str]:
    """The flags that identify a setup (volatile ones dropped), flattened for comparison."""
    return {k: v for k, v in flatten(flags).items() if not k.startswith(_VOLATILE)}


def usual_times(store: RunStore, *, host: str, engine: str | None, flags: dict[str, Any],
                exclude: int | None = None) -> UsualTimes | None:
    """The median phase times of matching earlier runs (``None`` when there is none)."""
    want = same_setup(flags)
    samples: dict[str, list[float]] = {}
    runs = 0
    for rec in store.list(demo=None, limit=LOOKBACK):
        if rec.id == exclude or rec.host != host or rec.engine != engine or not rec.phases \
                or rec.ready_s is None or same_setup(rec.flags or {}) != want:
            continue
        runs += 1
        for phase, secs in rec.phases.items():
            if isinstance(secs, (int, float)):
                samples.setdefault(phase, []).append(float(secs))
    if not runs:
        return None
    return UsualTimes(tuple(sorted((p, round(median(v), 3)) for p, v in samples.items())), runs)


__all__ = ["same_setup", "usual_times"]
