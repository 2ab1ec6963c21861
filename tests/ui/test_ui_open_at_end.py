"""A big log opened at its end (issue 15): its last lines are on screen while the lines before
them are still being summarized, keys answer meanwhile, and the summary then merges in."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

from textual.pilot import Pilot

from eagle_tui.assembly.open import prepare_dashboard
from eagle_tui.assembly.spec import DashboardSpec
from eagle_tui.assembly.threaded import session_opener
from eagle_tui.model.events import Event, LogOpened, SummaryProgress
from eagle_tui.model.fold.prefix import PrefixSummary
from eagle_tui.report.prefix import fold_prefix
from eagle_tui.session import Session
from eagle_tui.sources.logtail import LogTail
from eagle_tui.transport.local import LocalTransport
from eagle_tui.ui.app import EagleApp
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.textual_private import screen_text
from eagle_tui.ui.widgets.logpane import LogPane

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def big_log(tmp_path: Path) -> Path:
    """A crashed startup, then 20,000 lines of a serving server's stats (a crash only the
    summary of the lines before the tail can see)."""
    head = (FIXTURES / "wait" / "sglang-oom-cuda-graph.log").read_bytes()
    body = b"".join(b"[2025-11-20 10:15:%02d] line number %06d of the body\n" % (i % 60, i)
                    for i in range(20_000))
    log = tmp_path / "big.log"
    log.write_bytes(head + body)
    return log


def gated(gate: threading.Event) -> object:
    """The child's fold, run in a thread once ``gate`` is set: the summary stays "running" for
    as long as the test needs."""

    def summarize(opened: LogOpened) -> AsyncIterator[Event | PrefixSummary]:
        async def gen() -> AsyncIterator[Event | PrefixSummary]:
            yield SummaryProgress(opened.path, opened.host, opened.start // 3, opened.start,
                                  100, 2.5)
            while not gate.is_set():
                await asyncio.sleep(0.01)

            def fold() -> PrefixSummary:
                with open(opened.path, "rb") as f:
                    return fold_prefix(f, opened.start, workers=1)

            yield await asyncio.to_thread(fold)

        return gen()

    return summarize


async def until(pilot: Pilot[int], cond: object, tries: int = 500) -> None:
    for _ in range(tries):
        if callable(cond) and cond():
            return
        await pilot.pause(0.01)
    raise AssertionError("the dashboard never got there")


async def test_last_lines_first_keys_answer_then_the_summary_merges(tmp_path: Path) -> None:
    log = big_log(tmp_path)
    gate = threading.Event()
    tail = LogTail(LocalTransport(), str(log), from_end=64 << 10)
    session = Session([tail], tick_interval=None, batch_interval=0.0,
                      summarizer=gated(gate))  # type: ignore[arg-type]
    app: EagleApp = prepare_dashboard(DashboardSpec(label="big"), opener=session_opener(session),
                                      config=UiConfig()).app
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: "line number 019999" in screen_text(app))
            # the end is shown, the beginning is not in memory, the summary runs
            await until(pilot, lambda: app.state.log.summary is not None
                        and "summarizing 33 %" in screen_text(app))
            assert app.state.log.log_start > 0 and app.state.log.summary is not None
            assert not app.state.log.summary.finished and app.state.startup.crash is None
            text = screen_text(app)
            assert "summarizing 33 %" in text and "2.5 s left" in text
            assert "line number 000000" not in "\n".join(app.log_view.texts())
            # keys answer while it runs: the filter box opens and closes, panes switch
            await pilot.press("slash", "x")
            await until(pilot, lambda: app.query_one(LogPane).query_text == "x")
            await pilot.press("escape")
            await pilot.press("question_mark")
            await pilot.pause()
            await pilot.press("escape")
            gate.set()
            await until(pilot, lambda: app.state.log.summary is not None
                        and app.state.log.summary.finished)
            await until(pilot, lambda: "CRASHED" in screen_text(app))
            st = app.state
            assert st.startup.crash is not None and st.log.lineno_base is not None
            assert st.startup.crash.lineno + st.log.lineno_base < 100  # the file's own number
            assert "summarizing" not in screen_text(app)
    finally:
        gate.set()
