"""``ui/deadline.Deadline``: a stopped deadline never calls back, even when it was stopped after
its time came (Textual's own ``Timer.stop()`` lets that one call through), and it leaves
nothing to the cyclic collector."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.timer import Timer

from eagle_tui.ui.deadline import Deadline


class Queue:
    """An owner whose message queue runs only when the test says so."""

    def __init__(self) -> None:
        self.queued: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    def call_next(self, callback: Callable[..., Any], *args: Any) -> None:
        self.queued.append((callback, args))

    def run(self) -> None:
        queued, self.queued = self.queued, []
        for callback, args in queued:
            callback(*args)


async def test_a_deadline_stopped_after_it_fell_due_stays_stopped() -> None:
    """Its time came and its callback waits in the owner's queue behind another message,
    which stops it (the log's repaint stopping the panes' pending update): it never runs."""
    owner, calls = Queue(), []
    deadline = Deadline(owner)
    deadline.start(0.01, lambda: calls.append("due"))
    await asyncio.sleep(0.05)
    assert owner.queued and deadline.pending  # due: queued, not yet run
    deadline.stop()
    owner.run()
    assert calls == [] and not deadline.pending
    deadline.start(0.01, lambda: calls.append("again"))  # a new start after a stopped one
    await asyncio.sleep(0.05)
    owner.run()
    owner.run()
    assert calls == ["again"] and not deadline.pending


async def test_a_deadline_leaves_nothing_for_the_cyclic_collector() -> None:
    """Started, fired, stopped and replaced: no timer, task or closure in a reference cycle
    (Textual's ``set_timer`` leaves a timer, its task and coroutine to the collector)."""
    app: App[None] = App()
    async with app.run_test():
        deadline = Deadline(app)
        gc.collect()
        gc.disable()
        try:
            for i in range(20):
                deadline.start(0.001, lambda: None)
                if i % 3 == 0:
                    deadline.stop()
                await asyncio.sleep(0.01)
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            left = [o for o in gc.garbage if isinstance(o, (asyncio.TimerHandle, Deadline))
                    or getattr(o, "__qualname__", "").startswith("Deadline.")]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
        assert left == []


async def _two_due_together() -> list[str]:
    """Two of Textual's timers due at the same instant; the first stops the second."""
    calls: list[str] = []
    app: App[None] = App()
    async with app.run_test():
        second: Timer | None = None

        def first() -> None:
            calls.append("first")
            if second is not None:
                second.stop()

        app.set_timer(0.05, first)
        second = app.set_timer(0.05, lambda: calls.append("second"))
        await asyncio.sleep(0.3)
    return calls


async def test_textuals_timer_stopped_so_still_fires_which_is_why() -> None:
    """(If Textual changes this, the Deadline stays correct and this documents the change.)"""
    outcomes = [await _two_due_together() for _ in range(5)]
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
