"""Phase times: the engine's own figures where it reports them, else the log's stamps.

An engine that measures its startup (SGLang's ``Engine startup timings`` line, its startup
gauges, its ``/server_info``) knows its weight loading, KV allocation and graph capture better
than the gap between two log lines does: its figure replaces eagle-tui's estimate for that
phase, everywhere a phase time is shown or kept (the Startup pane, headless output,
``report --json``, the run history and so the ETA medians), and the source is named with it.
"""

from __future__ import annotations

from typing import Any

from eagle_tui.model.state import DashboardState

ESTIMATE = "log timestamps"  # the source of a phase time eagle-tui measured itself
#: Startup pane step → the phase key whose engine figure is that step's time.
STEP_KEY = {"weights": "loading_weights", "KV cache": "kv_cache", "CUDA graphs": "cuda_graph"}


def reported(state: DashboardState) -> dict[str, float]:
    """The engine's figure per phase key (empty: it reported none)."""
    t = state.startup.engine_times
    return dict(t.phases) if t is not None else {}


def source_name(state: DashboardState) -> str:
    """``engine (log)``, ``engine (/metrics)``, ``engine (server_info)``, or ``""``."""
    t = state.startup.engine_times
    return f"engine ({t.source})" if t is not None else ""


def merged(observed: dict[str, float], state: DashboardState) -> dict[str, float]:
    """``observed`` with the engine's figure in place of each phase it reports; a phase not
    observed is added when the engine spent time in it (a zero is a step it skipped)."""
    out = dict(observed)
    for phase, secs in reported(state).items():
        if phase in observed or secs > 0:
            out[phase] = secs
    return out


def sources(times: dict[str, float], state: DashboardState) -> dict[str, str]:
    """Where each phase time of ``times`` (:func:`merged`) came from."""
    eng, name = reported(state), source_name(state)
    return {k: name if k in eng and eng[k] == v else ESTIMATE for k, v in times.items()}


def step_reported(state: DashboardState, label: str) -> float | None:
    """The engine's figure for the Startup pane's step ``label`` (``None``: none)."""
    key = STEP_KEY.get(label)
    secs = reported(state).get(key) if key is not None else None
    return secs if secs is not None and (secs > 0 or label != "CUDA graphs") else None


def engine_dict(state: DashboardState) -> dict[str, Any] | None:
    """The engine's own figures as it named them, with their source (``None``: none)."""
    t = state.startup.engine_times
    if t is None:
        return None
    return {"source": t.source, "phases": dict(t.phases), "figures": dict(t.figures)}


__all__ = ["ESTIMATE", "STEP_KEY", "engine_dict", "merged", "reported", "source_name",
           "sources", "step_reported"]
