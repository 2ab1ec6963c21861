"""The state as a record of records: few fields, each a frozen record of one concern, copied on
write, so a reader tells "changed" by identity."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.events import (
    Baseline,
    DecodeStats,
    GpuInfo,
    GpuSample,
    HealthSample,
    LogLine,
    Phase,
    PhaseEvent,
    Tick,
    UserMarker,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.record import is_frozen
from eagle_tui.model.state import RECORDS, DashboardState
from eagle_tui.model.state.activity import GPU_GROW_BYTES

START = [Tick(100.0), PhaseEvent(Phase.INIT, 1), LogLine(1, "server starts"),
         HealthSample("ready", 101.0), DecodeStats(2, gen_tps=50.0, accept_len=2.0, running=1),
         GpuSample(101.0, "ok", (GpuInfo(0, mem_used=10),))]


def _changed(old: DashboardState, new: DashboardState) -> set[str]:
    return {name for name in RECORDS if getattr(old, name) is not getattr(new, name)}


def test_at_most_twelve_fields_each_a_frozen_record_of_one_concern() -> None:
    fields = dataclasses.fields(DashboardState)
    assert len(fields) <= 12
    state = DashboardState()
    for f in fields:
        value = getattr(state, f.name)
        if isinstance(value, tuple):  # the alerts: an immutable tuple of frozen records
            continue
        assert dataclasses.is_dataclass(value) and is_frozen(type(value)), f.name


def test_a_batch_keeps_the_records_it_does_not_touch_and_changes_those_it_does() -> None:
    state = reduce(DashboardState(), START)
    # a GPU sample touches the GPUs, nothing else; memory that grows a step, the activity
    # track that watches it too
    gpu = reduce(state, [GpuSample(0.0, "ok", (GpuInfo(0, mem_used=20),))])
    assert _changed(state, gpu) == {"gpu"}
    grown = reduce(state, [GpuSample(101.0, "ok", (GpuInfo(0, mem_used=10 + GPU_GROW_BYTES),))])
    assert _changed(state, grown) == {"gpu", "activity"}
    assert grown.activity.last_gpu_grow_t == 101.0
    # a log line: the log's counters and when the log last talked
    line = reduce(state, [LogLine(3, "more")])
    assert _changed(state, line) == {"log", "activity"}
    assert line.activity.last_line_t == 101.0
    assert line.log.lines == 3 and line.stats is state.stats and line.startup is state.startup
    # a baseline: /metrics' record only; the same baseline again changes nothing
    base = reduce(state, [Baseline(40.0)])
    assert _changed(state, base) == {"metrics"}
    again = reduce(base, [Baseline(40.0)])
    assert _changed(base, again) == set()
    # a tick moves the clock only
    tick = reduce(state, [Tick(105.0)])
    assert _changed(state, tick) == {"clock"} and tick.clock.now == 105.0
    assert reduce(state, []) is state


def test_the_fold_never_changes_a_record_it_was_given() -> None:
    state = reduce(DashboardState(), START)
    before = {name: dataclasses.replace(r) if dataclasses.is_dataclass(r) else r
              for name in RECORDS if (r := getattr(state, name)) is not None}
    reduce(state, [LogLine(3, "x"), DecodeStats(4, gen_tps=60.0, accept_len=2.5, running=2),
                   HealthSample("ready", 103.0), UserMarker(4, 103.0, "m"), Tick(104.0)])
    for name, old in before.items():
        assert getattr(state, name) == old, name


events = st.one_of(
    st.builds(Tick, st.floats(100.0, 200.0)),
    st.builds(LogLine, st.integers(1, 50), st.sampled_from(["x", "Traceback", "ERROR y"])),
    st.builds(Baseline, st.sampled_from([40.0, 50.0])),
    st.builds(UserMarker, st.integers(1, 50), st.floats(100.0, 200.0)),
    st.builds(HealthSample, st.sampled_from(["ready", "down"]), st.floats(100.0, 200.0)),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(events, max_size=6))
def test_a_record_is_replaced_only_when_its_content_changes(batch: list[object]) -> None:
    state = reduce(DashboardState(), START)
    new = reduce(state, batch)  # type: ignore[arg-type]
    for name in RECORDS:
        old_r, new_r = getattr(state, name), getattr(new, name)
        if old_r is new_r:
            continue
        assert old_r != new_r, name  # a new object only for new content
