"""One changed row of a pane: rendered alone (``textual_private.render_rows``) against below its
empty rows above (how it was rendered before 2026-12-03), for each row of a 14-row pane.

    python benchmarks/bench_pane_rows.py          # µs per row, best of 5 interleaved runs of 300

A headless Textual app (``run_test``, 160×48) holds a ``LineDiffWidget`` of 14 rows like the
metrics pane's (a label, styled numbers, a sparkline); for rows 0, 6 and 13 it times Textual's
``Visual.to_strips`` of the row alone plus the offsets moved to the row (what the pane does now)
and of the row below ``y`` empty lines (the row taken from the last strip). Both give the same
strip (``tests/ui/test_ui_repaint_costs.py`` checks it); this measures only the cost.
"""

from __future__ import annotations

import asyncio
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.app import App, ComposeResult
from textual.content import Content
from textual.visual import Visual

from eagle_tui.ui.textual_private import strip_on_row
from eagle_tui.ui.widgets.linediff import LineDiffWidget

ROWS = 14
RUNS, N = 5, 300


class Pane(LineDiffWidget):
    DEFAULT_CSS = "Pane { height: 16; border: round white; }"

    def build(self, width: int) -> Content:
        return Content("\n").join(
            Content.styled(f"tok/s {i:>3} ", "$accent bold") + Content.styled("12.5 ", "$success")
            + Content.styled("▁▂▃▄▅▆▇█" * 4, "$primary") for i in range(ROWS))


class PaneApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Pane()


def per_call_us(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    for _ in range(N):
        fn()
    return (time.perf_counter() - t0) / N * 1e6


async def measure() -> list[tuple[int, float, float]]:
    app = PaneApp()
    out = []
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        w = app.query_one(Pane)
        width, style, lines = w.size.width, w.visual_style, w._lines
        for y in (0, ROWS // 2 - 1, ROWS - 1):
            line = lines[y]

            def alone(line: Content = line, y: int = y) -> object:
                strip = Visual.to_strips(w, line, width, 1, style)[0]
                return strip_on_row(strip, y)

            def below(line: Content = line, y: int = y) -> object:
                content = Content("\n" * y) + line if y else line
                return Visual.to_strips(w, content, width, y + 1, style)[-1]

            alone_us, below_us = [], []
            for _ in range(RUNS):  # interleaved, so that a busy moment hits both
                alone_us.append(per_call_us(alone))
                below_us.append(per_call_us(below))
            out.append((y, min(alone_us), min(below_us)))
    return out


def main() -> None:
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M')} (best of {RUNS} interleaved runs of {N})")
    print("| row | alone, µs | below the empty rows, µs | ratio |\n|---:|---:|---:|---:|")
    for y, alone, below in asyncio.run(measure()):
        print(f"| {y} | {alone:.0f} | {below:.0f} | {below / alone:.1f}× |")


if __name__ == "__main__":
    main()
