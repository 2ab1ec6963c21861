"""What the run history keeps of a run: phase times, time to ready, crash, figures.

Folded from the dashboard state (pure), written by the session's history recorder at each
phase change and every few seconds, so a run that is killed still leaves its summary. The
figures are over the whole run, never over idle time: tok/s median / p10 / p90 of the
intervals that generated tokens, and the acceptance length weighted by each interval's work
(``figures.accept_len`` decides the source; the series weights where it has them).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from eagle_tui.model.events import Phase, PreviousRun
from eagle_tui.model.ingest.logclock import best_span, span
from eagle_tui.model.state import DashboardState, PhaseMark

_ORDER = (Phase.INIT, Phase.LOADING_WEIGHTS, Phase.WEIGHTS_LOADED, Phase.KV_CACHE,
          Phase.CUDA_GRAPH, Phase.HTTP_SERVER, Phase.READY)


def _mark(state: DashboardState, phase: Phase) -> PhaseMark | None:
    marks = [m for m in state.startup.phases if m.phase is phase and m.role == "target"]
    return marks[0] if marks else state.startup.phase_mark(phase)


def _between(a: PhaseMark | None, b: PhaseMark | None) -> float | None:
    if a is None or b is None:
        return None
    observed = b.t - a.t if a.t is not None and b.t is not None and b.t >= a.t else None
    return best_span(observed, span(a.log_s, b.log_s))


def phase_times(state: DashboardState) -> dict[str, float]:
    """Seconds spent in each phase reached (from one phase's first mark to the next's)."""
    reached = [(p, m) for p in _ORDER if (m := _mark(state, p)) is not None]
    out: dict[str, float] = {}
    for (phase, mark), (_, nxt) in pairwise(reached):
        secs = _between(mark, nxt)
        if secs is not None:
            out[phase.value] = round(secs, 3)
    return out


def ready_seconds(state: DashboardState) -> float | None:
    ready = _mark(state, Phase.READY)
    if ready is None:
        return None
    first = min((m for m in state.startup.phases if m.t is not None), key=lambda m: m.lineno,
                default=None)
    t_start = state.clock.t_start
    observed = ready.t - t_start if ready.t is not None and t_start is not None else None
    logged = span(first.log_s, ready.log_s) if first is not None else None
    secs = best_span(observed, logged)
    return round(secs, 3) if secs is not None else None


def _quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    pos = q * (len(values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def figures_summary(state: DashboardState) -> dict[str, Any]:
    """tok/s quantiles over the intervals that generated tokens, accept len and rate."""
    from eagle_tui.model.views import figures

    tps = [v for v in state.stats.gen_tps.values() if v > 0] or [
        v for v in state.metrics.gen_tps.values() if v > 0]
    out: dict[str, Any] = {}
    if tps:
        out.update(tok_s_median=round(_quantile(tps, 0.5), 2),
                   tok_s_p10=round(_quantile(tps, 0.1), 2),
                   tok_s_p90=round(_quantile(tps, 0.9), 2), intervals=len(tps))
    acc = figures.accept_len(state)
    if acc.value is not None:
        out.update(accept_len=round(acc.value, 3), accept_source=acc.source)
    rate = figures.accept_rate(state)
    if rate.value is not None:
        out["accept_rate"] = round(rate.value, 4)
    if state.config.hidden_dims:
        out["hidden_dims"] = list(state.config.hidden_dims)
    return out


def summarize(state: DashboardState) -> dict[str, Any]:
    """The history's columns for this run (``phases``, ``ready_s``, ``crash``, ``metrics``)."""
    crash = None
    if state.startup.crash is not None:
        crash = {"kind": str(state.startup.crash.kind), "hint": state.startup.crash.hint,
                 "message": state.startup.crash.message,
                 # the file's own number (a log opened at its end: once the lines are counted)
                 "lineno": state.startup.crash.lineno + (state.log.lineno_base or 0)}
    run_state = ("crashed" if state.startup.crash is not None else
                 "serving" if state.startup.phase is Phase.SERVING else
                 "ready" if state.startup.ready else "starting")
    return {"phases": phase_times(state), "ready_s": ready_seconds(state), "crash": crash,
            "metrics": figures_summary(state), "state": run_state,
            "engine": state.startup.engine if state.startup.engine != "unknown" else None}


def previous_run(state: DashboardState, label: str) -> PreviousRun | None:
    """The compact summary of a finished run kept beside the next one (``None``: it never
    got far enough to have a figure, a time to ready or a crash)."""
    figs = figures_summary(state)
    ready = ready_seconds(state)
    crash = str(state.startup.crash.kind) if state.startup.crash is not None else ""
    accept, tok_s = figs.get("accept_len"), figs.get("tok_s_median")
    if accept is None and tok_s is None and ready is None and not crash:
        return None
    return PreviousRun(label, accept, tok_s, ready, crash)


def previous_run_from_record(label: str, summary: dict[str, Any]) -> PreviousRun:
    """The same from a history row's columns (``metrics``, ``ready_s``, ``crash``)."""
    metrics = summary.get("metrics") or {}
    crash = summary.get("crash") or {}
    return PreviousRun(label, _num(metrics.get("accept_len")), _num(metrics.get("tok_s_median")),
                       _num(summary.get("ready_s")), str(crash.get("kind") or ""))


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def _clock(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}:{whole % 60:02d}" if whole >= 60 else f"{seconds:.1f}s"


def previous_figures(prev: PreviousRun) -> str:
    """``accept 1.00, 56.7 tok/s, ready 1:12`` (what is known of the run)."""
    parts = []
    if prev.accept_len is not None:
        parts.append(f"accept {prev.accept_len:.2f}")
    if prev.tok_s is not None:
        parts.append(f"{prev.tok_s:.1f} tok/s")
    if prev.ready_s is not None:
        parts.append(f"ready {_clock(prev.ready_s)}")
    if prev.crash:
        parts.append(f"crashed ({prev.crash})")
    return ", ".join(parts) if parts else "no figures"


def previous_line(prev: PreviousRun) -> str:
    """``previous run #1: accept 1.00, 56.7 tok/s, ready 1:12``."""
    name = f"previous run {prev.label}" if prev.label else "previous run"
    return f"{name}: {previous_figures(prev)}"


__all__ = [
    "figures_summary",
    "phase_times",
    "previous_figures",
    "previous_line",
    "previous_run",
    "previous_run_from_record",
    "ready_seconds",
    "summarize",
]
