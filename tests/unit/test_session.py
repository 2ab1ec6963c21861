"""The session: batching, subscribers, retry with backoff, stop, ticks, record → replay."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from eagle_tui.errors import describe_error
from eagle_tui.model.events import (
    Baseline,
    CrashEvent,
    DecodeStats,
    Event,
    GpuInfo,
    GpuSample,
    HealthSample,
    LineKind,
    LogLine,
    Phase,
    PhaseEvent,
    Progress,
    SourceFailed,
    SourceRecovered,
    SpecConfig,
    Tick,
    UserMarker,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.session import FULL_BATCH, Session
from eagle_tui.sources.replay import ReplayError, ReplaySource
from eagle_tui.sources.scripted import ScriptedSource

SCRIPT: list[Event] = [
    PhaseEvent(Phase.INIT, 1, "00:00:01"),
    LogLine(1, "Init torch distributed begin.", LineKind.MILESTONE),
    SpecConfig("EAGLE3", "/models/draft", 3, 1, 4),
    HealthSample("no_listener", 1000.0, error="refused"),
    PhaseEvent(Phase.LOADING_WEIGHTS, 2),
    Progress("shards", 1, 4, 3),
    Progress("shards", 4, 4, 4),
    GpuSample(1001.0, "ok", (GpuInfo(0, "H200", mem_used=70 << 30, mem_total=140 << 30),)),
    PhaseEvent(Phase.READY, 9),
    HealthSample("ready", 1002.0, 200, 0.002),
    DecodeStats(10, gen_tps=180.5, accept_len=2.9, running=3),
    DecodeStats(11, gen_tps=175.0, accept_len=3.1, running=2),
    LogLine(12, "Traceback (most recent call last):", LineKind.TRACEBACK),
    CrashEvent("cuda_oom", 13, "torch.OutOfMemoryError: CUDA out of memory.", "lower it"),
    HealthSample("no_listener", 1003.0, error="refused"),
]


async def test_scripted_events_reduce_like_reduce_itself() -> None:
    session = Session([ScriptedSource(SCRIPT)], tick_interval=None)
    state = await session.run()
    assert state == reduce(DashboardState(), SCRIPT)
    assert state.startup.crash is not None and state.startup.crash.kind == "cuda_oom"
    assert session.events_seen == len(SCRIPT)
    assert session.finished and not session.running


async def test_events_arriving_together_are_one_batch_for_subscribers() -> None:
    got: list[tuple[DashboardState, list[Event]]] = []
    session = Session([ScriptedSource(SCRIPT[:5])], tick_interval=None, batch_interval=0.05)
    session.subscribe(lambda st, batch: got.append((st, list(batch))))
    await session.run()
    assert len(got) == 1
    state, batch = got[0]
    assert batch == SCRIPT[:5]
    assert state.startup.phase is Phase.LOADING_WEIGHTS


async def test_batches_follow_the_batch_interval() -> None:
    # 10 events 30 ms apart with a 100 ms window: a few batches, not ten and not one
    events = [LogLine(i, f"line {i}") for i in range(1, 11)]
    sizes: list[int] = []
    session = Session([ScriptedSource(events, 0.03)], tick_interval=None, batch_interval=0.1)
    session.subscribe(lambda _st, batch: sizes.append(len(batch)))
    await session.run()
    assert sum(sizes) == 10
    assert 2 <= len(sizes) <= 6, sizes


async def test_updates_iterator_sees_every_batch_and_ends_with_the_session() -> None:
    session = Session([ScriptedSource(SCRIPT, 0.001)], tick_interval=None, batch_interval=0.01)
    updates = session.updates()  # registered now: nothing can be missed
    seen: list[Event] = []
    runner = asyncio.create_task(session.run())
    async for state, batch in updates:
        seen.extend(batch)
        assert state.log.lines >= 0
    await runner
    assert seen == SCRIPT
    # after the end, a new iterator is empty
    assert [u async for u in session.updates()] == []


async def test_unsubscribe_stops_callbacks() -> None:
    calls: list[int] = []
    session = Session([ScriptedSource(SCRIPT[:3], 0.05)], tick_interval=None, batch_interval=0.0)
    unsubscribe = session.subscribe(lambda _s, b: calls.append(len(b)))
    runner = asyncio.create_task(session.run())
    while not calls:
        await asyncio.sleep(0.005)
    unsubscribe()
    await runner
    assert len(calls) == 1


async def test_a_failing_source_is_reported_retried_with_backoff_and_recovers() -> None:
    script: list[Event | BaseException] = [
        PhaseEvent(Phase.INIT, 1),
        ConnectionError("link down"),
        ConnectionError("still down"),
        PhaseEvent(Phase.LOADING_WEIGHTS, 2),
    ]
    seen: list[Event] = []
    session = Session([ScriptedSource(script, name="flaky")], tick_interval=None,
                      batch_interval=0.0, backoff_initial=0.05, backoff_max=1.0)
    session.subscribe(lambda _s, batch: seen.extend(batch))
    t0 = time.monotonic()
    state = await session.run()
    elapsed = time.monotonic() - t0
    failures = [e for e in seen if isinstance(e, SourceFailed)]
    assert [(f.source, f.error, f.attempt, f.retry_in_s) for f in failures] == [
        ("flaky", "ConnectionError: link down", 1, 0.05),
        ("flaky", "ConnectionError: still down", 2, 0.1),
    ]
    assert elapsed >= 0.15  # the backoff was actually waited
    recovered = [e for e in seen if isinstance(e, SourceRecovered)]
    assert len(recovered) == 1
    assert seen.index(recovered[0]) < seen.index(script[3])  # type: ignore[arg-type]
    assert state.live.failures == ()  # cleared on recovery
    assert state.startup.phase is Phase.LOADING_WEIGHTS


async def test_failure_stays_in_state_while_source_keeps_failing() -> None:
    script: list[Event | BaseException] = [RuntimeError(f"nope {i}") for i in range(3)]
    session = Session([ScriptedSource(script, name="dead")], tick_interval=None,
                      batch_interval=0.0, backoff_initial=0.01)
    state = await session.run()
    assert len(state.live.failures) == 1
    assert state.live.failures[0].source == "dead" and state.live.failures[0].attempt == 3
    assert any(a.kind == "source_failed" for a in state.alerts)


async def test_stop_ends_a_session_whose_sources_never_end() -> None:
    session = Session([ScriptedSource(SCRIPT[:2], hold=True)], tick_interval=None)
    runner = asyncio.create_task(session.run())
    await asyncio.sleep(0.1)
    assert session.running
    session.stop()
    state = await asyncio.wait_for(runner, 2.0)
    assert state.startup.phase is Phase.INIT


async def test_ticks_advance_the_clock_without_other_events() -> None:
    clock = iter(range(100, 200))
    session = Session([ScriptedSource([], hold=True)], tick_interval=0.02, batch_interval=0.0,
                      clock=lambda: float(next(clock)))
    runner = asyncio.create_task(session.run())
    await asyncio.sleep(0.2)
    session.stop()
    state = await runner
    assert state.clock.t_start == 100.0
    assert state.clock.elapsed is not None and state.clock.elapsed >= 3


async def test_post_delivers_intents_before_and_during_run() -> None:
    session = Session([ScriptedSource([PhaseEvent(Phase.INIT, 1)], 0.05)], tick_interval=None,
                      batch_interval=0.0)
    session.post(Baseline(90.0))
    runner = asyncio.create_task(session.run())
    await asyncio.sleep(0.01)
    session.post(UserMarker(5, 1.0, "here"))
    state = await runner
    assert state.metrics.baseline_tok_s == 90.0
    assert [m.label for m in state.log.markers] == ["here"]


async def test_subscriber_errors_are_not_swallowed() -> None:
    def broken(_s: DashboardState, _b: Sequence[Event]) -> None:
        raise ZeroDivisionError("consumer bug")

    session = Session([ScriptedSource(SCRIPT[:2], hold=True)], tick_interval=None)
    session.subscribe(broken)
    with pytest.raises(ZeroDivisionError):
        await asyncio.wait_for(session.run(), 2.0)
    assert session.finished


async def test_a_session_runs_once_and_checks_its_arguments() -> None:
    session = Session([], tick_interval=None)
    assert await session.run() == DashboardState()
    with pytest.raises(RuntimeError):
        await session.run()
    with pytest.raises(ValueError, match="unique"):
        Session([ScriptedSource([]), ScriptedSource([])])
    with pytest.raises(ValueError):
        Session([], batch_interval=-1)
    with pytest.raises(ValueError):
        ScriptedSource([], -0.5)


def test_describe_error_is_one_line() -> None:
    assert describe_error(OSError("a\nb")) == "OSError: a"
    assert describe_error(TimeoutError()) == "TimeoutError"


class _BurstSource:
    """Emits many events as fast as possible: the bounded queue must push back, not grow."""

    name = "burst"

    def __init__(self, n: int) -> None:
        self.n = n

    async def events(self) -> AsyncIterator[Event]:
        for i in range(1, self.n + 1):
            yield LogLine(i, "x")


async def test_a_fast_source_is_throttled_by_the_bounded_queue() -> None:
    sizes: list[int] = []
    session = Session([_BurstSource(5000)], tick_interval=None, batch_interval=0.0, max_queue=100)
    session.subscribe(lambda _s, b: sizes.append(len(b)))
    state = await session.run()
    assert state.log.lines == 5000
    assert max(sizes) <= 101


# --------------------------------------------------------------------------- record → replay


async def test_recorded_session_replays_into_the_same_state(tmp_path: Path) -> None:
    record = tmp_path / "rec" / "session.jsonl"
    script: list[Event | BaseException] = [*SCRIPT[:6], OSError("blip"), *SCRIPT[6:]]
    live = Session([ScriptedSource(script, 0.002, name="log")], record=record,
                   tick_interval=0.01, batch_interval=0.01, backoff_initial=0.01)
    live.post(Baseline(90.0))
    live_state = await live.run()
    lines = record.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"format": "eagle-tui-record", "version": 1}
    assert len(lines) == 1 + live.events_seen
    kinds = {json.loads(ln)["type"] for ln in lines[1:]}
    assert {"Tick", "SourceFailed", "SourceRecovered", "Baseline", "CrashEvent"} <= kinds

    replay = Session([ReplaySource(record)], tick_interval=None, batch_interval=0.003)
    replay_state = await replay.run()
    assert replay_state == live_state
    assert replay_state.startup.crash is not None and replay_state.metrics.baseline_tok_s == 90.0


async def test_replay_with_speed_keeps_the_recorded_pacing(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    record.write_text(
        '{"format":"eagle-tui-record","version":1}\n'
        + "".join(json.dumps({"type": "Tick", "t": 100.0 + i * 0.1}) + "\n" for i in range(4))
    )
    session = Session([ReplaySource(record, speed=2.0)], tick_interval=None, batch_interval=0.0)
    t0 = time.monotonic()
    state = await session.run()
    assert 0.12 <= time.monotonic() - t0 < 2.0  # 0.3 s of recording at 2x
    assert state.clock.now == pytest.approx(100.3)


async def test_replay_reports_a_bad_line_and_goes_on(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    record.write_text(
        '{"format":"eagle-tui-record","version":1}\n'
        '{"type":"Tick","t":1.0}\n'
        '{"type":"Tick","t":"soon"}\n'
        '{"type":"Baseline","tok_s":50.0}\n'
    )
    seen: list[Event] = []
    session = Session([ReplaySource(record)], tick_interval=None, batch_interval=0.0,
                      backoff_initial=0.01)
    session.subscribe(lambda _s, b: seen.extend(b))
    state = await session.run()
    failed = [e for e in seen if isinstance(e, SourceFailed)]
    assert len(failed) == 1 and f"{record}:3:" in failed[0].error
    assert "Tick.t: expected a number" in failed[0].error
    assert state.metrics.baseline_tok_s == 50.0
    assert state.live.failures == ()


async def test_replay_of_a_missing_file_is_a_reported_failure(tmp_path: Path) -> None:
    source = ReplaySource(tmp_path / "nope.jsonl")
    with pytest.raises(ReplayError, match="no such file"):
        async for _ in source.events():
            pass


def test_tick_is_an_event_the_reducer_accepts() -> None:
    assert reduce(DashboardState(), [Tick(5.0)]).clock.now == 5.0


async def test_replay_of_a_raw_log_parses_it_with_only_the_tail_visible(tmp_path: Path) -> None:
    from eagle_tui.model.ingest.parser import LogParser

    raw = (Path(__file__).resolve().parents[1] / "fixtures" / "vllm-cpu" / "server-eagle3.log")
    total = raw.read_bytes().count(b"\n")
    lines: list[LogLine] = []
    session = Session([ReplaySource(raw, visible_lines=50)], tick_interval=None,
                      batch_interval=0.0)
    session.subscribe(lambda _s, b: lines.extend(e for e in b if isinstance(e, LogLine)))
    state = await session.run()
    assert [ln.lineno for ln in lines] == list(range(total - 49, total + 1))
    full = reduce(DashboardState(), LogParser().feed_lines(raw.read_bytes()))
    for rec, name in (("startup", "phase"), ("startup", "engine"), ("config", "spec"),
                      ("config", "models"), ("log", "lines"), ("stats", "accept_len"),
                      ("stats", "gen_tps")):
        assert getattr(getattr(state, rec), name) == getattr(getattr(full, rec), name), name
    assert state.startup.phase.rank >= Phase.READY.rank and state.stats.accept_len.values()


class _ListSource:
    """Yields its events as lists (as the log tail does per chunk), recording queue pressure."""

    name = "lists"

    def __init__(self, chunks: list[list[Event]], session_ref: list[Session]) -> None:
        self.chunks = chunks
        self.session_ref = session_ref
        self.queued_seen: list[int] = []

    async def events(self) -> AsyncIterator[Event | list[Event]]:
        for chunk in self.chunks:
            self.queued_seen.append(self.session_ref[0]._queued)
            yield chunk


async def test_a_source_may_yield_lists_and_the_bound_counts_events() -> None:
    chunks = [[LogLine(i * 10 + k, f"l{i}.{k}") for k in range(10)] for i in range(20)]
    ref: list[Session] = []
    src = _ListSource([[], *chunks], ref)
    session = Session([src], tick_interval=None, batch_interval=0.0, max_queue=25)
    ref.append(session)
    got: list[Event] = []
    session.subscribe(lambda st, batch: got.extend(batch))
    state = await session.run()
    flat = [ev for chunk in chunks for ev in chunk]
    assert got == flat and state == reduce(DashboardState(), flat)
    assert session.events_seen == 200
    # a list is never split, but no list is queued while 25 or more events wait
    assert max(src.queued_seen) < 25 + 10 and session._queued == 0


class _PacedLists:
    name = "paced"

    def __init__(self, chunks: list[list[Event]], gap: float) -> None:
        self.chunks, self.gap = chunks, gap

    async def events(self) -> AsyncIterator[Event | list[Event]]:
        for chunk in self.chunks:
            yield chunk
            await asyncio.sleep(self.gap)


async def test_a_full_chunk_is_folded_at_once_and_small_ones_wait_for_the_batch() -> None:
    first: list[Event] = [LogLine(1, "the first lines go out at once anyway")]
    full: list[Event] = [LogLine(i, f"l{i}") for i in range(2, FULL_BATCH + 2)]
    small = full[:FULL_BATCH - 1]
    for chunk, at_once in ((full, True), (small, False)):
        session = Session([_PacedLists([first, chunk], 0.05)], tick_interval=None,
                          batch_interval=5.0)
        sizes: list[int] = []

        def seen(_st: DashboardState, batch: Sequence[Event], sizes: list[int] = sizes) -> None:
            sizes.append(len(batch))

        session.subscribe(seen)
        runner = asyncio.ensure_future(session.run())
        for _ in range(50):  # 0.5 s at most, a tenth of the batch interval
            if len(sizes) == 2:
                break
            await asyncio.sleep(0.01)
        got = list(sizes)
        session.stop()
        await runner
        assert got == ([1, len(chunk)] if at_once else [1]), (len(chunk), got)
