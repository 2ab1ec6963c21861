"""The session's tick pacing: one a second until a ready or halted server has been quiet."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eagle_tui.model.buffers.gpuhistory import MEMORY_STEP
from eagle_tui.model.events import (
    CrashEvent,
    Event,
    GpuInfo,
    GpuSample,
    HealthSample,
    LogLine,
    MetricsSample,
    Phase,
    PhaseEvent,
    ProcessSample,
    Tick,
)
from eagle_tui.model.state import DashboardState
from eagle_tui.model.state.live import Gpus
from eagle_tui.model.state.run import Clock, Startup
from eagle_tui.model.state.server import ServerMetrics
from eagle_tui.model.views import ticks
from eagle_tui.model.views.ticks import QUIET_AFTER_S, QUIET_TICK_S, grid_wait, tick_delay
from eagle_tui.session import FULL_BATCH, Session
from eagle_tui.sources.scripted import ScriptedSource

START = 1000.0
READY = DashboardState(startup=Startup(phase=Phase.SERVING), clock=Clock(START, START))


def test_a_recent_event_or_a_starting_server_keeps_the_second() -> None:
    quiet = START + 10 * QUIET_AFTER_S
    assert tick_delay(READY, quiet, quiet - QUIET_AFTER_S / 2, 1.0) == 1.0
    starting = DashboardState(startup=Startup(phase=Phase.CUDA_GRAPH), clock=Clock(START, START))
    assert tick_delay(starting, quiet, START, 1.0) == 1.0  # its steps' times move by the second


@pytest.mark.parametrize("offset", [0.0, 0.01, 1.3, 2.5, 4.99, 7.0, 123.456])
def test_a_quiet_ready_server_ticks_on_the_grid_of_its_clock(offset: float) -> None:
    now = START + 100 * QUIET_TICK_S + offset
    due = now + tick_delay(READY, now, START, 1.0)
    steps = (due - START) / QUIET_TICK_S
    assert abs(steps - round(steps)) < 1e-9  # an uptime's 5 s steps change on time
    assert ticks.MIN_WAIT_S <= due - now <= QUIET_TICK_S + ticks.MIN_WAIT_S


def test_a_halted_server_goes_quiet_too() -> None:
    crash = CrashEvent("oom", 12, "CUDA out of memory", "lower --mem-fraction-static")
    halted = DashboardState(startup=Startup(phase=Phase.KV_CACHE, crash=crash),
                            clock=Clock(START, START))
    now = START + 2 * QUIET_AFTER_S
    assert tick_delay(halted, now, START, 1.0) > 1.0


def _ticking(monkeypatch: pytest.MonkeyPatch) -> tuple[Session, list[float], asyncio.Task[Any]]:
    """A ready server's session ticking every 0.02 s, quiet after 0.15 s (then every 0.5 s),
    running; and the times its ticks came."""
    monkeypatch.setattr(ticks, "QUIET_AFTER_S", 0.15)
    session = Session([ScriptedSource([], hold=True)], tick_interval=0.02, batch_interval=0.0,
                      initial=READY, clock=time.monotonic, quiet_tick=0.5)
    came: list[float] = []
    session.subscribe(lambda _s, evs: came.extend(time.monotonic() for e in evs
                                                  if type(e) is Tick))
    return session, came, asyncio.create_task(session.run())


async def test_the_session_slows_its_ticks_when_quiet_and_resumes_at_an_event(
        monkeypatch: pytest.MonkeyPatch) -> None:
    session, came, runner = _ticking(monkeypatch)
    await asyncio.sleep(1.2)
    quiet = len(came)
    assert quiet < 20  # ~8 in the first 0.15 s, then one each 0.5 s (60 at the second's pace)
    posted = time.monotonic()
    session.post(PhaseEvent(Phase.SERVING, 99))
    await asyncio.sleep(0.3)
    session.stop()
    await asyncio.wait_for(runner, 2.0)
    later = [t - posted for t in came[quiet:]]
    assert later and later[0] < 0.1  # the event ended the quiet wait
    assert len(later) >= 5  # and the ticks came every 0.02 s again


@pytest.mark.parametrize(("event", "is_routine"), [
    (Tick(START), True),
    (ProcessSample(START, 7, "sleeping", rss_bytes=1 << 30), True),
    (ProcessSample(START, 7, "running"), True),
    (ProcessSample(START, 7, "paused"), False),  # a held server: its age starts now
    (ProcessSample(START, 7, "zombie"), False),
    (ProcessSample(START, 7, "not_found"), False),
    (GpuSample(START, "ok"), True),
    (GpuSample(START, "error", error="NVML gone"), False),
    (HealthSample("ready", START, 200), True),
    (HealthSample("error", START, 503), False),
    (PhaseEvent(Phase.SERVING, 1), False),
    # the access line of one of our own polls is its echo; any other line is news
    (LogLine(3, '[2026-12-05 13:26:04] INFO:     127.0.0.1:5 - "GET /metrics?eagle-tui '
                'HTTP/1.1" 200 OK'), True),
    (LogLine(3, '[2026-12-05 13:26:04] INFO:     127.0.0.1:5 - "POST /generate HTTP/1.1" '
                '200 OK'), False),
    (LogLine(4, "[2026-12-05 13:26:05] Decode batch, #running-req: 1"), False),
])
def test_only_samples_saying_all_is_well_are_routine(event: Event, is_routine: bool) -> None:
    assert ticks.routine(event) is is_routine


async def test_routine_samples_leave_the_quiet_ticks_and_trouble_ends_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    session, came, runner = _ticking(monkeypatch)
    await asyncio.sleep(0.3)
    for _ in range(10):  # a quiet server's process sampled every 0.05 s: no 0.02 s ticks
        session.post(ProcessSample(time.monotonic(), 7, "sleeping", rss_bytes=1 << 20))
        await asyncio.sleep(0.05)
    during = len(came)
    session.post(ProcessSample(time.monotonic(), 7, "zombie"))
    await asyncio.sleep(0.3)
    session.stop()
    await asyncio.wait_for(runner, 2.0)
    assert during < 15  # ~8 before quiet, then the 0.5 s grid (40 at the second's pace)
    assert len(came) - during >= 5  # the zombie brought the fast ticks back


async def test_routine_samples_ride_with_the_quiet_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    session, _came, runner = _ticking(monkeypatch)
    batches: list[list[Event]] = []
    session.subscribe(lambda _s, evs: batches.append(list(evs)))
    await asyncio.sleep(0.3)  # quiet by now
    quiet_from = len(batches)
    for _ in range(10):
        session.post(ProcessSample(time.monotonic(), 7, "sleeping", rss_bytes=1 << 20))
        await asyncio.sleep(0.1)
    session.post(ProcessSample(time.monotonic(), 7, "paused"))  # trouble: at once
    await asyncio.sleep(0.05)
    session.stop()
    final = await asyncio.wait_for(runner, 2.0)
    quiet = batches[quiet_from:]
    samples = [b for b in quiet if any(type(e) is ProcessSample for e in b)]
    assert sum(type(e) is ProcessSample for b in quiet for e in b) == 11  # none lost
    assert all(any(type(e) is Tick for e in b) for b in samples[:-1])  # one pass each
    assert len(samples) <= 4  # 1 s of samples every 0.1 s: two or three ticks of 0.5 s
    assert samples[-1][-1] == ProcessSample(samples[-1][-1].t, 7, "paused")
    assert final.live.process is not None and final.live.process.status == "paused"


async def test_a_flood_of_routine_samples_is_not_held(monkeypatch: pytest.MonkeyPatch) -> None:
    session, _came, runner = _ticking(monkeypatch)
    batches: list[list[Event]] = []
    session.subscribe(lambda _s, evs: batches.append(list(evs)))
    await asyncio.sleep(0.3)  # quiet by now
    session.post(*(ProcessSample(time.monotonic(), 7, "sleeping") for _ in range(FULL_BATCH)))
    await asyncio.sleep(0.6)
    session.stop()
    await asyncio.wait_for(runner, 2.0)
    # a batch's worth goes out at once, alone: what waits for a tick is bounded
    assert any(len(b) >= FULL_BATCH and not any(type(e) is Tick for e in b) for b in batches)


def _gpus(*used: int) -> GpuSample:
    return GpuSample(START, "ok", tuple(GpuInfo(i, mem_used=u) for i, u in enumerate(used)))


@pytest.mark.parametrize(("held", "batch", "waits"), [
    (None, [ProcessSample(START, 7, "sleeping")], True),
    (_gpus(10 << 30, 20 << 30), [_gpus((10 << 30) + (1 << 20), 20 << 30)], True),
    (_gpus(10 << 30, 20 << 30), [_gpus(10 << 30, (20 << 30) + MEMORY_STEP)], False),  # a step
    (_gpus(10 << 30), [_gpus((10 << 30) + (40 << 20))], True),
    (_gpus(10 << 30), [_gpus((10 << 30) + (40 << 20)), _gpus((10 << 30) + (80 << 20))], False),
    (_gpus(10 << 30), [_gpus(10 << 30), _gpus((10 << 30) - MEMORY_STEP)], False),  # freed
    (_gpus(10 << 30), [_gpus(10 << 30, 1 << 30)], False),  # another GPU
    (None, [ProcessSample(START, 7, "sleeping"), Tick(START)], False),
    (None, [HealthSample("ready", START, 200), PhaseEvent(Phase.SERVING, 1)], False),
])
def test_a_batch_waits_for_the_tick_only_without_news(held: GpuSample | None,
                                                      batch: list[Event], waits: bool) -> None:
    assert ticks.can_wait(batch, dataclasses.replace(READY, gpu=Gpus(held))) is waits


IDLE = MetricsSample(START, "vllm", gen_tps=0.0, running=0, queued=0, asleep=False)


@pytest.mark.parametrize(("shown", "new", "waits"), [
    (IDLE, dataclasses.replace(IDLE, t=START + 2), True),
    (None, IDLE, False),  # the first scrape
    (IDLE, dataclasses.replace(IDLE, running=1, gen_tps=12.0), False),  # work came
    (IDLE, dataclasses.replace(IDLE, queued=2), False),
    (IDLE, dataclasses.replace(IDLE, asleep=True, sleep_level=1), False),  # gone to sleep
    (dataclasses.replace(IDLE, asleep=True, sleep_level=1), IDLE, False),  # woken
    (IDLE, dataclasses.replace(IDLE, counter_reset=True), False),  # restarted
])
def test_an_idle_servers_scrape_waits_unless_it_is_news(shown: MetricsSample | None,
                                                        new: MetricsSample, waits: bool) -> None:
    state = dataclasses.replace(READY, metrics=ServerMetrics(last=shown))
    assert ticks.can_wait([new], state) is waits
    assert ticks.routine(new) is (new.running == 0 and not new.queued and not new.counter_reset)


@given(now=st.floats(0, 1e6), interval=st.floats(0.01, 10), lead=st.floats(0, 0.5))
def test_the_grid_wait_lands_on_the_next_point_of_the_grid(now: float, interval: float,
                                                           lead: float) -> None:
    wait = grid_wait(now, interval, lead)
    assert min(ticks.MIN_WAIT_S, interval / 4) - 1e-9 <= wait
    assert wait <= interval + min(ticks.MIN_WAIT_S, interval / 4) + 1e-9
    phase = (now + wait + lead) % interval
    assert min(phase, interval - phase) < 1e-6 * max(1.0, now)


@given(started=st.floats(0, 1e6), interval=st.floats(0.01, 10), lead=st.floats(0, 0.5))
def test_a_periodic_step_comes_back_on_the_grid(started: float, interval: float,
                                                lead: float) -> None:
    """A sampler's next step: a point of the grid, ½ to 1½ intervals later; one that began on
    the grid comes back exactly an interval later."""
    due = ticks.grid_due(started, interval, lead)
    slack = 1e-6 * max(1.0, started)
    assert started + interval / 2 - slack <= due <= started + 1.5 * interval + slack
    phase = (due + lead) % interval
    assert min(phase, interval - phase) < slack
    assert abs(ticks.grid_due(due, interval, lead) - (due + interval)) < 2 * slack


async def test_the_ticks_fall_on_the_grid_the_log_is_read_on() -> None:
    """After the first, every 1 s tick comes at a point of the tail's read grid (``GRID_LEAD_S``
    before a multiple of the interval): a tick and the lines read there share one batch."""
    interval = 0.2
    session = Session([ScriptedSource([], hold=True)], tick_interval=interval,
                      batch_interval=0.0, clock=time.monotonic)
    loop = asyncio.get_running_loop()
    came: list[float] = []
    session.subscribe(lambda _s, evs: came.extend(loop.time() for e in evs if type(e) is Tick))
    runner = asyncio.create_task(session.run())
    await asyncio.sleep(1.1)
    session.stop()
    await asyncio.wait_for(runner, 2.0)
    assert len(came) >= 5
    for t in came[1:]:
        phase = (t + ticks.GRID_LEAD_S) % interval
        assert min(phase, interval - phase) < 0.03, came
