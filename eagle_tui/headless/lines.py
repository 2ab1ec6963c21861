"""The headless presenter's words: one progress line (or JSON object) and the diagnosis.

Shared by ``wait``, ``watch --headless``, ``replay --headless`` and ``demo --headless`` so every
command says the same thing about the same state. Everything here is a pure function of a
:class:`~eagle_tui.model.state.DashboardState`; printing and deciding are in
:mod:`eagle_tui.headless.progress`.
"""

from __future__ import annotations

import signal
from typing import Any

from eagle_tui.model.boundary.termtext import Inert, inert
from eagle_tui.model.events import Phase
from eagle_tui.model.events import Progress as Progress_
from eagle_tui.model.fold.prefix import absolute, line_text, summary_dict, summary_text
from eagle_tui.model.ingest.crash import KILLED_MESSAGE
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.activity import startup_activity, stuck_collective
from eagle_tui.model.views.enginetimes import engine_dict
from eagle_tui.model.views.eta import piecewise_left
from eagle_tui.model.views.figtext import figures_dict, figures_text
from eagle_tui.model.views.figures import figures
from eagle_tui.model.views.hold import hold_of
from eagle_tui.model.views.ready import ready_seconds
from eagle_tui.model.views.runsummary import engine_fields
from eagle_tui.model.views.steps import step_detail
from eagle_tui.model.views.tiertext import ranks_dict, tier_dict, tier_text

GIB = float(1 << 30)
LINE_SHOWN = 500  # characters of each of the crash diagnosis' last log lines


def clean(text: str) -> Inert:
    """Defence in depth: outside text in a line is made inert (the one sanitizer, one line)."""
    return inert(text)


def cut(text: str, limit: int = LINE_SHOWN) -> str:
    """``text`` at most ``limit`` characters, marked when cut: the crash diagnosis' last lines
    of a ``/dev/zero``-like log were 20 lines of a megabyte each."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def phase_text(state: DashboardState) -> str:
    st = state.startup
    text = st.phase.value
    pw = st.piecewise
    if st.phase.rank <= Phase.LOADING_WEIGHTS.rank and st.shards is not None:
        text += f" ({st.shards.label or 'shards'} {st.shards.done}/{st.shards.total})"
    elif st.phase is Phase.CUDA_GRAPH and pw is not None and (
            st.graphs is None or pw.lineno > st.graphs.lineno):
        left = piecewise_left(state)
        eta = f", ~{left:.0f} s left" if left else ""
        text += f" (piecewise graphs {pw.label} {pw.done}/{pw.total}{eta})"
    elif (detail := _step_detail(state)) is not None:
        text += f" ({clean(detail)})"
    elif Phase.WEIGHTS_LOADED.rank <= st.phase.rank <= Phase.CUDA_GRAPH.rank and st.graphs:
        text += f" (graphs {st.graphs.done}/{st.graphs.total})"
    if state.startup.phase_inferred:
        text += f" (inferred from {state.startup.phase_inferred})"
    if state.startup.crash is not None:
        text += f", CRASHED ({state.startup.crash.kind})"
    return text


def _step_detail(state: DashboardState) -> str | None:
    """The checkpoint's bytes while loading weights, the step inside compiling while in the
    graph phase (``views.steps.step_detail``)."""
    rank = state.startup.phase.rank
    label = "weights" if rank <= Phase.LOADING_WEIGHTS.rank else "CUDA graphs" \
        if rank == Phase.CUDA_GRAPH.rank else None
    found = step_detail(state, label, "active") if label is not None else None
    return found[0] if found is not None else None


def engine_text(state: DashboardState) -> str | None:
    """``startup as the engine measured it (log): load_weight 12.30 s, ...`` (``None``: the
    engine reported none)."""
    t = state.startup.engine_times
    if t is None:
        return None
    figures = ", ".join(f"{clean(name)} {secs:.2f} s" for name, secs in t.figures if secs > 0)
    return f"startup as the engine measured it ({clean(t.source)}): {figures or 'all zero'}"


def _process_text(state: DashboardState) -> str | None:
    ex = state.live.process_exit
    if ex is not None:
        return f"process {ex.pid} exited ({_exit_text(ex.exit_code, ex.signal)})"
    p = state.live.process
    if p is None:
        return None
    text = f"process {p.pid} {p.status}"
    if p.rss_bytes is not None:
        text += f" {p.rss_bytes / GIB:.1f} GiB"
    if p.num_procs > 1:
        text += f" ({p.num_procs} procs)"
    return text


def _exit_text(code: int | None, sig: int | None) -> str:
    if code is None:
        return "exit status unknown"
    text = f"exit code {code}"
    if sig is not None:
        try:
            text += f", {signal.Signals(sig).name}"
        except ValueError:
            text += f", signal {sig}"
    return text


def _gpu_text(state: DashboardState) -> str | None:
    g = state.gpu.sample
    if g is None or g.state == "off":
        return None
    if g.state == "no_driver":
        return "GPU: no driver"
    if g.state == "error" or not g.gpus:
        return f"GPU: {clean(g.error) or g.state}"
    known = [x for x in g.gpus if x.mem_used is not None and x.mem_total]
    if len(g.gpus) > 4 and known:
        used = sum(x.mem_used or 0 for x in known) / GIB
        total = sum(x.mem_total or 0 for x in known) / GIB
        peak = max(x.mem_used or 0 for x in known) / GIB
        return f"{len(g.gpus)} GPUs: {used:.1f}/{total:.0f} GiB (max {peak:.1f})"
    parts = []
    for x in g.gpus:
        if x.error:
            parts.append(f"{x.index}: {clean(x.error)}")
        elif x.mem_used is not None and x.mem_total:
            parts.append(f"{x.index}: {x.mem_used / GIB:.1f}/{x.mem_total / GIB:.0f} GiB")
        else:
            parts.append(f"{x.index}: N/A")
    return "GPU " + ", ".join(parts)


def progress_line(state: DashboardState) -> str:
    elapsed = state.clock.elapsed or 0.0
    parts = [f"[{elapsed:6.1f}s] phase: {phase_text(state)}"]
    held = hold_of(state)
    if state.live.health is not None:
        h = state.live.health
        if held is not None and h.state == "starting":  # a paused SGLang's /ready says 503
            parts.append(f"health: {held.state} ({h.path or '/health'} {h.status_code})")
        else:
            parts.append(f"health: {h.state}" + (f" ({clean(h.error)})" if h.error else ""))
    if held is not None:
        parts.append(clean(held.text))
    if (proc := _process_text(state)) is not None:
        parts.append(proc)
    if (gpu := _gpu_text(state)) is not None:
        parts.append(gpu)
    if (act := startup_activity(state)) is not None:
        parts.append(f"{act.kind.replace('_', ' ')}: {act.detail}")
    if state.startup.engine_inferred is not None:
        parts.append(f"engine: {state.startup.engine} "
                     f"(inferred from {state.startup.engine_inferred.reason})")
    if (stuck := stuck_collective(state)) is not None:
        parts.append(f"STUCK COLLECTIVE: GPUs busy, no tokens for {stuck.busy_s:.0f} s, "
                     f"watchdog in {stuck.remaining_s:.0f} s")
    if state.live.failures:
        parts.append("failing: " + ", ".join(clean(f"{f.source} ({f.error})")
                                              for f in state.live.failures))
    if (numbers := figures_text(figures(state))) is not None:
        parts.append(clean(numbers))
    if (tiers := tier_text(state)) is not None:
        parts.append(clean(tiers))
    if (summary := summary_text(state)) is not None:
        parts.append(clean(summary))
    elif state.log.summary is not None and state.log.summary.finished:
        parts.append(f"earlier lines summarized ({state.log.summary.lines} lines)")
    return " | ".join(parts)


def _progress_obj(p: Progress_ | None) -> dict[str, int] | None:
    return {"done": p.done, "total": p.total} if p is not None else None


def piecewise_obj(p: Progress_ | None, left_s: float | None = None) -> dict[str, Any] | None:
    """SGLang's piecewise prefill graphs: the stage (compile, capture), its count, whose."""
    if p is None:
        return None
    return {"stage": p.label, "done": p.done, "total": p.total, "role": p.role,
            "left_s": left_s}


def progress_dict(state: DashboardState) -> dict[str, Any]:
    g = state.gpu.sample
    return {
        "event": "progress",
        "elapsed_s": round(state.clock.elapsed or 0.0, 3),
        "phase": state.startup.phase.value,
        "shards": _progress_obj(state.startup.shards),
        "graphs": _progress_obj(state.startup.graphs),
        "piecewise_graphs": piecewise_obj(state.startup.piecewise, piecewise_left(state)),
        **startup_dict(state),
        "health": state.live.health.state if state.live.health else None,
        "health_status": state.live.health.status_code if state.live.health else None,
        "process": {"pid": state.live.process.pid, "status": state.live.process.status,
                    "rss_bytes": state.live.process.rss_bytes} if state.live.process else None,
        "process_exit": {"pid": ex.pid, "exit_code": ex.exit_code, "signal": ex.signal}
        if (ex := state.live.process_exit) else None,
        "gpu_state": g.state if g else None,
        "gpus": [{"index": x.index, "mem_used": x.mem_used, "mem_total": x.mem_total,
                  "error": x.error} for x in g.gpus] if g else [],
        "crash": state.startup.crash.kind if state.startup.crash else None,
        "log_lines": absolute(state.log.lines, state.log.lineno_base),
        "summary": summary_dict(state),
        "failing": [{"source": f.source, "error": f.error} for f in state.live.failures],
        "activity": _activity_obj(state),
        "inferred": _inferred_obj(state),
        "numbers": figures_dict(figures(state)),
        "tier": tier_dict(state),
        "dp_ranks": ranks_dict(state),
        "hold": held.as_dict() if (held := hold_of(state)) is not None else None,
    }


def startup_dict(state: DashboardState) -> dict[str, Any]:
    """The checkpoint's bytes, the step inside compiling and the engine's own phase times."""
    st = state.startup
    wb, sub = st.weight_bytes, st.substep
    return {
        "weight_bytes": {"size_gib": wb.size_gib, "percent": wb.percent} if wb else None,
        "substep": {"what": sub.what, "done": sub.done, "total": sub.total,
                    "finished": sub.finished} if sub else None,
        "engine_startup": engine_dict(state),
    }


def _activity_obj(state: DashboardState) -> dict[str, str] | None:
    act = startup_activity(state)
    return {"kind": act.kind, "detail": act.detail} if act is not None else None


def _inferred_obj(state: DashboardState) -> dict[str, str | None]:
    """What the phase and engine were inferred from (``model/evidence.py``), or nulls."""
    eng = state.startup.engine_inferred
    return {"phase": state.startup.phase_inferred or None, "engine": eng.reason if eng else None}


def _stuck(state: DashboardState) -> float | None:
    """Seconds since the current phase was reached (since the start for no phase at all)."""
    mark = state.startup.phase_mark(state.startup.phase)
    since = mark.t if mark is not None and mark.t is not None else state.clock.t_start
    if since is None or state.clock.now is None:
        return None
    return max(0.0, state.clock.now - since)


def _abs(lineno: int, state: DashboardState) -> int | None:
    """The file's own line number; ``None`` while the lines before the tail are uncounted."""
    return None if state.log.lineno_base is None else lineno + state.log.lineno_base


def result_dict(state: DashboardState, status: str, reason: str, code: int,
                elapsed: float | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "event": "result",
        "status": status,
        "exit_code": code,
        "reason": reason,
        "elapsed_s": round(elapsed if elapsed is not None else state.clock.elapsed or 0.0, 3),
        "phase": state.startup.phase.value,
        "ready_s": ready_seconds(state),
    }
    if status == "timeout":
        stuck = _stuck(state)
        obj["stuck_in_phase_s"] = round(stuck, 3) if stuck is not None else None
    if state.startup.crash is not None:
        c = state.startup.crash
        obj["crash"] = {"kind": c.kind, "lineno": _abs(c.lineno, state), "message": cut(c.message),
                        "hint": c.hint}
    if state.live.process_exit is not None:
        ex = state.live.process_exit
        obj["process_exit"] = {"pid": ex.pid, "exit_code": ex.exit_code, "signal": ex.signal}
    if state.live.health is not None:
        obj["health"] = state.live.health.state
    obj.update(engine_fields(state))  # the engine's own measure of its startup, if any
    obj["alerts"] = [a.as_dict() for a in state.alerts]
    obj["numbers"] = figures_dict(figures(state))
    obj["tier"] = tier_dict(state)
    obj["dp_ranks"] = ranks_dict(state)
    if status != "ready":
        obj["last_lines"] = [{"lineno": _abs(ln.lineno, state), "text": cut(ln.text)}
                             for ln in state.log.recent_lines]
    return obj


def diagnosis_lines(state: DashboardState, status: str, reason: str,
                    elapsed: float | None = None) -> list[str]:
    """``elapsed``: the command's own wall time (the state's clock starts at its first event
    and stops at its last, so it reads short of what the user waited)."""
    elapsed = elapsed if elapsed is not None else state.clock.elapsed or 0.0
    out: list[str] = []
    if status == "ready":
        ready_s = ready_seconds(state)  # the one meaning of ready (model.views.ready)
        if ready_s is not None:
            out.append(f"READY after {ready_s:.1f} s: {reason} "
                       f"(phase: {state.startup.phase.value})")
        else:
            out.append(f"READY: {reason} (phase: {state.startup.phase.value}; the server's "
                       f"start was not seen, waited {elapsed:.1f} s)")
        if (engine := engine_text(state)) is not None:
            out.append(engine)
        for a in state.alerts:
            if a.severity != "info":
                out.append(f"  {a.severity}: {clean(a.message)}")
        return out
    if status == "stopped":  # the user's own stop: no crash to diagnose
        out.append(f"STOPPED after {elapsed:.1f} s: {clean(reason)}")
        return out
    if status == "stopped":  # the user's own stop: no crash to diagnose
        out.append(f"STOPPED after {elapsed:.1f} s: {clean(reason)}")
        return out
    if status == "timeout":
        stuck = _stuck(state)
        stuck_text = f" for {stuck:.0f} s" if stuck is not None else ""
        out.append(f"TIMEOUT after {elapsed:.1f} s: stuck in phase {phase_text(state)}"
                   f"{stuck_text}"
                   + (f"; health: {state.live.health.state}" if state.live.health else ""))
    else:
        out.append(f"CRASHED after {elapsed:.1f} s: {clean(cut(reason))}")
    c = state.startup.crash
    if c is not None:
        out.append(f"  kind:  {c.kind}")
        where = line_text(c.lineno, state.log.lineno_base)
        out.append(f"  cause: {where}: {clean(cut(c.message))}")
        out.append(f"  hint:  {clean(c.hint)}")
    if state.live.process_exit is not None and (c is None or exit_crash(state)):
        ex = state.live.process_exit
        out.append(f"  process {ex.pid} exited ({_exit_text(ex.exit_code, ex.signal)}) "
                   "with no crash line in the log")
    if state.log.recent_lines:
        out.append(f"last {len(state.log.recent_lines)} log lines:")
        base = state.log.lineno_base
        out.extend(f"  {absolute(ln.lineno, base) if base is not None else f'~{ln.lineno}':>7}"
                   f" | {clean(cut(ln.text))}" for ln in state.log.recent_lines)
    return out


def exit_crash(state: DashboardState) -> bool:
    """Whether the crash is the one the process's end says by itself (SIGKILL), not a line of
    the log."""
    c = state.startup.crash
    ex = state.live.process_exit
    return (c is not None and ex is not None and c.kind in ("killed", "crash_loop")
            and (c.message.startswith(KILLED_MESSAGE) or ex.container != ""))


__all__ = ["LINE_SHOWN", "clean", "cut", "diagnosis_lines", "exit_crash", "phase_text",
           "progress_dict", "progress_line", "result_dict", "startup_dict"]
