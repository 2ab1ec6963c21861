"""reduce() mutates a private per-batch copy for speed; these tests pin that it is still pure."""

from __future__ import annotations

import random

from eagle_tui.model.events import (
    CrashEvent,
    DecodeStats,
    Event,
    LineKind,
    LogLine,
    LogRestarted,
    MetricsSample,
    Phase,
    PhaseEvent,
    SpecStats,
    Tick,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.series import Series
from eagle_tui.model.state import DashboardState


def _stream(n: int) -> list[Event]:
    rnd = random.Random(7)
    evs: list[Event] = [PhaseEvent(Phase.INIT, 1), PhaseEvent(Phase.READY, 2)]
    for i in range(n):
        r = rnd.random()
        if r < 0.4:
            evs.append(DecodeStats(lineno=i + 3, gen_tps=rnd.uniform(50, 200),
                                   accept_len=rnd.uniform(1, 4), running=rnd.randint(0, 8)))
        elif r < 0.5:
            evs.append(SpecStats(lineno=i + 3, mean_accept_len=rnd.uniform(1, 4),
                                 per_position=(0.9, 0.5)))
        elif r < 0.6:
            evs.append(MetricsSample(t=1000.0 + i, engine="vllm", gen_tps=rnd.uniform(50, 200)))
        elif r < 0.62:
            evs.append(Tick(t=1000.0 + i))
        else:
            kind = LineKind.ERROR if rnd.random() < 0.01 else LineKind.PLAIN
            evs.append(LogLine(lineno=i + 3, text=f"line {i}", kind=kind))
    evs.append(CrashEvent("cuda_oom", n, "CUDA out of memory", "lower --mem-fraction-static"))
    return evs


def test_batched_equals_one_by_one() -> None:
    evs = _stream(3000)
    one = DashboardState()
    for ev in evs:
        one = reduce(one, [ev])
    for size in (7, 100, 5000):
        batched = DashboardState()
        for i in range(0, len(evs), size):
            batched = reduce(batched, evs[i : i + size])
        assert batched == one, size


def test_input_state_is_never_mutated() -> None:
    evs = _stream(200)
    before = reduce(DashboardState(), evs[:50])
    snapshot = (before.log.lines, before.stats.accept_len, before.log.recent_lines,
                before.startup.phase, before.startup.crash)
    after = reduce(before, evs[50:])
    assert after is not before
    assert (before.log.lines, before.stats.accept_len, before.log.recent_lines,
            before.startup.phase, before.startup.crash) == snapshot
    assert after.startup.crash is not None and before.startup.crash is None


def test_empty_batch_returns_same_object() -> None:
    s = reduce(DashboardState(), [PhaseEvent(Phase.INIT, 1)])
    assert reduce(s, []) is s


def test_restart_drops_buffered_points_of_the_same_batch() -> None:
    s = reduce(DashboardState(), [
        DecodeStats(lineno=1, gen_tps=10.0, accept_len=2.0),
        LogRestarted("truncated"),
        DecodeStats(lineno=1, gen_tps=20.0),
    ])
    assert s.stats.gen_tps.values() == [20.0]
    assert s.stats.accept_len.values() == []
    assert s.startup.restarts == 1


def test_series_extend_equals_repeated_append() -> None:
    rnd = random.Random(3)
    for maxlen in (1, 5, 50):
        a = Series(maxlen=maxlen)
        b = Series(maxlen=maxlen)
        for _ in range(20):
            pts = [(float(i), rnd.uniform(0, 10)) for i in range(rnd.randint(0, 12))]
            if pts and rnd.random() < 0.2:
                pts[0] = (0.0, float("nan"))
            for t, v in pts:
                a = a.append(t, v)
            b = b.extend(pts)
            assert a.points == b.points
            assert (a.ewma is None and b.ewma is None) or abs(a.ewma - b.ewma) < 1e-9  # type: ignore[operator]


def test_log_lines_around_a_restart_batch_like_one_by_one() -> None:
    evs: list[Event] = [LogLine(i, f"a{i}", LineKind.ERROR if i == 3 else LineKind.PLAIN)
                        for i in range(1, 30)]
    evs += [LogRestarted("truncated"), *(LogLine(i, f"b{i}") for i in range(1, 6))]
    one = DashboardState()
    for ev in evs:
        one = reduce(one, [ev])
    for size in (1, 4, 29, 30, 100):
        batched = DashboardState()
        for i in range(0, len(evs), size):
            batched = reduce(batched, evs[i : i + size])
        assert batched == one, size
    assert one.log.lines == 5
    assert [ln.text for ln in one.log.recent_lines] == [f"b{i}" for i in range(1, 6)]
    assert one.log.first_error_line is None
