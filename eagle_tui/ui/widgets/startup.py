"""The startup pane: phase stepper with per-phase times and progress, health, process, crash.

The stepper is a pure function of the state (:func:`startup_content`) so its exact text is tested
without a terminal. Times come from the *observed* times of phase marks (``PhaseMark.t``) and the
state's clock (``state.now``, advanced by ``Tick`` events), never from the wall clock here: a
replayed or scripted session renders the same frame every time.

On a crash the pane turns into a banner: kind, the root-cause line (focusable; ``enter`` or a
click jumps the log there) and the fix hint, above the stepper frozen where startup stopped.

Over SSH, one line per host under the stepper says how its connection is (and, while it is
reconnecting, which attempt and the last error in full): the stepper above it keeps the last
known progress, so a dropped link reads as "link down", not as "the server went back to zero".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widgets import Static

from eagle_tui.model.events import CrashEvent, Progress
from eagle_tui.model.fold.prefix import line_text
from eagle_tui.model.state import (
    Clock,
    DashboardState,
    Gpus,
    LiveSources,
    LogCounters,
    ServerMetrics,
    Startup,
)
from eagle_tui.model.state.activity import ActivityTrack
from eagle_tui.model.state.hold import Holds
from eagle_tui.model.views.activity import startup_activity
from eagle_tui.model.views.enginetimes import step_reported
from eagle_tui.model.views.eta import piecewise_left, step_eta
from eagle_tui.model.views.hold import hold_of
from eagle_tui.model.views.liveness import stopped_text
from eagle_tui.model.views.steps import STEPS, step_detail, step_states
from eagle_tui.ui.binding import RecordView, bind, record
from eagle_tui.ui.format import bar, coarse_clock, fmt_bytes, fmt_clock, fmt_duration
from eagle_tui.ui.safety import inert
from eagle_tui.ui.sinks import set_border_title, show
from eagle_tui.ui.widgets.connections import ConnectionList
from eagle_tui.ui.widgets.linediff import LineDiffWidget

Part = str | tuple[str, str] | Content
BAR_WIDTH = 16
STEPPER_LINES = 10  # 7 steps, total/health, process, what it is doing / what is inferred
# (one more, the piecewise graphs under the CUDA-graph step, where SGLang captures them)
LABEL_W = 17  # "CUDA graphs+draft" fits


HEALTH_STYLE = {
    "ready": "$success",
    "starting": "$warning",
    "no_listener": "$text-muted",
    "unknown": "$text-muted",
    "error": "$error",
    "timeout": "$error",
}


_ICON = {"done": ("✓", "$success"), "active": ("▶", "$accent bold"),
         "failed": ("✗", "$error bold"), "pending": ("·", "$text-muted")}


def _progress(state: DashboardState, label: str, room: int, status: str) -> list[Part]:
    st = state.startup
    prog = st.shards if label == "weights" else st.graphs if label == "CUDA graphs" else None
    if status == "done" and step_reported(state, label) is not None:
        return [("engine", "$text-muted")]  # the time is the engine's own measure
    detail = step_detail(state, label, status)
    if detail is not None:
        text, fraction = detail
        bar_w = max(0, min(BAR_WIDTH, room - len(text) - 1))
        parts: list[Part] = [(inert(text) + " ", "$text")]
        if fraction is not None and bar_w >= 3:
            parts.append((bar(fraction, bar_w), "$primary on $bar-empty"))
        return parts
    return _bar_parts(prog, room)


def _bar_parts(prog: Progress | None, room: int) -> list[Part]:
    if prog is None or prog.total <= 0:
        return []
    count = f"{prog.done}/{prog.total} "
    suffix = " draft" if prog.role == "draft" else ""
    bar_w = max(0, min(BAR_WIDTH, room - len(count) - len(suffix)))
    parts: list[Part] = [(count, "$text")]
    if bar_w >= 3:
        parts.append((bar(prog.done / prog.total, bar_w), "$primary on $bar-empty"))
    if suffix:
        parts.append((suffix, "$secondary"))
    return parts


def startup_content(state: DashboardState, width: int = 50) -> Content:
    """The stepper, total elapsed, health and process lines, fitted to ``width`` cells."""
    lines: list[Content] = []
    draft = (state.startup.graphs is not None and state.startup.graphs.role == "draft") or any(
        m.role == "draft" for m in state.startup.phases
    )
    for step, status, elapsed in step_states(state):
        icon, icon_style = _ICON[status]
        label = step.label + ("+draft" if step.label == "CUDA graphs" and draft else "")
        name_style = "$text-muted" if status == "pending" else "$text"
        row: list[Part] = [
            (f" {icon} ", icon_style),
            (f"{label:<{LABEL_W}}", name_style),
            (f"{fmt_duration(elapsed) if elapsed is not None else '':>7} ", "$text-muted"),
        ]
        eta = _eta_parts(state, step.label, elapsed) if status == "active" else []
        room = width - 3 - LABEL_W - 8 - sum(len(t) for t, _ in eta)
        if status in ("active", "failed", "done"):
            row.extend(_progress(state, step.label, room, status))
        if eta and Content.assemble(*row, *eta).cell_length <= width:
            row.extend(eta)
        # a narrow pane: the progress goes on under its own column rather than past the edge
        lines.append(wrap_hanging(Content.assemble(*row), width, 3 + LABEL_W + 8))
        if step.label == "CUDA graphs" and status != "pending" and state.startup.piecewise:
            lines.append(piecewise_row(state, width))
    total = _clock(state)(state.clock.elapsed)
    # the health's latency, then its status code, give way to a narrow pane
    lines.append(_fit([(" total ", "$text-muted"), (total, "bold"), *_health_parts(state)],
                      width, keep=4))
    process = _process_parts(state)
    # an exit (and who stopped it) is said whole; a live process's details give way
    lines.append(wrap_hanging(Content.assemble(*process), width, 2)
                 if state.live.process_exit is not None else _fit(process, width))
    lines.append(wrap_hanging(Content.assemble(*note_parts(state)), width, NOTE_INDENT))
    return Content("\n").join(lines)


def piecewise_row(state: DashboardState, width: int) -> Content:
    """The piecewise prefill graphs under the CUDA-graph step: stage, count, bar, time left."""
    p = state.startup.piecewise
    assert p is not None
    left = piecewise_left(state)
    eta = [(f" ~{fmt_clock(left)} left", "$text-muted")] if left else []
    row: list[Part] = [("   ", ""), (f"{'└ piecewise':<{LABEL_W}}", "$text"),
                       (f"{p.label:>7} ", "$text-muted")]
    room = width - 3 - LABEL_W - 8 - sum(len(t) for t, _ in eta)
    row.extend(_bar_parts(p, room))
    if eta and Content.assemble(*row, *eta).cell_length <= width:
        row.extend(eta)
    return wrap_hanging(Content.assemble(*row), width, 3 + LABEL_W + 8)


NOTE_INDENT = 3  # under the verdict's word, after " ◆ "
HANG_MIN = 5  # the least room right of a hanging indent (narrower: wrapped flush left)


def wrap_hanging(line: Content, width: int, indent: int) -> Content:
    """``line`` on as many rows as it needs, the rows after the first indented: a verdict keeps
    its evidence at any width instead of losing it at the edge."""
    if not width or line.cell_length <= width or width - indent < HANG_MIN:
        return line
    first, *rest = line.wrap(width)
    if not rest:
        return first
    cut = len(first.plain.rstrip())
    rest_plain = line.plain[cut:]
    tail = line[cut + len(rest_plain) - len(rest_plain.lstrip()):]
    rows = [first, *(Content(" " * indent) + r for r in tail.wrap(width - indent))]
    return Content("\n").join(rows)


def _clock(state: DashboardState) -> Callable[[float | None], str]:
    """Every second while the server starts (what this pane is about), at the coarse step
    once it is ready: a clock that moves repaints its row, for as long as the server runs."""
    return coarse_clock if state.startup.ready else fmt_clock


def _eta_parts(state: DashboardState, label: str,
               elapsed: float | None) -> list[tuple[str, str]]:
    """``~0:32 left`` (usual time from the run history, or the shard rate), or ``usually 0:45``
    in the warning colour once the step has taken more than twice that."""
    eta = step_eta(state, label, elapsed)
    if eta is None:
        return []
    if eta.slow and eta.usual is not None:
        return [(f" usually {fmt_clock(eta.usual)}", "$warning bold")]
    if eta.left is not None and eta.left > 0:
        return [(f" ~{fmt_clock(eta.left)} left", "$text-muted")]
    return []
ACTIVITY_STYLE = {"downloading": "$primary", "loading": "$primary", "compiling": "$primary",
                  "gpu_busy": "$warning", "waiting": "$text-muted", "hung": "$error bold"}


def note_parts(state: DashboardState) -> list[Part]:
    """The line under the stepper: what a silent startup is doing (``model/activity.py``),
    else what the phase and engine were inferred from (``model/evidence.py``), else nothing."""
    act = startup_activity(state)
    if act is not None:
        style = ACTIVITY_STYLE.get(act.kind, "$text")
        return [(" ◆ ", style), (f"{act.kind.replace('_', ' ')}: ", f"{style} bold"),
                (inert(act.detail), "$text-muted")]
    parts: list[Part] = []
    if state.startup.phase_inferred:
        parts += [(" ≈ inferred ", "$warning"),
                  (f"{state.startup.phase.value} from {state.startup.phase_inferred}",
                   "$text-muted")]
    if state.startup.engine_inferred is not None:
        parts += [(" ≈ " if not parts else "; ", "$warning"),
                  (f"{state.startup.engine} from {state.startup.engine_inferred.reason}",
                   "$text-muted")]
    return parts


def _fit(parts: list[Part], width: int, keep: int = 2) -> Content:
    """Assemble ``parts``, dropping trailing ones (past the first ``keep``) that would overflow
    ``width``."""
    out = Content.assemble(*parts)
    while len(parts) > keep and out.cell_length > width:
        parts = parts[:-1]
        out = Content.assemble(*parts)
    return out


def _health_parts(state: DashboardState) -> list[Part]:
    h = state.live.health
    if h is None:
        return [("  · health —", "$text-muted")]
    held = hold_of(state)
    if held is not None and h.state == "starting":  # a paused server's readiness says 503
        parts: list[Part] = [("  · health ", "$text-muted"), (held.state, "$warning")]
    else:
        parts = [("  · health ", "$text-muted"), (h.state, HEALTH_STYLE.get(h.state, ""))]
    if h.status_code is not None:
        parts.append((f" {h.status_code}", "$text-muted"))
    if h.latency_s is not None:
        parts.append((f" {h.latency_s * 1000:.0f} ms", "$text-muted"))
    if h.error.startswith("tls:"):  # the user's to fix (the URL's scheme, a certificate)
        parts.append((f" {h.error}", "$error"))
    return parts


def _process_parts(state: DashboardState) -> list[Part]:
    ex, p = state.live.process_exit, state.live.process
    if ex is not None:
        code = f"exit {ex.exit_code}" if ex.exit_code is not None else "exited"
        if ex.signal is not None:
            code += f" (signal {ex.signal})"
        if (stopped := stopped_text(state)) is not None:  # the user's own stop: no failure
            return [(" process ", "$text-muted"), (f"{ex.pid} {code}, {stopped}", "$secondary")]
        return [(" process ", "$text-muted"), (f"{ex.pid} {code}", "$error bold")]
    if p is None:
        return [(" process —", "$text-muted")]
    now = state.clock.now
    uptime = now - p.started if p.started is not None and now is not None else None
    parts: list[Part] = [(" pid ", "$text-muted"), (str(p.pid), "bold"),
                         (f" {p.status}", "$success" if p.status in ("running", "sleeping")
                          else "$error")]
    if uptime is not None:
        parts.append((f" · up {_clock(state)(uptime)}", "$text-muted"))
    if p.rss_bytes is not None:
        parts.append((f" · RSS {fmt_bytes(p.rss_bytes)}", "$text-muted"))
    if p.cpu_percent is not None:
        parts.append((f" · CPU {p.cpu_percent:.0f}%", "$text-muted"))
    if p.num_procs > 1:
        parts.append((f" · {p.num_procs} procs", "$text-muted"))
    return parts


def crash_title(state: DashboardState, crash: CrashEvent) -> Content:
    failed = next((s.label for s, st, _ in step_states(state) if st == "failed"), None)
    where = f" during {failed}" if failed else ""
    when = f" at {inert(crash.time)}" if crash.time else ""
    return Content.assemble((" ✗ CRASHED ", "$error bold reverse"),
                            (f" {inert(crash.kind)}", "$error bold"), (f"{where}{when}", "$text"))


class RootCause(Static, can_focus=True):
    """The crash's root-cause line; activating it asks the app to show that log line."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "jump", "Jump to line", show=False)
    ]

    class Jump(Message):
        def __init__(self, lineno: int) -> None:
            super().__init__()
            self.lineno = lineno

    lineno = 0

    def action_jump(self) -> None:
        self.post_message(self.Jump(self.lineno))

    def on_click(self) -> None:
        self.action_jump()


def _clock_moved(view: StartupRecords, old: Clock, new: Clock) -> None:
    """While the server starts the stepper's times tick by the second: a clock still in the
    same second draws nothing new. Once it is ready (no crash) every step is done and only the
    total and the uptime read the clock, both coarse: a tick that moves neither draws nothing."""
    startup = view.state_startup
    if startup.ready and startup.crash is None:
        if _ready_clocks(view, old) != _ready_clocks(view, new):
            view._mark_stale()
    elif _second(old) != _second(new):
        view._mark_stale()


def _second(clock: Clock) -> int | None:
    return int(clock.now) if clock.now is not None else None


def _ready_clocks(view: StartupRecords, clock: Clock) -> tuple[str, str]:
    """The total and the uptime as a ready server's stepper shows them at ``clock``."""
    p, now = view.state_live.process, clock.now
    up = now - p.started if p is not None and p.started is not None and now is not None else None
    return coarse_clock(clock.elapsed), coarse_clock(up)


class StartupRecords(RecordView):
    """The records the startup pane and its stepper draw (the stepper is bound to the pane's),
    the clock repainting them only when a shown second moved."""

    state_startup: var[Startup] = record(Startup)
    state_log: var[LogCounters] = record(LogCounters)
    state_metrics: var[ServerMetrics] = record(ServerMetrics)
    state_live: var[LiveSources] = record(LiveSources)
    state_gpu: var[Gpus] = record(Gpus)
    state_activity: var[ActivityTrack] = record(ActivityTrack)
    state_clock: var[Clock] = record(Clock)
    state_holds: var[Holds] = record(Holds)

    def _watch_state_clock(self, old: Clock, new: Clock) -> None:
        _clock_moved(self, old, new)


class Stepper(StartupRecords, LineDiffWidget):
    """Renders :func:`startup_content` at the pane's current width, from the pane's records.

    While a step runs its elapsed time and the total tick every second: only those rows are
    repainted (:class:`LineDiffWidget`), not the pane.
    """

    DEFAULT_CSS = f"Stepper {{ height: {STEPPER_LINES}; }}"
    _rows = STEPPER_LINES

    def repaint(self) -> None:
        self.update_lines()

    def _split(self, width: int, built: Content | None = None) -> list[Content]:
        """The rows; the height follows them when a wrapped verdict needs more (a layout pass
        only then: the clock's repaints keep the fixed height)."""
        lines = super()._split(width, built)
        rows = max(STEPPER_LINES, len(lines))
        if rows != self._rows:
            self._rows = rows
            self.styles.height = rows
        return lines

    def build(self, width: int) -> Content:
        return startup_content(self.records(), width or 50)


class StartupPane(StartupRecords, Vertical):
    """The stepper (bound to this pane's records), the connections and the crash banner."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "Startup"
        self.fix_offered = False  # the app's ``F`` has a fix to apply (``ui/fix.py``)

    def compose(self) -> ComposeResult:
        with Vertical(id="crash"):  # what to do before the cause: a short pane shows the fix
            yield Static(id="crash-title")
            yield Static(id="crash-hint")
            yield RootCause(id="crash-cause")
        yield bind(Stepper(id="stepper"), StartupPane)  # fixed height: no layout pass
        yield ConnectionList(id="connections")

    def repaint(self) -> None:
        self.query_one(ConnectionList).show(self.state_live.connections)
        crash = self.state_startup.crash
        self.set_class(crash is not None, "-crashed")
        title = "Startup — CRASHED" if crash is not None else "Startup"
        if title != self.border_title:  # assigning repaints the whole pane, even when equal
            set_border_title(self, inert(title))
        if crash is not None:
            state = self.records()
            show(self.query_one("#crash-title", Static), crash_title(state, crash))
            cause = self.query_one(RootCause)
            cause.lineno = crash.lineno
            where = line_text(crash.lineno, state.log.lineno_base)  # the file's own number
            show(cause, Content.assemble((f" ▸ {where}: ", "$accent bold"),
                                         (inert(crash.message), "$text")))
            show(self.query_one("#crash-hint", Static),
                 Content.assemble((" Fix: ", "$success bold"), (inert(crash.hint), "$text"),
                                  ("\n F: relaunch with the known fix" if self.fix_offered
                                   else "", "$accent bold")))


__all__ = ["STEPS", "RootCause", "StartupPane", "crash_title", "note_parts", "startup_content",
           "step_states"]
