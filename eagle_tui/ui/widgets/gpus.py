"""The GPU pane: one compact row per GPU, a selected GPU's processes, rank imbalance, no-driver.

Eight GPUs must fit an 80×24 screen, so a GPU is exactly one line: memory bar, used/total,
utilisation sparkline, power and temperature. The utilisation history is kept here (the state
holds only the latest sample), fed with every ``GpuSample`` *event* of a batch rather than with
state changes, so the sparkline is the same however the session happened to batch the samples.

Tensor-parallel ranks should hold nearly the same memory; a rank that differs from the median by
more than a tenth of the card is flagged, since that is how a stuck or mis-sharded rank shows.
A missing driver is a state, not an error: the pane says so and the rest of the dashboard works.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.events import Click
from textual.reactive import reactive
from textual.widget import Widget

from eagle_tui.model.events import GpuInfo, GpuSample
from eagle_tui.model.state import DashboardState
from eagle_tui.ui.format import GIB, bar, fmt_bytes, sparkline, truncate
from eagle_tui.ui.safety import inert

Part = str | tuple[str, str] | Content
HISTORY = 60
IMBALANCE_FRACTION = 0.10  # of the card's memory, away from the median of loaded ranks
LOADED_FRACTION = 0.05


def imbalanced(gpus: Sequence[GpuInfo]) -> set[int]:
    """Indices of loaded GPUs whose used memory is far from the median of loaded GPUs."""
    loaded = [g for g in gpus if g.mem_used is not None and g.mem_total
              and g.mem_used > LOADED_FRACTION * g.mem_total]
    if len(loaded) < 2:
        return set()
    used = sorted(g.mem_used or 0 for g in loaded)
    mid = len(used) // 2
    median = used[mid] if len(used) % 2 else (used[mid - 1] + used[mid]) / 2
    return {g.index for g in loaded
            if abs((g.mem_used or 0) - median) > IMBALANCE_FRACTION * (g.mem_total or 0)}


def _mem_style(frac: float | None) -> str:
    if frac is None:
        return "$text-muted"
    if frac > 0.95:
        return "$error"
    if frac > 0.85:
        return "$warning"
    return "$primary"


def gpu_row(g: GpuInfo, history: Sequence[float], width: int, flagged: bool,
            selected: bool) -> Content:
    """One GPU on one line, fitted to ``width`` cells."""
    if g.error and g.mem_used is None:
        return Content.assemble((f"{g.index:>2} ", "bold"), (truncate(inert(g.error), width - 3),
                                                            "$error"))
    frac = g.mem_used / g.mem_total if g.mem_used is not None and g.mem_total else None
    used = f"{g.mem_used / GIB:.1f}" if g.mem_used is not None else "—"
    total = f"{g.mem_total / GIB:.0f}G" if g.mem_total else "—"
    mem = f"{used:>5}/{total}"
    mem_w = 11  # "139.8/140G" plus the imbalance flag
    util = f"{g.util_gpu:>3.0f}%" if g.util_gpu is not None else "  —%"
    power = f"{g.power_w:>4.0f}W" if g.power_w is not None else "   —W"
    temp = f"{g.temp_c:>3.0f}°C" if g.temp_c is not None else "  —°C"
    fixed = 3 + 1 + mem_w + 1 + len(util) + 1 + len(power) + 1 + len(temp)
    room = max(4, width - fixed)
    spark_w = min(20, max(0, room // 3))
    bar_w = max(4, room - spark_w - (1 if spark_w else 0))
    marker = "▸" if selected else " "
    parts: list[Part] = [
        (f"{marker}{g.index:<2}", "bold reverse" if selected else "bold"),
        (bar(frac, bar_w), _mem_style(frac) + " on $bar-empty"),
        (" ", ""),
        (mem, "$warning bold" if flagged else "$text"),
        ("!" if flagged else " ", "$warning bold"),
        " " * max(0, mem_w - len(mem) - 1),
    ]
    if spark_w:
        parts.append((sparkline(history, spark_w, 0.0, 100.0), "$accent"))
        parts.append(" ")
    parts += [(util, "$text"), " ", (power, "$text-muted"), " ", (temp, "$text-muted")]
    return Content.assemble(*parts)


class GpuPane(Widget, can_focus=True):
    """GPU rows; ``up``/``down`` or a click select a GPU and list its processes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "select(-1)", "Previous GPU", show=False),
        Binding("down", "select(1)", "Next GPU", show=False),
        Binding("escape", "clear_selection", "Clear selection", show=False),
    ]

    selected: reactive[int | None] = reactive(None)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "GPUs"
        self.sample: GpuSample | None = None
        self.history: dict[int, deque[float]] = {}
        self._last_recorded: GpuSample | None = None

    def show(self, state: DashboardState, samples: Sequence[GpuSample] = ()) -> None:
        for s in samples:
            self._record(s)
        if not samples and state.gpus is not None and state.gpus is not self._last_recorded:
            self._record(state.gpus)
        if state.gpus is not self.sample:
            self.sample = state.gpus
            self.refresh()  # the pane's size comes from the layout, never from its rows

    def _record(self, sample: GpuSample) -> None:
        self._last_recorded = sample
        for g in sample.gpus:
            if g.util_gpu is not None:
                self.history.setdefault(g.index, deque(maxlen=HISTORY)).append(g.util_gpu)

    def _gpus(self) -> tuple[GpuInfo, ...]:
        return self.sample.gpus if self.sample is not None and self.sample.state == "ok" else ()

    def action_select(self, step: int) -> None:
        gpus = self._gpus()
        if not gpus:
            return
        cur = self.selected if self.selected is not None else (-1 if step > 0 else len(gpus))
        self.selected = max(0, min(len(gpus) - 1, cur + step))

    def action_clear_selection(self) -> None:
        self.selected = None

    def watch_selected(self) -> None:
        self.refresh()

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        row = offset.y - 1  # first line is the header
        if 0 <= row < len(self._gpus()):
            self.selected = None if self.selected == row else row

    def render(self) -> Content:
        width = max(30, self.content_region.width or self.size.width)
        s = self.sample
        if s is None:
            return Content.styled("waiting for GPU data…", "$text-muted")
        if s.state == "no_driver":
            where = f" on {inert(s.host)}" if s.host else ""
            return Content.assemble(
                ("no NVIDIA driver", "$warning bold"), (f"{where}", "$text"),
                (f"\n{truncate(inert(s.error or 'NVML library not found'), width)}", "$text-muted"),
                ("\nGPU rows are off; everything else keeps working.", "$text-muted"))
        if s.state != "ok":
            return Content.assemble(("GPU data unavailable: ", "$error bold"),
                                    (truncate(inert(s.error or s.state), width - 22), "$text"))
        return self._render_rows(s, width)

    def _render_rows(self, s: GpuSample, width: int) -> Content:
        flagged = imbalanced(s.gpus)
        name = inert(s.gpus[0].name) if s.gpus and s.gpus[0].name else "GPU"
        head: list[Part] = [(truncate(f"{len(s.gpus)}× {name}", width // 2), "$text-muted")]
        if flagged:
            head.append(("  ⚠ memory imbalance across ranks", "$warning bold"))
        elif s.backend:
            head.append((f"  via {inert(s.backend)}", "$text-muted"))
        lines = [Content.assemble(*head)]
        for i, g in enumerate(s.gpus):
            hist = list(self.history.get(g.index, ()))
            lines.append(gpu_row(g, hist, width, g.index in flagged, self.selected == i))
        if self.selected is not None and self.selected < len(s.gpus):
            lines.extend(self._process_lines(s.gpus[self.selected], width))
        return Content("\n").join(lines)

    def _process_lines(self, g: GpuInfo, width: int) -> list[Content]:
        if not g.processes:
            return [Content.styled(f" └ GPU {g.index}: no compute processes", "$text-muted")]
        out = []
        for p in g.processes:
            name = truncate(inert(p.name) or "?", max(8, width - 30))
            out.append(Content.assemble((f" └ pid {p.pid:<8}", "$text"), (name, "$text-muted"),
                                        (f"  {fmt_bytes(p.used_bytes)}", "$text")))
        return out


__all__ = ["GpuPane", "gpu_row", "imbalanced"]
