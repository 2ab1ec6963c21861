"""Panes bound to the state's records (``ui/binding.py``): a replaced record repaints the panes
that render it, and only those; a record that is the same object repaints nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import pytest
from textual.app import App, ComposeResult

from eagle_tui.model.events import ConnectionState, LogLine, Tick
from eagle_tui.model.state import RECORDS, DashboardState
from eagle_tui.model.state.alert import Alert
from eagle_tui.ui.binding import RecordSource, RecordView, bind, publish
from eagle_tui.ui.widgets.alerts import AlertsPane
from eagle_tui.ui.widgets.gpus import GpuPane
from eagle_tui.ui.widgets.metrics import MetricsPane
from eagle_tui.ui.widgets.startup import StartupPane, Stepper
from eagle_tui.ui.widgets.status import StatusLine
from tests.support.ui_helpers import make_app, settle

PANES: tuple[type[RecordView], ...] = (StatusLine, StartupPane, Stepper, MetricsPane, GpuPane,
                                       AlertsPane)


@pytest.fixture
def repaints(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How often each pane class repainted (and still repaint)."""
    counts: Counter[str] = Counter()
    for cls in PANES:
        original = cls.repaint

        def counted(self: RecordView, _original=original) -> None:  # type: ignore[no-untyped-def]
            counts[type(self).__name__] += 1
            _original(self)

        monkeypatch.setattr(cls, "repaint", counted)
    yield counts


def _renew(state: DashboardState, name: str) -> DashboardState:
    """``state`` with the record ``name`` replaced by an equal but new object (the alerts: a
    longer tuple, since the empty one is a single object)."""
    old = getattr(state, name)
    if isinstance(old, tuple):
        return replace(state, **{name: (*old, Alert("binding_test", "info", "x"))})
    new = replace(old)
    assert new == old and new is not old
    return replace(state, **{name: new})


# panes that draw only part of a record, so a new equal one draws nothing for them: the startup
# pane's times tick by the second, the GPU pane shows only the live sources' connections
PARTLY_DRAWN = {"clock": {"StartupPane", "Stepper"}, "live": {"GpuPane"}}


def test_every_pane_declares_what_it_renders() -> None:
    assert StatusLine.RECORDS == ("startup", "config", "log", "stats", "metrics", "live",
                                  "liveness", "alerts", "clock", "holds")
    assert MetricsPane.RECORDS == ("startup", "config", "stats", "metrics", "live", "liveness",
                                   "clock", "holds")
    assert StartupPane.RECORDS == Stepper.RECORDS == (
        "startup", "log", "metrics", "live", "gpu", "activity", "clock", "holds")
    assert GpuPane.RECORDS == ("live", "gpu")
    assert AlertsPane.RECORDS == ("alerts",)
    assert set().union(*(p.RECORDS for p in PANES)) == set(RECORDS)


async def test_a_replaced_record_repaints_its_panes_and_no_other(
        repaints: Counter[str]) -> None:
    app = make_app([Tick(1000.0), *(LogLine(i, f"line {i}") for i in range(3))])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        state = app.state
        publish(app, state)
        repaints.clear()
        publish(app, state)  # the very same records: nothing to draw
        assert repaints == Counter()
        for name in RECORDS:
            state = _renew(state, name)
            publish(app, state)
            bound = {p.__name__ for p in PANES if name in p.RECORDS} - PARTLY_DRAWN.get(name, set())
            assert set(repaints) == bound, name
            assert all(n == 1 for n in repaints.values()), (name, repaints)
            repaints.clear()
        # what those panes draw of the record moved: they repaint
        state = replace(state, clock=replace(state.clock, now=(state.clock.now or 0.0) + 1.0))
        publish(app, state)
        assert {"StartupPane", "Stepper"} <= set(repaints)
        repaints.clear()
        link = (ConnectionState("node-b", "reconnecting", 1000.0, attempt=1),)
        publish(app, replace(state, live=replace(state.live, connections=link)))
        assert "GpuPane" in repaints


async def test_a_new_equal_record_repaints_an_unrelated_change_does_not(
        repaints: Counter[str]) -> None:
    class Two(RecordSource, App[None]):
        def compose(self) -> ComposeResult:
            yield bind(MetricsPane(), Two)
            yield bind(AlertsPane(), Two)

    app = Two()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        state = DashboardState()
        publish(app, state)
        repaints.clear()
        state = replace(state, stats=replace(state.stats))  # equal, but a new object
        publish(app, state)
        assert repaints == Counter({"MetricsPane": 1})
        state = replace(state, gpu=replace(state.gpu, mem_peak=(("a", 0, 1),)))
        publish(app, state)
        assert repaints == Counter({"MetricsPane": 1})  # the GPU record: neither pane
        publish(app, replace(state, alerts=(Alert("x", "warning", "w"),)))
        assert repaints == Counter({"MetricsPane": 1, "AlertsPane": 1})
        await pilot.pause()
        assert "Alerts (1)" in str(app.query_one(AlertsPane).border_title)


async def test_a_pane_mounted_after_a_publish_takes_the_records_then_shown() -> None:
    """``bind`` hands a pane the composing node's records once it is mounted (what Textual's
    ``data_bind`` did with ``init=True``): a pane composed later draws what was published."""
    class Later(RecordSource, App[None]):
        def compose(self) -> ComposeResult:
            yield from ()

    app = Later()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        state = replace(DashboardState(), alerts=(Alert("late", "warning", "seen later"),))
        publish(app, state)

        from textual._context import active_message_pump

        token = active_message_pump.set(app)  # as in the app's compose
        try:
            pane = bind(AlertsPane(), Later)
        finally:
            active_message_pump.reset(token)
        await app.mount(pane)
        for _ in range(20):
            await pilot.pause()
            if pane.state_alerts is state.alerts:
                break
        assert pane.state_alerts is state.alerts
        assert "Alerts (1)" in str(pane.border_title)


def test_binding_outside_the_composing_node_is_refused() -> None:
    with pytest.raises((TypeError, LookupError)):
        bind(AlertsPane(), RecordSource)
