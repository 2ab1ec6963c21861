"""The GPU pane: one compact row per GPU, a selected GPU's processes, rank imbalance, no-driver.

Eight GPUs must fit an 80×24 screen, so a GPU is exactly one line: memory bar, used/total,
utilisation sparkline, power and temperature. The utilisation history and each host's last-seen
GPUs are the model's :class:`~eagle_tui.model.buffers.gpuhistory.GpuHistory` (the state holds only
the latest sample), fed with every ``GpuSample`` *event* of a batch; this pane only renders it.

Tensor-parallel ranks should hold nearly the same memory; a rank that differs from the median by
more than a tenth of the card is flagged, since that is how a stuck or mis-sharded rank shows.
A missing driver is a state, not an error: the pane says so and the rest of the dashboard works.

A multi-node run (GPUs tagged with more than one ``host``) is shown in groups, one small header row
per host: every host has a GPU 0, and imbalance only means something between the ranks of one
host's group. A host whose GPUs drop out of the merged sample (its link is down) keeps its last
rows on screen, dimmed and marked "last seen", instead of vanishing while it reconnects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.events import Click
from textual.reactive import reactive, var

from eagle_tui.model.buffers.gpuhistory import GpuHistory
from eagle_tui.model.events import ConnectionState, GpuInfo, GpuSample
from eagle_tui.model.state import Gpus, LiveSources
from eagle_tui.model.views.numtext import fixed
from eagle_tui.ui.binding import RecordView, record
from eagle_tui.ui.format import GIB, bar, fmt_bytes, sparkline, truncate
from eagle_tui.ui.safety import inert
from eagle_tui.ui.sinks import checked
from eagle_tui.ui.widgets.connections import CONNECTION_STYLE, error_text, fit

Part = str | tuple[str, str] | Content
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


BAR_MIN = 4  # the memory bar's least width


def gpu_row(g: GpuInfo, history: Sequence[float], width: int, flagged: bool,
            selected: bool) -> Content:
    """One GPU on one line, fitted to ``width`` cells."""
    if g.error and g.mem_used is None:
        return Content.assemble((f"{g.index:>2} ", "bold"), (truncate(inert(g.error), width - 3),
                                                            "$error"))
    frac = g.mem_used / g.mem_total if g.mem_used is not None and g.mem_total else None
    used = fixed(g.mem_used / GIB, 1) if g.mem_used is not None else "—"
    total = f"{fixed(g.mem_total / GIB, 0)}G" if g.mem_total else "—"
    mem = f"{used:>5}/{total}"
    mem_w = 11  # "139.8/140G" plus the imbalance flag
    util = f"{fixed(g.util_gpu, 0):>3}%" if g.util_gpu is not None else "  —%"
    power = f"{fixed(g.power_w, 0):>4}W" if g.power_w is not None else "   —W"
    temp = f"{fixed(g.temp_c, 0):>3}°C" if g.temp_c is not None else "  —°C"
    taken = 3 + 1 + mem_w + 1 + len(util) + 1 + len(power)
    if width - taken - 1 - len(temp) < BAR_MIN:  # a narrow pane: the temperature goes first
        temp = ""
    taken += 1 + len(temp) if temp else 0
    room = max(BAR_MIN, width - taken)
    spark_w = min(20, max(0, room // 3))
    if spark_w < 3:  # a cell or two of history says nothing: the bar gets them
        spark_w = 0
    bar_w = max(BAR_MIN, room - spark_w - (1 if spark_w else 0))
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
    parts += [(util, "$text"), " ", (power, "$text-muted")]
    if temp:
        parts += [" ", (temp, "$text-muted")]
    return Content.assemble(*parts)


def host_header(host: str, count: int, conn: ConnectionState | None, flagged: bool,
                stale: str | None, width: int) -> Content:
    """``node-b · 4 GPUs  ⟳ reconnecting · last seen: <why>`` for one host's group."""
    parts: list[Part] = [("─ ", "$text-muted"), (inert(host) or "local", "bold $secondary"),
                         (f" · {count} GPU{'s' if count != 1 else ''}", "$text-muted")]
    if conn is not None and conn.state != "connected":
        icon, style = CONNECTION_STYLE.get(conn.state, ("?", "$text-muted"))
        parts.append((f"  {icon} {inert(conn.state)}", style))
    if flagged:
        parts.append(("  ⚠ imbalance", "$warning bold"))
    if stale is not None:  # the link's own state says why when it is known
        parts.append(("  last seen", "$warning"))
        if stale and (conn is None or conn.state == "connected"):
            parts.append((f": {stale}", "$text-muted"))
    return fit(Content.assemble(*parts), width)


class GpuPane(RecordView, can_focus=True):
    """GPU rows; ``up``/``down`` or a click select a GPU and list its processes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "select(-1)", "Previous GPU", show=False),
        Binding("down", "select(1)", "Next GPU", show=False),
        Binding("escape", "clear_selection", "Clear selection", show=False),
    ]

    selected: reactive[int | None] = reactive(None)
    state_gpu: var[Gpus] = record(Gpus)
    state_live: var[LiveSources] = record(LiveSources)  # the hosts' connections

    def __init__(self, *, history: GpuHistory | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.border_title = "GPUs"
        self.history = history if history is not None else GpuHistory()
        self._conns: dict[str, ConnectionState] = {}
        self._line_map: list[int | None] = []  # content line → entry index (None: a header)
        self._shown: tuple[int, Content, list[int | None]] | None = None  # width, content, map

    def _watch_state_live(self, old: LiveSources, new: LiveSources) -> None:
        """Of the live sources the pane draws only the hosts' connections."""
        if new.connections != old.connections:
            self._mark_stale()

    @property
    def sample(self) -> GpuSample | None:
        return self.state_gpu.sample

    def repaint(self) -> None:
        """Repaint only when what the pane draws changed (a sample a second whose rows read
        the same, e.g. an idle GPU, costs no screen update). The history is fed by its owner
        before the records are published."""
        self._conns = {c.host: c for c in self.state_live.connections}
        old = self._shown
        width = self._width()
        content = self._build(width)
        if old is None or old[0] != width or not content.is_same(old[1]):
            self._shown = (width, content, self._line_map)
            self.refresh()  # the pane's size comes from the layout, never from its rows

    @property
    def grouped(self) -> bool:
        return self.history.grouped

    def _entries(self) -> list[tuple[str, GpuInfo, bool]]:
        return self.history.rows(self.sample)

    def action_select(self, step: int) -> None:
        entries = self._entries()
        if not entries:
            return
        cur = self.selected if self.selected is not None else (-1 if step > 0 else len(entries))
        self.selected = max(0, min(len(entries) - 1, cur + step))

    def action_clear_selection(self) -> None:
        self.selected = None

    def watch_selected(self) -> None:
        self._shown = None
        self.refresh()

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not 0 <= offset.y < len(self._line_map):
            return
        idx = self._line_map[offset.y]
        if idx is not None:
            self.selected = None if self.selected == idx else idx

    def _width(self) -> int:
        return max(30, self.content_region.width or self.size.width)

    def render(self) -> Content:
        width = self._width()
        shown = self._shown
        if shown is None or shown[0] != width:
            shown = self._shown = (width, checked(self._build(width)), self._line_map)
        self._line_map = shown[2]
        return shown[1]

    def _build(self, width: int) -> Content:
        s = self.sample
        self._line_map = []
        if s is None:
            return Content.styled("waiting for GPU data…", "$text-muted")
        if s.state == "off":
            return Content.styled(inert(s.error), "$text-muted")
        if self.grouped and s.state != "no_driver":
            return self._render_groups(s, width)  # a host that failed keeps its last rows
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

    def _head(self, s: GpuSample, gpus: Sequence[GpuInfo], flagged: bool, width: int,
              where: str = "") -> Content:
        name = inert(gpus[0].name) if gpus and gpus[0].name else "GPU"
        head: list[Part] = [(truncate(f"{len(gpus)}× {name}{where}", width // 2), "$text-muted")]
        if flagged:  # grouped: the host's own header says which ranks
            head.append(("  ⚠ memory imbalance" + ("" if where else " across ranks"),
                         "$warning bold"))
        elif s.backend:
            head.append((f"  via {inert(s.backend)}", "$text-muted"))
        return fit(Content.assemble(*head), width)  # one line: clicks map lines to GPUs

    def _render_rows(self, s: GpuSample, width: int) -> Content:
        flagged = imbalanced(s.gpus)
        lines = [self._head(s, s.gpus, bool(flagged), width)]
        self._line_map = [None]
        for i, g in enumerate(s.gpus):
            hist = self.history.utilisation(g.host or s.host, g.index)
            lines.append(gpu_row(g, hist, width, g.index in flagged, self.selected == i))
            self._line_map.append(i)
        return self._with_processes(lines, [g for _, g, _ in self._entries()], width)

    def _render_groups(self, s: GpuSample, width: int) -> Content:
        entries = self._entries()
        groups: dict[str, list[tuple[int, GpuInfo, bool]]] = {}
        for i, (host, g, stale) in enumerate(entries):
            groups.setdefault(host, []).append((i, g, stale))
        flags = {h: imbalanced([g for _, g, stale in rows if not stale])
                 for h, rows in groups.items()}
        lines = [self._head(s, [g for _, g, _ in entries], any(flags.values()), width,
                            f" on {len(groups)} hosts")]
        self._line_map = [None]
        for host, rows in groups.items():
            stale = rows[0][2]
            why = self._host_error(s, host) if stale else None
            lines.append(host_header(host, len(rows), self._conns.get(host), bool(flags[host]),
                                     why, width))
            self._line_map.append(None)
            for i, g, old in rows:
                hist = self.history.utilisation(host, g.index)
                row = gpu_row(g, hist, width, g.index in flags[host], self.selected == i)
                lines.append(row.stylize("dim") if old else row)
                self._line_map.append(i)
        return self._with_processes(lines, [g for _, g, _ in entries], width)

    @staticmethod
    def _host_error(s: GpuSample, host: str) -> str:
        """The merged sample's ``host: why`` part for ``host`` (MergedGpu writes them so)."""
        for part in s.error.split("; "):
            if part.startswith(f"{host}: "):
                return error_text(part.removeprefix(f"{host}: "))
        return ""

    def _with_processes(self, lines: list[Content], gpus: Sequence[GpuInfo],
                        width: int) -> Content:
        if self.selected is not None and self.selected < len(gpus):
            lines.extend(self._process_lines(gpus[self.selected], width))
        return Content("\n").join(lines)

    def _process_lines(self, g: GpuInfo, width: int) -> list[Content]:
        if not g.processes:
            # nvidia-smi's query mode lists no processes at all: "none" would be a guess
            listed = self.sample is None or self.sample.backend != "nvidia-smi"
            why = "no compute processes" if listed else "process list not available via nvidia-smi"
            return [Content.styled(f" └ GPU {g.index}: {why}", "$text-muted")]
        out = []
        for p in g.processes:
            name = truncate(inert(p.name) or "?", max(8, width - 30))
            out.append(Content.assemble((f" └ pid {p.pid:<8}", "$text"), (name, "$text-muted"),
                                        (f"  {fmt_bytes(p.used_bytes)}", "$text")))
        return out


__all__ = ["GpuPane", "gpu_row", "host_header", "imbalanced"]
