"""A log opened at its end (issue 15): the tail from a line start near the end, a background
summary of the lines before it, merged by the session into what a full parse shows."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.headless.progress import verdict
from eagle_tui.model.events import (
    Event,
    LogLine,
    LogOpened,
    LogPrefixCounted,
    SummaryProgress,
)
from eagle_tui.model.fold.prefix import PrefixSummary, absolute, line_text, rebase, summary_text
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState, LogCounters
from eagle_tui.model.views import figures
from eagle_tui.report.prefix import count_lines, fold_prefix
from eagle_tui.session import Session
from eagle_tui.sources.logtail import LogTail
from eagle_tui.sources.replay import ReplaySource
from eagle_tui.transport.local import LocalTransport
from tests.support.bench import bench_module
from tests.unit.model.fold.test_new_run import APPENDED  # the recorded runs, appended

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LOGS = sorted([*FIXTURES.glob("samples/*.log"), *FIXTURES.glob("sglang-cpu/*.log"),
               *FIXTURES.glob("vllm-cpu/*.log"), *FIXTURES.glob("wait/*.log")])


def in_process(opened: LogOpened) -> AsyncIterator[Event | PrefixSummary]:
    """The child's fold, run here (the same functions: ``report.prefix``)."""

    async def gen() -> AsyncIterator[Event | PrefixSummary]:
        def fold() -> PrefixSummary:
            with open(opened.path, "rb") as f:
                return fold_prefix(f, opened.start, workers=1)

        yield SummaryProgress(opened.path, opened.host, 0, opened.start)
        yield await asyncio.to_thread(fold)

    return gen()


async def _full(path: Path) -> DashboardState:
    return await Session([ReplaySource(path, kind="log")], tick_interval=None).run()


async def _split(path: Path, from_end: int, summarizer: Any = in_process) -> DashboardState:
    src = ReplaySource(path, kind="log", from_end=from_end)
    return await Session([src], tick_interval=None, summarizer=summarizer).run()


def shown(st: DashboardState) -> dict[str, Any]:
    """What the dashboard shows of a state, with the file's own line numbers."""
    base = st.log.lineno_base
    assert base is not None
    crash = st.startup.crash
    return {
        "engine": st.startup.engine,
        "phase": st.startup.phase,
        "phases": [(m.phase, m.lineno + base, m.time, m.inferred) for m in st.startup.phases],
        "crash": None if crash is None else (crash.kind, crash.lineno + base, crash.message),
        "spec": st.config.spec,
        "dims": st.config.hidden_dims,
        "models": [(m.role, m.architecture) for m in st.config.models],
        "alerts": [(a.kind, a.severity, a.message) for a in st.alerts],
        "accept_len": st.stats.accept_len.values(),
        "gen_tps": st.stats.gen_tps.values(),
        "tok_s": figures.tok_s(st).value,
        "current_accept_len": figures.accept_len(st).value,
        "lines": st.log.lines + base,
        "holds": [(h.what, h.lineno + base, h.detail) for h in st.holds.lines],
    }


@pytest.mark.parametrize("path", LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_split_equals_full_parse_on_fixtures(path: Path) -> None:
    full = asyncio.run(_full(path))
    size = path.stat().st_size
    splits = 0
    for from_end in sorted({size // 2, size // 5, size * 4 // 5, 4096, 1024}):
        if not 0 < from_end < size:
            continue
        split = asyncio.run(_split(path, from_end))
        if split.log.log_start == 0:  # no line starts in the last ``from_end`` bytes
            continue
        splits += 1
        assert split.log.summary is not None and split.log.summary.finished
        assert shown(split) == shown(full), from_end
    if not splits:
        pytest.skip("no line starts in the end of so small a log")


def test_split_equals_full_parse_on_a_generated_log(tmp_path: Path) -> None:
    bench_report = bench_module("bench_report")

    log = tmp_path / "200k.log"
    bench_report.generate(log, 200_000)
    full = asyncio.run(_full(log))
    split = asyncio.run(_split(log, 512 << 10))
    assert shown(split) == shown(full)
    assert len(split.stats.accept_len) == len(full.stats.accept_len) == 600


def test_logtail_opens_at_a_line_start_near_the_end(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    log.write_bytes(b"".join(b"line %d\n" % i for i in range(1, 5001)))
    size = log.stat().st_size

    async def go() -> list[Event]:
        tail = LogTail(LocalTransport(), str(log), from_end=1000, caught_up_gap=0.01)
        out: list[Event] = []
        async for evs in tail.events():
            out.extend(evs if isinstance(evs, list) else [evs])
            if any(type(e) is LogLine for e in out):
                break
        return out

    events = asyncio.run(go())
    opened = events[0]
    assert isinstance(opened, LogOpened) and opened.size == size
    data = log.read_bytes()
    assert size - 1000 <= opened.start < size and data[opened.start - 1] == 0x0A
    lines = [e for e in events if type(e) is LogLine]
    before = count_lines_of(data[: opened.start])
    assert lines[0].lineno == 1 and lines[0].text == f"line {before + 1}"
    assert lines[-1].text == "line 5000"


def count_lines_of(data: bytes) -> int:
    return data.count(b"\n")


def test_a_small_log_is_read_whole(tmp_path: Path) -> None:
    log = tmp_path / "small.log"
    log.write_bytes(b"a\nb\n")

    async def go() -> list[Event]:
        tail = LogTail(LocalTransport(), str(log), from_end=1000, caught_up_gap=0.01)
        async for evs in tail.events():
            return evs if isinstance(evs, list) else [evs]
        return []

    events = asyncio.run(go())
    assert not any(type(e) is LogOpened for e in events)
    assert [e.lineno for e in events if type(e) is LogLine] == [1, 2]


def test_count_lines(tmp_path: Path) -> None:
    log = tmp_path / "n.log"
    log.write_bytes(b"x\n" * 1000 + b"tail")
    with log.open("rb") as f:
        assert count_lines(f.fileno(), 2000) == 1000
        assert count_lines(f.fileno(), 1999) == 999


def test_line_numbers_before_and_after_the_count() -> None:
    st = reduce(DashboardState(), [LogOpened("l", "", 100, 200)])
    assert st.log.lineno_base is None and line_text(7, st.log.lineno_base) == "line ~7"
    st = reduce(st, [LogPrefixCounted("l", "", 40)])
    assert st.log.lineno_base == 40 and line_text(7, 40) == "line 47" and absolute(7, 40) == 47
    assert reduce(DashboardState(), [LogOpened("l", "", 0, 5)]).log.lineno_base == 0


def test_the_verdict_waits_for_the_summary() -> None:
    done = asyncio.run(_full(FIXTURES / "wait" / "sglang-oom-cuda-graph.log"))
    assert verdict(done, has_url=False) is not None
    waiting = reduce(done, [LogOpened("l", "", 100, 200)])
    assert verdict(waiting, has_url=False) is None
    assert summary_text(waiting) == "summarizing the earlier lines"
    going = reduce(waiting, [SummaryProgress("l", "", 43, 100, 7, 1.23)])
    assert summary_text(going) == "summarizing 43 % · 1.2 s left"
    over = reduce(going, [SummaryProgress("l", "", 100, 100, 9, 0.0, True)])
    assert verdict(over, has_url=False) == verdict(done, has_url=False)
    assert summary_text(over) is None
    late = reduce(over, [SummaryProgress("l", "", 99, 100, 9, 0.1)])  # after the merge
    assert late.log.summary == over.log.summary


def test_a_crash_before_the_tail_is_reported(tmp_path: Path) -> None:
    crashed = (FIXTURES / "wait" / "sglang-oom-cuda-graph.log").read_bytes()
    log = tmp_path / "crash-then-more.log"
    log.write_bytes(crashed + b"".join(b"[2025-01-01 00:00:00] noise %d\n" % i
                                       for i in range(3000)))
    full = asyncio.run(_full(log))
    split = asyncio.run(_split(log, 8192))
    assert full.startup.crash is not None and split.startup.crash is not None
    assert shown(split)["crash"] == shown(full)["crash"]
    assert split.log.log_start > len(crashed)


def test_the_real_child_process(tmp_path: Path) -> None:
    """The summary through ``python -m eagle_tui.report.prefix`` (what the dashboard runs)."""
    from eagle_tui.sources.prefix import PrefixSummarizer

    path = FIXTURES / "vllm-cpu" / "server-eagle3.log"
    full = asyncio.run(_full(path))
    split = asyncio.run(_split(path, path.stat().st_size // 3,
                               PrefixSummarizer(LocalTransport()).summarize))
    assert split.log.summary is not None
    assert split.log.summary.finished
    assert not split.log.summary.error
    assert shown(split) == shown(full)


def test_a_failing_child_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eagle_tui.sources import prefix

    monkeypatch.setattr(prefix, "MODULE", "eagle_tui.no_such_module")
    path = FIXTURES / "vllm-cpu" / "server-eagle3.log"
    split = asyncio.run(_split(path, 2000, prefix.PrefixSummarizer(LocalTransport()).summarize))
    assert split.log.summary is not None and split.log.summary.finished
    assert "No module named" in split.log.summary.error
    assert summary_text(split) is not None and "not summarized" in str(summary_text(split))


def test_the_merge_is_not_done_past_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from eagle_tui.model.fold import prefix

    monkeypatch.setattr(prefix, "RETAIN_BYTES", 100)
    path = FIXTURES / "vllm-cpu" / "server-eagle3.log"
    split = asyncio.run(_split(path, path.stat().st_size // 2))
    assert split.log.summary is not None and "not merged" in split.log.summary.error
    assert split.log.lineno_base is not None  # the count is still right


def test_rebase_shifts_line_numbers_and_stamps_points() -> None:
    full = asyncio.run(_full(FIXTURES / "vllm-cpu" / "server-eagle3.log"))
    moved = rebase(full, 10, 123.0)
    assert [m.lineno for m in moved.startup.phases] == [m.lineno - 10 for m in full.startup.phases]
    assert moved.log.lines == full.log.lines - 10
    # a replay has no clock: its points are unstamped (t = 0), the open's time stamps them
    assert full.stats.accept_len.points and all(t == 0.0 for t, _ in full.stats.accept_len.points)
    assert [v for _, v in moved.stats.accept_len.points] == full.stats.accept_len.values()
    assert all(t == 123.0 for t, _ in moved.stats.accept_len.points)


def test_kept_stops_at_a_restart_and_for_a_log_read_whole() -> None:
    from eagle_tui.model.events import LogRestarted, Tick
    from eagle_tui.model.fold.prefix import Kept

    whole = Kept()
    assert whole.add([Tick(1.0), LogLine(1, "a")]) is None and whole.events is None
    k = Kept()
    opened = LogOpened("l", "", 10, 20)
    assert k.add([Tick(1.0), opened, LogLine(1, "a")]) is opened
    assert k.add([LogLine(2, "b")]) is None and k.events is not None and len(k.events) == 4
    k.add([LogRestarted("truncated")])
    summary = PrefixSummary(DashboardState(log=LogCounters(lines=3)), 3)
    assert k.merge(summary, None) == (None, [])  # another file: no word of the old summary
    k = Kept()
    k.add([opened])
    state, ends = k.merge(summary, None)
    assert state is not None and state.log.lineno_base == 3 and state.log.summary == ends[1]
    assert state.log.summary is not None
    assert state.log.summary.finished
    assert not state.log.summary.error


def test_split_keeps_the_prefix_s_hold_lines_with_the_file_s_numbers(tmp_path: Path) -> None:
    """A record with its own ``lines`` (the holds' log lines) in the part before the tail: the
    merge shifts their numbers like every other line number (and merges at all)."""
    from tests.unit.model.holds.test_holds import V032_SLEEP, V032_WAKE

    real = (FIXTURES / "vllm-cpu" / "server-eagle3.log").read_text().splitlines()
    log = tmp_path / "held.log"
    half = len(real) // 2
    log.write_text("\n".join([*real[:half], *V032_SLEEP, *V032_WAKE, *real[half:]]) + "\n")
    full = asyncio.run(_full(log))
    assert full.holds.lines
    split = asyncio.run(_split(log, len("\n".join(real[half:])) // 2))
    assert split.log.summary is not None and split.log.summary.finished
    assert shown(split) == shown(full)


# ------------------------------------------------ a log a server was started into again (>>)
async def _live(path: Path) -> DashboardState:
    """The whole file read by a live view (its clock ticks: ``fold.restarts.after_an_end``)."""
    return await Session([ReplaySource(path, kind="log")], tick_interval=0.01).run()


@pytest.mark.parametrize("names", APPENDED, ids=lambda n: f"{n[0]} then {n[1]}")
def test_a_log_opened_at_its_end_shows_its_last_run(names: tuple[str, str],
                                                    tmp_path: Path) -> None:
    """``watch --log nohup.out`` of a big file that holds an earlier run (a crash, or a run
    that served) before the server was started into it again: the background summary of the
    lines before the tail folded them as ``report`` does, runs together, and the earlier run's
    CUDA OOM was shown as the serving run's crash. Wherever the tail begins (in the old run,
    at the new run's first lines, before or after its first stats line, deep in it), the
    dashboard shows what a live read of the whole file shows: the last run, one restart."""
    old, new = ((FIXTURES / n).read_bytes() for n in names)
    # the new run goes on with lines the tail alone holds (its own last stats lines again)
    log = tmp_path / "nohup.out"
    log.write_bytes(old + new + b"".join(new.splitlines(keepends=True)[-40:]) * 20)
    full = asyncio.run(_live(log))
    assert full.startup.restarts == 1 and full.startup.crash is None and full.startup.ready
    size = log.stat().st_size
    first = len(old) + new.index(b"\n") + 1  # the new run's second line
    stats = len(old) + new.index(b"Decode batch" if b"Decode batch" in new else b"throughput")
    for start in sorted({len(old) // 2, first, stats - 1, stats + 300, size // 2, size - 4096}):
        split = asyncio.run(_split(log, size - start))
        assert split.log.log_start > 0, start
        assert shown(split) == shown(full), start
        assert split.startup.restarts == 1, start
        assert split.startup.previous is not None, start
