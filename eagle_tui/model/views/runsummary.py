"""What the run history keeps of a run: phase times, time to ready, crash, figures.

Folded from the dashboard state (pure), written by the session's history recorder at each
phase change and every few seconds, so a run that is killed still leaves its summary. The
figures are over the whole run, never over idle time: tok/s median / p10 / p90 of the
intervals that generated tokens, and the acceptance over the whole run (:func:`run_accept`:
the server's counters where it has them, else the log's intervals weighted by their work), with
its source named in the record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from itertools import pairwise
from typing import Any

from eagle_tui.model.engines import profile_of
from eagle_tui.model.events import Phase, PreviousRun
from eagle_tui.model.ingest.logclock import best_span, span
from eagle_tui.model.record import Record, record
from eagle_tui.model.runtotals import CounterRun, add_counters
from eagle_tui.model.state import DashboardState, PhaseMark
from eagle_tui.model.views import enginetimes
from eagle_tui.model.views.liveness import Liveness, liveness
from eagle_tui.model.views.numtext import fixed
from eagle_tui.model.views.ready import ready_seconds

END_AFTER_S = 60.0  # /health failing this long after ready: the run ended
_GONE = ("exited", "not_found", "zombie")
COUNTERS = "server counters"  # the source named for a figure of the run's counter totals
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
    """Seconds spent in each phase reached (from one phase's first mark to the next's), the
    engine's own figure in place of the estimate where it reports one (``enginetimes``)."""
    reached = [(p, m) for p in _ORDER if (m := _mark(state, p)) is not None]
    out: dict[str, float] = {}
    for (phase, mark), (_, nxt) in pairwise(reached):
        secs = _between(mark, nxt)
        if secs is not None:
            out[phase.value] = round(secs, 3)
    return enginetimes.merged(out, state)


def engine_fields(state: DashboardState) -> dict[str, Any]:
    """``phase_times``, ``phase_sources`` and ``engine_startup`` (the engine's figures under
    its own names) where the engine reported its startup; ``{}`` where it did not."""
    engine = enginetimes.engine_dict(state)
    if engine is None:
        return {}
    times = phase_times(state)
    return {"phase_times": times, "phase_sources": enginetimes.sources(times, state),
            "engine_startup": engine}


def _quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    pos = q * (len(values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


@record
class RunAccept(Record):
    """A run's acceptance over the whole run, where it came from and what weighed it."""

    value: float
    source: str  # "server counters", "log", or a figure's source when neither has one
    note: str = ""
    weight: float = 0.0


def counter_accept(engine: str, run: CounterRun) -> RunAccept | None:
    """The acceptance the run's counter totals give (its engine's own arithmetic)."""
    profile = profile_of(engine)
    if profile is None or not run.totals:
        return None
    facet = profile.metrics
    found = facet.window_accept(run.total, run.total(facet.gen_counter)
                                if facet.gen_counter else None)
    if found is None:
        return None
    value, weight, note = found
    restarts = f"; {run.restarts} restart(s) added up" if run.restarts else ""
    return RunAccept(value, COUNTERS, f"{note} over the run{restarts}", weight)


def run_accept(state: DashboardState) -> RunAccept | None:
    """The run's acceptance: its counters' ratio over the run, else the log's intervals over
    the run weighted by their work, else the newest figure (an engine with neither)."""
    engine = state.metrics.last.engine if state.metrics.last is not None else \
        state.startup.engine
    found = counter_accept(engine, state.metrics.run)
    if found is not None:
        return found
    st = state.stats
    if st.run_w > 0:
        what = "drafts" if st.last_spec is not None else "running requests"
        return RunAccept(st.run_wv / st.run_w, "log",
                         f"{st.run_n} intervals over the run, weighted by {what}", st.run_w)
    from eagle_tui.model.views import figures

    acc = figures.accept_len(state)
    if acc.value is None:
        return None
    return RunAccept(acc.value, acc.source or "?", "the newest interval (no totals)")


def accept_fields(acc: RunAccept) -> dict[str, Any]:
    """A :class:`RunAccept` as the record's ``metrics`` keys."""
    return {"accept_len": round(acc.value, 3), "accept_source": acc.source,
            "accept_note": acc.note, "accept_weight": round(acc.weight, 3)}


def with_counters(metrics: dict[str, Any], engine: str,
                  counters: Mapping[str, float]) -> dict[str, Any]:
    """A record's figures with the acceptance of its server's final lifetime ``counters``
    (a launched run is its server's life: they counted from zero at its start)."""
    found = counter_accept(engine, add_counters(CounterRun(), counters))
    if found is None:
        return metrics
    recorded = _num(metrics.get("accept_weight")) if metrics.get("accept_source") == COUNTERS \
        else None
    if recorded is not None and recorded > found.weight:
        return metrics  # a watcher's totals over several lives of the server: more than this one
    return {**metrics, **accept_fields(found)}


def with_final(state: DashboardState, counters: Mapping[str, float]) -> DashboardState:
    """``state`` with one last scrape's counters added to its run totals (before a stop)."""
    if not counters:
        return state
    return replace(state, metrics=replace(state.metrics,
                                          run=add_counters(state.metrics.run, counters)))


def with_log(metrics: dict[str, Any], numbers: Mapping[str, Any],
             tok_s_median: float | None) -> dict[str, Any]:
    """A record's figures completed from its log's report (its weighted acceptance over the
    whole log, its tok/s median): only the figures the record lacks."""
    out = dict(metrics)
    weighted = _num(numbers.get("accept_len_weighted"))
    if "accept_len" not in out and weighted is not None:
        out.update(accept_len=round(weighted, 3), accept_source="log",
                   accept_note=str(numbers.get("window") or ""))
    if "tok_s_median" not in out and tok_s_median:
        out["tok_s_median"] = round(tok_s_median, 2)
    return out


def with_windows(metrics: dict[str, Any], windows: list[dict[str, Any]]) -> dict[str, Any]:
    """A record without an acceptance given its bench windows' own: each source's figures over
    every window, weighed by their work (the first source that has a weight: the log's, then
    ``/metrics``', then the client's)."""
    if "accept_len" in metrics:
        return metrics
    by_source: dict[str, list[tuple[float, float]]] = {}
    for w in windows:
        for f in w.get("figures") or ():
            if not isinstance(f, dict):
                continue
            value, weight = _num(f.get("accept_len")), _num(f.get("weight"))
            if value is not None and weight:
                by_source.setdefault(str(f.get("source")), []).append((value, weight))
    for source, pairs in by_source.items():
        total = sum(w for _, w in pairs)
        value = sum(v * w for v, w in pairs) / total
        return {**metrics, "accept_len": round(value, 3), "accept_source": f"bench {source}",
                "accept_note": f"{len(pairs)} bench window(s), weighted by their work",
                "accept_weight": round(total, 3)}
    return metrics


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
    if state.stats.run_tps_n:  # every interval of the run (the series keep the last ones)
        out["tok_s_mean"] = round(state.stats.run_tps / state.stats.run_tps_n, 2)
        out["intervals"] = state.stats.run_tps_n
    acc = run_accept(state)
    if acc is not None:
        out.update(accept_fields(acc))
    rate = figures.accept_rate(state)
    if rate.value is not None:
        out["accept_rate"] = round(rate.value, 4)
    if state.config.hidden_dims:
        out["hidden_dims"] = list(state.config.hidden_dims)
    engine = engine_fields(state)  # the phase times' sources, the engine's own figures
    if engine:
        out["phase_sources"] = engine["phase_sources"]
        out["engine_startup"] = engine["engine_startup"]
    return out


def ended(state: DashboardState, live: Liveness) -> bool:
    """The server went away after ready: its process is gone, or ``/health`` has failed for
    :data:`END_AFTER_S` (a shorter outage is only shown as dead, not recorded as the end)."""
    if live.activity != "dead" or not state.startup.ready:
        return False
    p = state.live.process
    if state.live.process_exit is not None or (p is not None and p.status in _GONE):
        return True
    ok, now = state.liveness.health_ok_t, state.clock.now
    return ok is not None and now is not None and now - ok >= END_AFTER_S


def summarize(state: DashboardState) -> dict[str, Any]:
    """The history's columns for this run (``phases``, ``ready_s``, ``crash``, ``metrics``);
    ``ended`` (and ``end_reason``, not a column) once the server went away after ready."""
    crash = None
    if state.startup.crash is not None:
        crash = {"kind": str(state.startup.crash.kind), "hint": state.startup.crash.hint,
                 "message": state.startup.crash.message,
                 # the file's own number (a log opened at its end: once the lines are counted)
                 "lineno": state.startup.crash.lineno + (state.log.lineno_base or 0)}
    live = liveness(state)
    run_state = ("crashed" if state.startup.crash is not None else
                 "ended" if ended(state, live) else
                 "serving" if state.startup.phase is Phase.SERVING else
                 "ready" if state.startup.ready else "starting")
    out = {"phases": phase_times(state), "ready_s": ready_seconds(state), "crash": crash,
           "metrics": figures_summary(state), "state": run_state,
           "engine": state.startup.engine if state.startup.engine != "unknown" else None}
    if run_state == "ended":  # the server went away after ready: when it was last seen up
        out["ended"] = live.since if live.since is not None else state.clock.now
        out["end_reason"] = live.reason
    return out


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
    return f"{whole // 60}:{whole % 60:02d}" if whole >= 60 else f"{fixed(seconds, 1)}s"


def previous_figures(prev: PreviousRun) -> str:
    """``accept 1.00, 56.7 tok/s, ready 1:12`` (what is known of the run)."""
    parts = []
    if prev.accept_len is not None:
        parts.append(f"accept {fixed(prev.accept_len, 2)}")
    if prev.tok_s is not None:
        parts.append(f"{fixed(prev.tok_s, 1)} tok/s")
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
    "COUNTERS",
    "RunAccept",
    "accept_fields",
    "counter_accept",
    "ended",
    "engine_fields",
    "figures_summary",
    "phase_times",
    "previous_figures",
    "previous_line",
    "previous_run",
    "previous_run_from_record",
    "ready_seconds",
    "run_accept",
    "summarize",
    "with_counters",
    "with_final",
    "with_log",
    "with_windows",
]
