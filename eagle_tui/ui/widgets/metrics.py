"""The metrics pane: is speculative decoding paying off?

tok/s and accept length with current value, a windowed median/mean and a sparkline; acceptance
rate and per-position acceptance; speedup against a known baseline; running/queued requests and
KV usage; the EAGLE-3 hidden-state dims check. Each row ends with where its number came from
(``log``, ``/metrics``, ``server_info``), because the two disagree in definition (SGLang's
``accept rate`` changed meaning across versions) and the user must know which one they see.
Which one is shown is not decided here but in :mod:`eagle_tui.model.views.figures`, so this pane,
the status line and the alert rules always show and judge the same number.

The accept "mean" is the window's weighted mean (each interval weighed by its drafts or verify
steps, :func:`eagle_tui.model.views.figures.accept_mean`), the number the counters give, not a plain
mean of ratios. A figure that is not a current reading says so after its source ("last": the
server is idle and these are its last active figures; "45.0s old": no data since; "dead"), and
a state row says why. ``accepted`` is the distribution of accepted drafts per verify step.
"""

from __future__ import annotations

from typing import TypeVar

from textual.content import Content
from textual.reactive import var

from eagle_tui.model.engines import profile_of
from eagle_tui.model.series import Series
from eagle_tui.model.state import Clock, DashboardState, LiveSources, LiveTimes, LogStats, Startup
from eagle_tui.model.state.hold import Holds
from eagle_tui.model.state.server import ServedConfig, ServerMetrics
from eagle_tui.model.views.figtext import STATE_WORD
from eagle_tui.model.views.figures import WINDOW, Figure, Figures, figures
from eagle_tui.model.views.liveness import HELD
from eagle_tui.model.views.numtext import fixed
from eagle_tui.model.views.runsummary import previous_figures
from eagle_tui.ui.binding import RecordView, record
from eagle_tui.ui.format import NA, coarse_age, fmt_num, fmt_pct, sparkline
from eagle_tui.ui.safety import inert
from eagle_tui.ui.widgets.linediff import LineDiffWidget
from eagle_tui.ui.widgets.tierrows import ranks_row, tier_row

Part = str | tuple[str, str] | Content
T = TypeVar("T")
LABEL_W = 9
SPARK_MAX = 40
SPARK_MIN = 4
MIN_WIDTH = 24  # narrower than this the pane is not readable whatever it does


def dims_check(state: DashboardState) -> tuple[str, bool] | None:
    """``("21504 = 3×7168 ✓", True)`` / ``("7168 ✗ expected 21504 = 3×7168", False)``."""
    if not state.config.hidden_dims:
        return None
    dim = state.config.hidden_dims[-1]
    dc = state.config.draft_config
    width = (dc.target_hidden_size or dc.hidden_size) if dc is not None else None
    if width:
        expected = 3 * width
        if dim == expected:
            return f"{dim} = 3×{width} ✓", True
        return f"{dim} ✗ expected {expected} = 3×{width}", False
    if dim % 3 == 0 and (dim // 3) % 64 == 0:
        return f"{dim} = 3×{dim // 3} ✓", True
    return f"{dim} ✗ not 3× a hidden size (EAGLE-3 needs 3 concatenated layers)", False


def _row(label: str, body: list[Part], source: str, width: int) -> Content:
    """``label body ……… source``: the source right-aligned; a body too long for the row goes
    on under itself (indented past the label) rather than losing its end, and the source
    takes the last row's end, or a row of its own."""
    label_part = Content.styled(f" {label:<{LABEL_W}}", "$text-muted")
    indent = label_part.cell_length
    text = Content.assemble(*body)
    if (source.endswith(SAID_BY_STATE_ROW)
            and indent + text.cell_length + 1 + len(source) > width):
        source = source.rpartition(" · ")[0]  # the state row says it for every row
    src = Content.styled(source, "$text-muted italic") if source else Content("")
    gap = 1 if source else 0
    if indent + text.cell_length + gap + src.cell_length <= width or width <= indent + 8:
        head = label_part + text
        if not source:
            return head
        return Content.assemble(head, " " * max(1, width - head.cell_length - len(source)), src)
    rows = wrap_items(text, width - indent)
    out = [label_part + rows[0], *(Content(" " * indent) + r for r in rows[1:])]
    if source:
        last = out[-1].rstrip()
        if last.cell_length + 2 + src.cell_length <= width:
            out[-1] = Content.assemble(last, " " * (width - last.cell_length - len(source)), src)
        else:
            out.append(Content.assemble(" " * max(0, width - len(source)), src))
    return Content("\n").join(out)



SEP = " · "
# freshness that only comes with a state row (IDLE, DEAD, STOPPED) above the figures: a row
# short of room leaves it to that row ("… old" may come without one: a stale /metrics)
SAID_BY_STATE_ROW = (" · last", " · dead", " · stopped")


def wrap_items(text: Content, width: int) -> list[Content]:
    """``text`` on rows of ``width``, broken after a `` · `` between items (``steps 3 · topk
    1``) rather than inside one; an item longer than a row is word-wrapped."""
    plain = text.plain
    cuts = [i + len(SEP) for i in range(len(plain)) if plain.startswith(SEP, i)]
    rows: list[Content] = []
    row = Content("")
    for item in text.divide(cuts) if cuts else [text]:
        if row.cell_length and (row + item).rstrip().cell_length > width:
            rows.append(row.rstrip())
            row = Content("")
        row += item
    rows.append(row.rstrip())
    return [part for r in rows for part in (r.wrap(width) if r.cell_length > width else [r])]


def _series_row(label: str, series: Series, source: str, width: int, digits: int,
                stat: str, agg: float | None = None, current: bool = True) -> Content:
    cur = series.last
    if agg is None:
        agg = series.median(last_n=WINDOW) if stat == "med" else series.mean(last_n=WINDOW)
    body: list[Part] = [
        (f"{fmt_num(cur, digits):>7}", "bold $text" if current else "$text-muted"),
        (f"  {stat:<4} {fmt_num(agg, digits):>6}  ", "$text-muted"),
    ]
    used = 1 + LABEL_W + 7 + 2 + 5 + 6 + 2
    spark_w = max(0, min(SPARK_MAX, width - used - len(source) - 2))
    if spark_w < SPARK_MIN:  # a cell or two of sparkline says nothing
        spark_w = 0
    body.append((sparkline(series.values(last_n=spark_w), spark_w), "$primary"))
    return _row(label, body, source, width)


def _source(fig: Figure[T]) -> str:
    """The figure's source, printed only when it has a value; with its freshness when it is
    not a current reading."""
    if not fig.known:
        return ""
    if fig.freshness == "last_active":
        return f"{fig.source} · last"
    if fig.freshness == "stale":
        return f"{fig.source} · {coarse_age(fig.age_s)} old"
    if fig.freshness in ("dead", "stopped"):
        return f"{fig.source} · {fig.freshness}"
    return fig.source


def _state_row(figs: Figures, width: int) -> Content | None:
    live = figs.live
    if live.activity == "idle":
        return _row("state", [("   IDLE", "bold $secondary"),
                              (f"  {inert(live.reason)}", "$text-muted")], "", width)
    if live.activity in HELD:  # "SLEEPING  sleeping (level 1) since 14:02:11"
        return _row("state", [(f"{STATE_WORD[live.activity]:>7}", "bold $warning"),
                              (f"  {inert(live.reason)}", "$text-muted")], "", width)
    if live.activity == "stale":  # the model's reason carries the exact age: shown coarser
        why = f"no data for {coarse_age(live.data_age_s)}" if live.data_age_s is not None \
            else inert(live.reason)
        return _row("state", [("  STALE", "bold $warning"), (f"  {why}", "$text-muted")], "",
                    width)
    if live.activity in ("dead", "stopped"):
        word, style = ("   DEAD", "bold $error") if live.activity == "dead" \
            else ("STOPPED", "bold $secondary")
        return _row("state", [(word, style), (f"  {inert(live.reason)}", "$text-muted")], "",
                    width)
    return None


def _dist_row(fig: Figure[tuple[float, ...]], width: int) -> Content:
    if not fig.value:
        return _row("accepted", [("      —", "$text-muted")], "", width)
    cells = " ".join(f"{j}:{fixed(p, 2)}" for j, p in enumerate(fig.value[:9]))
    return _row("accepted", [(f"  {cells}", "$text")], _source(fig), width)


def metrics_content(state: DashboardState, width: int) -> Content:
    width = max(MIN_WIDTH, width)
    figs = figures(state)
    lines: list[Content] = []
    state_row = _state_row(figs, width)
    if state_row is not None:
        lines.append(state_row)
    tps = figs.tok_s
    lines.append(_series_row("tok/s", tps.series, _source(tps), width, 1, "med",
                             current=tps.current or not tps.known))
    acc, lifetime = figs.accept_len, figs.accept_lifetime
    if not acc.known and lifetime.known:
        lines.append(_row("accept", [(f"{fmt_num(lifetime.value, 2):>7}", "bold"),
                                     (f"  {lifetime.window}", "$text-muted")], lifetime.source,
                          width))
    else:
        lines.append(_series_row("accept", acc.series, _source(acc), width, 2, "mean",
                                 figs.accept_mean.value, acc.current or not acc.known))
    rate = figs.accept_rate
    lines.append(_row("accept %", [(f"{fmt_pct(rate.value, 1):>7}", "bold")], _source(rate),
                      width))
    per_pos = figs.per_position
    if per_pos.known or not acc.known:  # (a "—" beside the accept figures: the engine has none)
        pp_text = " ".join(fixed(p, 2) for p in per_pos.value[:8]) if per_pos.value else NA
        lines.append(_row("per-pos", [(f"{pp_text:>7}", "$text")], _source(per_pos), width))
    if figs.accept_dist.known:
        lines.append(_dist_row(figs.accept_dist, width))
    lines.append(_speedup_row(state, figs.speedup, width))
    lines.append(_requests_row(state, figs.requests, width))
    lines.append(_dims_row(state, width))
    lines.append(_spec_row(state, width))
    engine = profile_of(state.startup.engine)
    for extra in (tier_row(state, width, _row),
                  ranks_row(state, width, _row, engine.endpoints.loads if engine else None)):
        if extra is not None:
            lines.append(extra)
    prev = state.startup.previous
    if prev is not None:  # a relaunch: the run it replaced, for comparison
        label = f"prev {prev.label}" if prev.label and len(prev.label) <= 4 else "previous"
        lines.append(_row(label, [("  " + inert(previous_figures(prev)), "$text-muted")], "",
                          width))
    return Content("\n").join(lines)


def _speedup_row(state: DashboardState, fig: Figure[float], width: int) -> Content:
    speedup = fig.value
    if speedup is None:
        text = "no baseline" if not state.metrics.baseline_tok_s else NA
        return _row("speedup", [(f"{text:>7}", "$text-muted")], "", width)
    style = "$success bold" if speedup >= 1.0 else "$error bold"
    if not fig.current:
        style = "$text-muted"
    src = _source(fig) if not fig.current else ""
    return _row("speedup", [(f"{fixed(speedup, 2):>6}×", style),
                            (f"  vs {fmt_num(state.metrics.baseline_tok_s, 1)} tok/s baseline",
                             "$text-muted")],
                src, width)


def _requests_row(state: DashboardState, fig: Figure[int], width: int) -> Content:
    src = _source(fig)
    running = "—" if state.stats.running is None else str(state.stats.running)
    queued = "—" if state.stats.queued is None else str(state.stats.queued)
    return _row("requests", [(f"{running:>7}", "bold"), (" running · ", "$text-muted"),
                             (queued, "bold"), (" queued · KV ", "$text-muted"),
                             (fmt_pct(state.stats.kv_usage), "bold")], src, width)


def _dims_row(state: DashboardState, width: int) -> Content:
    check = dims_check(state)
    if check is None:
        return _row("hidden", [("      —", "$text-muted")], "", width)
    text, ok = check
    return _row("hidden", [(f"  {text}", "$success bold" if ok else "$error bold")], "log", width)


def _spec_row(state: DashboardState, width: int) -> Content:
    spec = state.config.spec
    if spec is None or not spec.algorithm:
        return _row("spec", [("      —", "$text-muted")], "", width)
    bits: list[str] = [inert(spec.algorithm)]
    if spec.num_steps is not None:
        bits.append(f"steps {spec.num_steps}")
    if spec.eagle_topk is not None:
        bits.append(f"topk {spec.eagle_topk}")
    if spec.num_draft_tokens is not None:
        bits.append(f"{spec.num_draft_tokens} draft tok")
    return _row("spec", [("  " + " · ".join(bits), "$text")], inert(spec.source), width)


class MetricsPane(RecordView, LineDiffWidget):
    """Renders :func:`metrics_content` from its records; when one is replaced, redraws only the
    rows that changed (usually tok/s and accept)."""

    state_startup: var[Startup] = record(Startup)
    state_config: var[ServedConfig] = record(ServedConfig)
    state_stats: var[LogStats] = record(LogStats)
    state_metrics: var[ServerMetrics] = record(ServerMetrics)
    state_live: var[LiveSources] = record(LiveSources)
    state_liveness: var[LiveTimes] = record(LiveTimes)
    state_holds: var[Holds] = record(Holds)
    state_clock: var[Clock] = record(Clock)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Metrics"

    def repaint(self) -> None:
        self.update_lines()

    def build(self, width: int) -> Content:
        return metrics_content(self.records(), width or self.size.width)


__all__ = ["MetricsPane", "dims_check", "metrics_content"]
