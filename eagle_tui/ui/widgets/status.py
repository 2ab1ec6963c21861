"""The one-line summary at the top: engine, phase and elapsed, tok/s, accept length, alerts.

It is the "at a glance" line that stays visible in the compact 80×24 layout whichever pane tab is
showing, so a crash or a collapsing accept length is never hidden behind another tab.
"""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from eagle_tui.model.events import Phase
from eagle_tui.model.state import DashboardState
from eagle_tui.ui.format import fmt_clock, fmt_num
from eagle_tui.ui.safety import inert

PHASE_LABEL = {
    Phase.NONE: "waiting for log",
    Phase.INIT: "starting",
    Phase.LOADING_WEIGHTS: "loading weights",
    Phase.WEIGHTS_LOADED: "weights loaded",
    Phase.KV_CACHE: "KV cache",
    Phase.CUDA_GRAPH: "CUDA graphs",
    Phase.HTTP_SERVER: "HTTP / warmup",
    Phase.READY: "READY",
    Phase.SERVING: "SERVING",
}

Part = str | tuple[str, str] | Content


def status_line(state: DashboardState, source: str = "", width: int = 1000) -> Content:
    """Most important first (phase, throughput, alerts); what does not fit ``width`` is dropped."""
    parts: list[Part] = [(" eagle-tui ", "bold reverse $primary"), " "]
    if state.crash is not None:
        parts.append((f" CRASHED: {inert(state.crash.kind)} ", "bold reverse $error"))
    elif state.ready:
        parts.append((f" {PHASE_LABEL[state.phase]} ", "bold reverse $success"))
    else:
        parts.append((PHASE_LABEL[state.phase], "$accent bold"))
    parts.append((f" {fmt_clock(state.elapsed)}", "$text-muted"))
    tps = state.tok_s
    if tps is not None:
        parts.append(Content.assemble("  ", (fmt_num(tps, 1), "bold"), (" tok/s", "$text-muted")))
    acc = state.current_accept_len
    if acc is not None:
        parts.append(Content.assemble(("  accept ", "$text-muted"), (fmt_num(acc, 2), "bold")))
    crit = sum(a.severity == "critical" for a in state.alerts)
    warn = sum(a.severity == "warning" for a in state.alerts)
    if crit:
        parts.append((f"  ✗ {crit} critical", "$error bold"))
    if warn:
        parts.append((f"  ⚠ {warn} warning", "$warning bold"))
    if state.engine != "unknown" or (state.spec is not None and state.spec.algorithm):
        engine = Content.styled(f"  {state.engine}", "$text") if state.engine != "unknown" \
            else Content("")
        algo = Content.styled(f" {inert(state.spec.algorithm)}", "$secondary bold") \
            if state.spec is not None and state.spec.algorithm else Content("")
        parts.append(engine + algo)
    if source:
        parts.append((f"  {inert(source)}", "$text-muted"))
    out = Content.assemble(*parts)
    while out.cell_length > width and len(parts) > 4:
        parts.pop()
        out = Content.assemble(*parts)
    return out


class StatusLine(Widget):
    def __init__(self, source: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source = source
        self.state = DashboardState()
        self._key: tuple[object, ...] | None = None

    def show(self, state: DashboardState) -> None:
        self.state = state
        now_s = int(state.now) if state.now is not None else None
        key = (state.phase, state.crash, now_s, state.gen_tps, state.m_gen_tps, state.accept_len,
               state.m_accept_len, state.alerts, state.engine, state.spec, self.source)
        if key != self._key:
            self._key = key
            self.refresh()

    def render(self) -> Content:
        return status_line(self.state, self.source, self.size.width or 1000)


__all__ = ["PHASE_LABEL", "StatusLine", "status_line"]
