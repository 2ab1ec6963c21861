"""``ui/deadline.Deadline``: a stopped deadline never calls back, even when it was stopped in
the loop turn its time came (Textual's own ``Timer.stop()`` lets that one call through)."""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.timer import Timer

from eagle_tui.ui.deadline import Deadline


async def _two_due_together(use_deadline: bool) -> list[str]:
    """Two timers due at the same instant; the first stops the second."""
    calls: list[str] = []
    app: App[None] = App()
    async with app.run_test():
        deadline = Deadline(app)
        second: Timer | None = None

        def first() -> None:
            calls.append("first")
            if use_deadline:
                deadline.stop()
            elif second is not None:
                second.stop()

        app.set_timer(0.05, first)
        if use_deadline:
            deadline.start(0.05, lambda: calls.append("second"))
        else:
            second = app.set_timer(0.05, lambda: calls.append("second"))
        await asyncio.sleep(0.3)
    return calls


async def test_a_deadline_stopped_in_the_turn_it_falls_due_stays_stopped() -> None:
    for _ in range(5):
        assert await _two_due_together(use_deadline=True) == ["first"]


async def test_textuals_timer_stopped_so_still_fires_which_is_why() -> None:
    """(If Textual changes this, the Deadline stays correct and this documents the change.)"""
    outcomes = [await _two_due_together(use_deadline=False) for _ in range(5)]
    assert ["first", "second"] in outcomes


async def test_a_deadline_fires_once_and_a_new_start_replaces_the_old() -> None:
    calls: list[str] = []
    app: App[None] = App()
    async with app.run_test():
        deadline = Deadline(app)
        deadline.start(0.05, lambda: calls.append("old"))
        deadline.start(0.05, lambda: calls.append("new"))
        assert deadline.pending
        await asyncio.sleep(0.3)
        assert not deadline.pending
    assert calls == ["new"]
