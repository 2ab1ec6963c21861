"""The one-line summary at the top: engine, phase and elapsed, tok/s, accept length, alerts.

It is the "at a glance" line that stays visible in the compact 80×24 layout whichever pane tab is
showing, so a crash or a collapsing accept length is never hidden behind another tab. For the same
reason an SSH host that is not connected is named right after the phase (the numbers that follow
are then the last ones received, not live ones); connected hosts come later, as a quiet "●".
tok/s and accept length are :mod:`eagle_tui.model.views.figures`' picks, the Metrics pane's numbers.

The line never says more than the evidence (:mod:`eagle_tui.model.views.liveness`): a server that
died says ``DEAD`` (with why) instead of its phase, an idle one ``IDLE``; their numbers, and
those of a server that went silent (``no data 45s``), are the last ones, shown muted after
"last" or with their age, never as current readings. A restart shows ``↻ restarted``,
a log file that shrank ``✂ log truncated``.
"""

from __future__ import annotations

from textual.content import Content
from textual.reactive import var

from eagle_tui.model.events import Phase
from eagle_tui.model.fold.prefix import summary_text
from eagle_tui.model.state import (
    Clock,
    DashboardState,
    LiveSources,
    LiveTimes,
    LogCounters,
    LogStats,
    ServedConfig,
    ServerMetrics,
    Startup,
)
from eagle_tui.model.state.alert import Alert
from eagle_tui.model.state.hold import Holds
from eagle_tui.model.views.figtext import STATE_WORD
from eagle_tui.model.views.figures import Figure, figures
from eagle_tui.model.views.liveness import HELD
from eagle_tui.ui.binding import RecordView, record
from eagle_tui.ui.format import coarse_age, coarse_clock, fmt_clock, fmt_num
from eagle_tui.ui.safety import inert
from eagle_tui.ui.sinks import checked
from eagle_tui.ui.widgets.connections import STATUS_ERROR_CHARS, connection_content

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


def _numbers(tps: Figure[float], acc: Figure[float]) -> list[Part]:
    """tok/s and accept: bold when current, else muted after "last" (or with their age)."""
    lead = tps if tps.known else acc
    if not lead.known:
        return []
    current = lead.current
    style = "bold" if current else "$text-muted"
    out: list[Part] = []
    if not current:
        out.append(("  last" if lead.freshness != "stale" else "  old", "$text-muted"))
    if tps.value is not None:
        out.append(Content.assemble("  " if current else " ", (fmt_num(tps.value, 1), style),
                                    (" tok/s", "$text-muted")))
    if acc.value is not None:
        out.append(Content.assemble(("  accept ", "$text-muted"), (fmt_num(acc.value, 2), style)))
    return out


def status_line(state: DashboardState, source: str = "", width: int = 1000) -> Content:
    """Most important first (phase, a host that is down, throughput, alerts); what does not fit
    ``width`` is dropped, a down host's error first (its state stays)."""
    parts: list[Part] = [(" eagle-tui ", "bold reverse $primary"), " "]
    figs = figures(state)
    live = figs.live
    if state.startup.crash is not None:
        parts.append((f" CRASHED: {inert(state.startup.crash.kind)} ", "bold reverse $error"))
    elif live.activity == "dead":
        parts.append((" DEAD ", "bold reverse $error"))
    elif live.activity == "stopped":
        parts.append((" STOPPED ", "bold reverse $secondary"))
    elif live.activity in HELD:  # asleep, paused, recovering: on purpose (model/views/hold)
        parts.append((f" {STATE_WORD[live.activity]} ", "bold reverse $warning"))
    elif live.activity == "idle" and state.startup.ready:
        parts.append((" IDLE ", "bold reverse $secondary"))
    elif state.startup.ready:
        parts.append((f" {PHASE_LABEL[state.startup.phase]} ", "bold reverse $success"))
    else:
        parts.append((PHASE_LABEL[state.startup.phase], "$accent bold"))
    parts.append((f" {(coarse_clock if state.startup.ready else fmt_clock)(state.clock.elapsed)}",
                  "$text-muted"))
    down = [c for c in state.live.connections if c.state != "connected"]
    parts.extend(Content("  ") + connection_content(c, STATUS_ERROR_CHARS) for c in down)
    if live.activity == "dead" and live.reason:
        parts.append((f"  {inert(live.reason)}", "$error"))
    elif live.activity == "stopped":
        parts.append((f"  {inert(live.reason)}", "$text-muted"))
    elif live.activity in HELD:
        parts.append((f"  {inert(live.reason)}", "$warning"))
    elif live.activity == "stale" and live.data_age_s is not None:
        parts.append((f"  no data {coarse_age(live.data_age_s)}", "$warning bold"))
    if live.restarted_ago_s is not None:
        parts.append((f"  {live.restart_word}", "$warning bold"))
    parts.extend(_numbers(figs.tok_s, figs.accept_len))
    crit = sum(a.severity == "critical" for a in state.alerts)
    warn = sum(a.severity == "warning" for a in state.alerts)
    if crit:
        parts.append((f"  ✗ {crit} critical", "$error bold"))
    if warn:
        parts.append((f"  ⚠ {warn} warning", "$warning bold"))
    if (summary := summary_text(state)) is not None:  # the lines before a big log's end
        parts.append((f"  {summary}", "$warning" if "not" in summary else "$text-muted"))
    extras = len(parts)  # from here on: context that goes first when space runs out
    for c in state.live.connections:
        if c.state == "connected":
            parts.append(Content("  ") + connection_content(c))
    known = state.startup.engine != "unknown"
    if known or (state.config.spec is not None and state.config.spec.algorithm):
        engine = Content.styled(f"  {state.startup.engine}", "$text") if known \
            else Content("")
        algo = Content.styled(f" {inert(state.config.spec.algorithm)}", "$secondary bold") \
            if state.config.spec is not None and state.config.spec.algorithm else Content("")
        parts.append(engine + algo)
    if source:
        parts.append((f"  {inert(source)}", "$text-muted"))
    out = Content.assemble(*parts)
    # a down host's error goes when even the parts before the context do not fit (the startup
    # pane shows it), never its state; then parts go from the end, context first
    if out.cell_length > width and down and Content.assemble(*parts[:extras]).cell_length > width:
        parts[4:4 + len(down)] = [Content("  ") + connection_content(c, 0) for c in down]
        out = Content.assemble(*parts)
    while out.cell_length > width and len(parts) > 4 + len(down):
        parts.pop()
        out = Content.assemble(*parts)
    return out


class StatusLine(RecordView):
    """The line of :func:`status_line`, repainted only when its text or styles change.

    Its records change with every tick (the clock, the ages), but the line shows the clock and
    ages at a coarser step as they grow (``ui/format.py``), so most ticks change nothing on
    screen: building the line is far cheaper than the screen update a refresh costs.
    """

    state_startup: var[Startup] = record(Startup)
    state_config: var[ServedConfig] = record(ServedConfig)
    state_log: var[LogCounters] = record(LogCounters)
    state_stats: var[LogStats] = record(LogStats)
    state_metrics: var[ServerMetrics] = record(ServerMetrics)
    state_live: var[LiveSources] = record(LiveSources)
    state_liveness: var[LiveTimes] = record(LiveTimes)
    state_alerts: var[tuple[Alert, ...]] = record(tuple)
    state_clock: var[Clock] = record(Clock)
    state_holds: var[Holds] = record(Holds)
    source: var[str] = var("", init=False)  # what is watched, after the line's context

    def __init__(self, source: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(StatusLine.source, source)
        self._shown: Content | None = None
        self._width = 0

    def watch_source(self) -> None:
        self.repaint()

    def repaint(self) -> None:
        width = self.size.width or 1000
        line = status_line(self.records(), self.source, width)
        if self._shown is None or width != self._width or not line.is_same(self._shown):
            self._shown, self._width = line, width
            self.refresh()

    def render(self) -> Content:
        width = self.size.width or 1000
        if self._shown is None or width != self._width:
            line = status_line(self.records(), self.source, width)
            self._shown, self._width = checked(line), width
        return self._shown


__all__ = ["PHASE_LABEL", "StatusLine", "status_line"]
