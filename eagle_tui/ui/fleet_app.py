"""The fleet screen: one row per engine instance, flags coloured, sort/filter, sparklines.

It only renders: snapshots come from an injected ``snapshots()`` async iterator (the Prometheus
poller in real use, a scripted list in the tests), consumed by one worker on the app's loop —
the poller awaits httpx with a total deadline per request, so a slow or dead Prometheus never
blocks a key; the status line says it is unreachable/stale and the rows keep the last good
figures, marked. ``Enter`` exits the app with the chosen row; the assembly opens the ordinary
dashboard for it and brings the fleet back afterwards.

Keys: ``s`` next sort order, ``S`` reverse, ``f`` next flag filter (any flag, then each flag),
``/`` filter text (model or host), ``Esc`` clear filters, ``Enter`` open the instance, ``q``
quit.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Input, Static

from eagle_tui.model.fleet.flags import (
    FLAG_ORDER,
    FLAG_SEVERITY,
    SORT_KEYS,
    FleetFilter,
    sort_rows,
)
from eagle_tui.model.fleet.snapshot import FleetRow, FleetSnapshot
from eagle_tui.ui.fleet_format import COLUMNS, cells, status_line
from eagle_tui.ui.sinks import add_row, show
from eagle_tui.ui.theme import DEFAULT_THEME, builtin_themes, variable_defaults

FLAG_CYCLE: tuple[str | None, ...] = (None, "any", *FLAG_ORDER)


class FleetApp(App[FleetRow | None]):
    """``App.run()`` returns the row to drill into, or ``None`` when the user quit."""

    TITLE = "eagle-tui fleet"
    CSS = """
    #fleet-status { height: 1; padding: 0 1; background: $panel; }
    #fleet-status.-stale { background: $error; color: $text; }
    #fleet-table { height: 1fr; }
    #fleet-filter { display: none; height: 3; }
    #fleet-filter.-open { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "drill", "Open"),
        Binding("s", "sort", "Sort"),
        Binding("S", "reverse", "Reverse", show=False),
        Binding("f", "flag", "Flag filter"),
        Binding("slash", "filter_text", "Filter"),
        Binding("escape", "clear", "Clear", show=False),
        Binding("q", "quit_fleet", "Quit"),
    ]

    def __init__(self, snapshots: Callable[[], AsyncIterator[FleetSnapshot]], *,
                 sort: str = "flags", filter: FleetFilter | None = None,
                 prometheus: str = "", clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        self._snapshots = snapshots
        self.sort_key = sort
        self.reverse = False
        self.row_filter = filter or FleetFilter()
        self.prometheus = prometheus
        self.snapshot: FleetSnapshot | None = None
        self._clock = clock
        self._shown: list[FleetRow] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **variable_defaults()}

    def compose(self) -> ComposeResult:
        yield Static("connecting to Prometheus…", id="fleet-status")
        yield Input(placeholder="model or host contains…", id="fleet-filter")
        table: DataTable[Text] = DataTable(id="fleet-table", cursor_type="row",
                                           zebra_stripes=True)
        yield table
        yield Footer()

    def on_mount(self) -> None:
        for theme in builtin_themes():
            self.register_theme(theme)
        self.theme = DEFAULT_THEME
        table = self.query_one("#fleet-table", DataTable)
        for label, key in COLUMNS:
            table.add_column(label, key=key)
        table.focus()
        self.follow()

    @work(exclusive=True, group="fleet")
    async def follow(self) -> None:
        async for snap in self._snapshots():
            self.show(snap)

    # ------------------------------------------------------------------ rendering
    def _styles(self) -> dict[str, str]:
        """Cell styles from the theme's variables (no colour is named in Python)."""
        v = self.get_css_variables()
        return {"critical": f"bold {v.get('error', '')}", "warning": v.get("warning", ""),
                "ok": v.get("success", ""), "stale": f"italic {v.get('text-muted', '')}"}

    def show(self, snap: FleetSnapshot) -> None:
        """Draw one snapshot (also called by tests with a scripted snapshot)."""
        self.snapshot = snap
        rows = sort_rows(self.row_filter.apply(snap.rows), self.sort_key, self.reverse)
        self._shown = rows
        status = self.query_one("#fleet-status", Static)
        show(status, status_line(snap, len(rows), self.sort_key, self.row_filter,
                                  self.prometheus, self._clock()))
        status.set_class(snap.status != "ok", "-stale")
        table = self.query_one("#fleet-table", DataTable)
        cursor = table.cursor_row
        table.clear()
        styles = self._styles()
        for r in rows:
            severity = min((FLAG_SEVERITY[f] for f in r.flags), default="ok",
                           key=("critical", "warning", "ok").index)
            add_row(table, *cells(r, snap.sparks, styles, severity), key=r.instance)
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))

    def _redraw(self) -> None:
        if self.snapshot is not None:
            self.show(self.snapshot)

    # ------------------------------------------------------------------ keys
    def action_sort(self) -> None:
        self.sort_key = SORT_KEYS[(SORT_KEYS.index(self.sort_key) + 1) % len(SORT_KEYS)]
        self._redraw()

    def action_reverse(self) -> None:
        self.reverse = not self.reverse
        self._redraw()

    def action_flag(self) -> None:
        i = FLAG_CYCLE.index(self.row_filter.flag) if self.row_filter.flag in FLAG_CYCLE else 0
        self.row_filter = replace(self.row_filter, flag=FLAG_CYCLE[(i + 1) % len(FLAG_CYCLE)])
        self._redraw()

    def action_filter_text(self) -> None:
        box = self.query_one("#fleet-filter", Input)
        box.add_class("-open")
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip() or None
        self.row_filter = replace(self.row_filter, text=text)
        event.input.remove_class("-open")
        self.query_one("#fleet-table", DataTable).focus()
        self._redraw()

    def action_clear(self) -> None:
        self.row_filter = FleetFilter()
        box = self.query_one("#fleet-filter", Input)
        box.value = ""
        box.remove_class("-open")
        self.query_one("#fleet-table", DataTable).focus()
        self._redraw()

    def action_drill(self) -> None:
        table = self.query_one("#fleet-table", DataTable)
        if self._shown and 0 <= table.cursor_row < len(self._shown):
            self.exit(self._shown[table.cursor_row])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_drill()

    def action_quit_fleet(self) -> None:
        self.exit(None)


__all__ = ["FLAG_CYCLE", "FleetApp"]
