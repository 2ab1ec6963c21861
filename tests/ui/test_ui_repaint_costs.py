"""What keeps the dashboard cheap: shared frame grid, line-level repaints, quiet scrollbars.

These pin down behaviour that the benchmarks (``benchmarks/bench_tui.py``) measured as costly:
a pane repainted although its text did not change, a scrollbar re-rendered on every streaming
frame, throttled repaints that never shared a screen update, timers started from a batch
delivery that never fired.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import random
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest
from rich.console import Console
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.content import Content
from textual.geometry import Region, Size
from textual.scrollbar import ScrollBarRender
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

from eagle_tui.assembly.threaded import ThreadedSession, session_opener
from eagle_tui.model.events import Event, LogLine, Tick
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.session import Session
from eagle_tui.ui.frames import FRAME_INTERVAL, PANE_INTERVAL, frame_delay
from eagle_tui.ui.inbox import HOLD_LIMIT, BatchInbox, HeldGrown, SessionBatch
from eagle_tui.ui.widgets.linediff import LineDiffWidget
from eagle_tui.ui.widgets.logview import LogView
from eagle_tui.ui.widgets.scrollbars import thumb
from eagle_tui.ui.widgets.startup import StartupPane, Stepper
from tests.support.ui_helpers import make_app, settle

# ---------------------------------------------------------------------------- frame grid


def test_frame_delay_is_zero_once_a_full_interval_has_passed() -> None:
    assert frame_delay(10.30, 10.0, 0.25) == 0.0
    assert frame_delay(10.25, 10.0, 0.25) == 0.0


def test_throttled_repaints_of_different_widgets_land_on_the_same_grid_points() -> None:
    # the log painted at 100.01, the panes at 100.03; both are asked again at 100.1
    log_at = 100.1 + frame_delay(100.1, 100.01, FRAME_INTERVAL)
    pane_at = 100.1 + frame_delay(100.1, 100.03, PANE_INTERVAL)
    assert round(log_at / FRAME_INTERVAL, 6).is_integer()
    assert round(pane_at / PANE_INTERVAL, 6).is_integer()
    # every pane update falls on a point where the log also repaints: one screen update
    assert round(pane_at / FRAME_INTERVAL, 6).is_integer()
    assert pane_at - log_at in (0.0, FRAME_INTERVAL)
    assert (PANE_INTERVAL / FRAME_INTERVAL).is_integer()


def test_a_repaint_that_ran_late_keeps_the_next_grid_point() -> None:
    # painted 30 ms after the grid point 100.0: the next one is 100.25, not 100.5
    assert abs(100.05 + frame_delay(100.05, 100.03, 0.25) - 100.25) < 1e-9
    # never sooner than 3/4 of an interval after the last repaint
    for last in (100.0, 100.06, 100.2, 100.24):
        delay = frame_delay(last + 0.01, last, 0.25)
        assert last + 0.01 + delay - last >= 0.75 * 0.25 - 1e-9


# ---------------------------------------------------------------------------- line-level repaints


class Lines(LineDiffWidget):
    DEFAULT_CSS = "Lines { height: 4; }"

    def __init__(self) -> None:
        super().__init__()
        self.text = ["a", "b", "c", "d"]

    def build(self, width: int) -> Content:
        return Content("\n".join(self.text))


class LinesApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Lines()


async def test_line_diff_widget_repaints_only_the_lines_that_changed() -> None:
    app = LinesApp()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        w = app.query_one(Lines)
        refreshes = spy_refresh(w)
        w.update_lines()  # nothing changed
        assert refreshes == []
        w.text = ["a", "B", "c", "D"]
        w.update_lines()
        assert refreshes == [(Region(0, 1, 40, 1), Region(0, 3, 40, 1))]
        await pilot.pause()
        assert [s.text.rstrip() for s in (w.render_line(y) for y in range(4))] == \
            ["a", "B", "c", "D"]
        w.text = ["a", "B", "c"]  # fewer lines: everything is repainted
        w.update_lines()
        assert refreshes[-1] == ()


class Styled(LineDiffWidget):
    DEFAULT_CSS = "Styled { height: 6; padding: 0 1; text-align: right; color: red; }"

    def __init__(self) -> None:
        super().__init__()
        self.rows = [("tok/s", "$accent bold"), ("12.5", "$success"), ("", ""), ("x" * 30, "")]

    def build(self, width: int) -> Content:
        return Content("\n").join(Content.styled(text, style) for text, style in self.rows)


class StyledApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Styled()


async def test_changed_rows_alone_render_to_what_a_whole_render_gives() -> None:
    app = StyledApp()
    async with app.run_test(size=(40, 8)) as pilot:
        await pilot.pause()
        w = app.query_one(Styled)
        rendered: list[int] = []
        original = Visual.to_strips

        def to_strips(*args: Any, **kwargs: Any) -> list[Strip]:
            rendered.append(args[3])  # the height asked for
            return original(*args, **kwargs)

        Visual.to_strips = to_strips  # type: ignore[method-assign]
        try:
            w.rows[1] = ("13.75", "$error italic")
            w.update_lines()
            await pilot.pause()
            partial = [list(w.render_line(y)) for y in range(6)]
            assert rendered == [1]  # the changed row alone, not all six
            w.refresh()  # Textual's own whole render
            await pilot.pause()
            assert [list(w.render_line(y)) for y in range(6)] == partial
            assert rendered[-1] == 6
        finally:
            Visual.to_strips = original  # type: ignore[method-assign]


class Aligned(LineDiffWidget):
    DEFAULT_CSS = "Aligned { height: 9; padding: 0 2; }"

    def __init__(self) -> None:
        super().__init__()
        self.rows = [f"row {y}" for y in range(9)]

    def build(self, width: int) -> Content:
        return Content("\n").join(
            Content.from_markup(f"[$accent]{t}[/] [@click=app.bell]go[/] "
                                f"[link='https://x.test/{y}']ln[/] [b]{y}[/]")
            for y, t in enumerate(self.rows))


class AlignedApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Aligned()


@pytest.mark.parametrize("align", ["left", "center", "right", "justify"])
async def test_every_row_rendered_alone_carries_the_offsets_of_a_whole_render(align: str) -> None:
    # the offsets (x, row) in each cell's style are what a click or a selection reads: a row
    # rendered alone must carry the ones a whole render gives it, at every row and alignment
    app = AlignedApp()
    async with app.run_test(size=(50, 11)) as pilot:
        w = app.query_one(Aligned)
        w.styles.text_align = align  # type: ignore[assignment]
        await pilot.pause()
        rng = random.Random(align)
        for _ in range(6):
            for y in rng.sample(range(9), 3):
                w.rows[y] = "x" * rng.randrange(1, 20)
            w.update_lines()
            await pilot.pause()
            partial = [list(w.render_line(y)) for y in range(9)]
            w.refresh()
            await pilot.pause()
            whole = [list(w.render_line(y)) for y in range(9)]
            assert partial == whole
            assert [[s.style.meta.get("offset") if s.style else None for s in row]
                    for row in partial] == \
                [[s.style.meta.get("offset") if s.style else None for s in row] for row in whole]


_BASE = reduce(DashboardState(), [Tick(1000.0), *(LogLine(i, "x") for i in range(3))])


def _state(now: float) -> DashboardState:
    """The same records but the clock, as the reducer leaves them after a tick."""
    return dataclasses.replace(_BASE, clock=dataclasses.replace(_BASE.clock, now=now))


def spy_refresh(widget: Widget) -> list[tuple[Region, ...]]:
    """Record the regions of every ``refresh()`` of ``widget`` (and still refresh)."""
    calls: list[tuple[Region, ...]] = []
    original = widget.refresh

    def refresh(*regions: Region, **kwargs: bool) -> Widget:
        calls.append(regions)
        return original(*regions, **kwargs)

    widget.refresh = refresh  # type: ignore[method-assign, assignment]
    return calls


class StartupApp(App[None]):
    def compose(self) -> ComposeResult:
        yield StartupPane(id="startup")


async def test_a_clock_tick_repaints_the_stepper_rows_it_changes_not_the_pane() -> None:
    app = StartupApp()
    async with app.run_test(size=(60, 16)) as pilot:
        pane = app.query_one(StartupPane)
        pane.show(_state(1001.0))
        await pilot.pause()
        stepper = app.query_one(Stepper)
        pane_refreshes = spy_refresh(pane)
        stepper_refreshes = spy_refresh(stepper)
        pane.show(_state(1002.0))  # one second later: the active step's time and the total
        assert pane_refreshes == []  # the border title was not re-assigned
        assert len(stepper_refreshes) == 1
        rows = {r.y for r in stepper_refreshes[0]}
        assert rows and len(rows) <= 2
        assert all(r.height == 1 for r in stepper_refreshes[0])
        pane.show(_state(1002.4))  # same second: nothing to draw
        assert len(stepper_refreshes) == 1


# ---------------------------------------------------------------------------- scrollbars


def _drawn(size: int, virtual: int, window: int, position: float) -> list[Segment]:
    bar = ScrollBarRender.render_bar(size=size, virtual_size=virtual, window_size=window,
                                     position=position)
    return list(bar.segments) if hasattr(bar, "segments") else list(
        Console().render(bar))  # pragma: no cover - older Textual


def test_thumb_changes_whenever_the_drawn_scrollbar_changes() -> None:
    rng = random.Random(5)
    for _ in range(400):
        size = rng.randint(3, 30)
        virtual = rng.randint(size + 1, 5000)
        window = rng.randint(1, size)
        a = int(rng.uniform(0, virtual - window) * 8) / 8
        b = min(virtual - window, a + rng.choice([0.125, 1, 7, 50]))
        if thumb(size, virtual, window, a) == thumb(size, virtual, window, b):
            assert _drawn(size, virtual, window, a) == _drawn(size, virtual, window, b)


class Log(App[None]):
    def compose(self) -> ComposeResult:
        yield LogView(max_lines=5000, frame_interval=0.0)


async def test_a_followed_log_does_not_repaint_a_scrollbar_whose_thumb_stays_put() -> None:
    app = Log()
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(LogView)
        counter = itertools.count(1)
        view.append([LogLine(next(counter), "x" * 120) for _ in range(3000)])
        await pilot.pause()
        calls = [spy_refresh(view.vertical_scrollbar), spy_refresh(view.horizontal_scrollbar)]
        for _ in range(5):  # following at the end of 3,000+ lines: a 1-cell thumb at the bottom
            view.append([LogLine(next(counter), "y" * 50) for _ in range(10)])
            await pilot.pause()
        assert calls == [[], []]
        assert view.virtual_size == Size(120, 3050)
        assert view.vertical_scrollbar.window_virtual_size == 3050


# ---------------------------------------------------------------------------- deliveries


async def test_timers_started_while_handling_a_batch_fire() -> None:
    """A delivery from the session thread runs in the UI's context; Textual timers started there
    (the throttled repaints) used to die silently, so only the next batch could repaint."""
    fired = asyncio.Event()

    class TimerApp(App[None]):
        def on_session_batch(self, message: SessionBatch) -> None:
            inbox.take(message)
            self.set_timer(0.01, fired.set)

    app = TimerApp()
    inbox = BatchInbox(app)
    ts = ThreadedSession(session_opener(Session([], tick_interval=None)))

    async with app.run_test() as pilot:
        ts.subscribe(inbox)
        runner = app.run_worker(ts.run())
        await pilot.pause(0.05)
        sender = threading.Thread(target=ts._fanout, args=(DashboardState(), [Tick(1.0)]))
        sender.start()  # from another thread, with that thread's (empty) context
        sender.join()
        await asyncio.wait_for(fired.wait(), 2.0)
        await runner.wait()


async def test_log_status_reaches_the_pane_in_the_same_paint() -> None:
    from eagle_tui.ui.widgets.logpane import LogPane, LogStatusBar

    class PaneApp(App[None]):
        def compose(self) -> ComposeResult:
            yield LogPane(1000)

    app = PaneApp()
    async with app.run_test(size=(80, 12)) as pilot:
        await pilot.pause()
        pane = app.query_one(LogPane)
        pane.view.append([LogLine(i, f"line {i}") for i in range(1, 8)])
        # no await: the status bar already has the count (no message round trip)
        assert "7 lines" in pane.query_one(LogStatusBar).content.plain


# ---------------------------------------------------------------------------- held batches


class _Posts:
    """A message target that records what the inbox posts."""

    def __init__(self) -> None:
        self.got: list[object] = []

    def post_message(self, message: object) -> bool:
        self.got.append(message)
        return True


def _lines(start: int, n: int) -> list[LogLine]:
    return [LogLine(i, f"line {i}") for i in range(start, start + n)]


def test_a_held_batch_is_posted_again_once_it_reaches_the_hold_limit() -> None:
    target = _Posts()
    inbox = BatchInbox(target)  # type: ignore[arg-type]
    state = DashboardState()
    inbox(state, _lines(1, 10))
    assert len(target.got) == 1 and isinstance(target.got[0], SessionBatch)
    first = target.got[0]
    inbox(state, _lines(11, HOLD_LIMIT))  # not held: merged, nothing posted
    assert len(target.got) == 1
    inbox.take(first)
    inbox(state, _lines(1, 10))
    held = target.got[-1]
    assert isinstance(held, SessionBatch)
    held.held = True  # the UI left it open for its next repaint
    inbox(state, _lines(11, HOLD_LIMIT - 20))
    assert len(target.got) == 2  # below the limit: it waits for the repaint
    inbox(state, _lines(HOLD_LIMIT, 10))
    assert isinstance(target.got[-1], HeldGrown) and target.got[-1].batch is held
    inbox(state, _lines(HOLD_LIMIT + 10, 10))
    assert len(target.got) == 3  # told once
    assert inbox.take(held)[1][-1].lineno == HOLD_LIMIT + 19  # every event, in order


async def test_streaming_batches_wait_for_the_log_repaint_and_every_line_shows() -> None:
    n = 120
    app = make_app(_lines(1, n), delays=0.005)
    taken = 0
    on_batch = app._on_batch

    def counting(state: DashboardState, events: Sequence[Event]) -> None:
        nonlocal taken
        taken += 1
        on_batch(state, events)

    app._on_batch = counting  # type: ignore[method-assign]
    async with app.run_test() as pilot:
        started = time.monotonic()
        await settle(pilot, app, expect_lines=n)
        elapsed = time.monotonic() - started
        assert app.log_view.line_count == n
        assert app._held is None
        assert app.log_view.texts()[-1] == f"line {n}"
        # the session delivered a batch per line (batch_interval 0), over more than a frame:
        # the UI took about one per repaint (repaints are at least 3/4 of a frame apart)
        assert taken <= 2 + elapsed / (0.75 * FRAME_INTERVAL) < n / 4
