"""A record file with an absurd event time (issue 17, item 6): ``t`` of 1e300 hung
``replay --speed`` (a sleep of 1e300 s) and showed a 300-digit elapsed time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from eagle_tui.model.events import Event, Tick
from eagle_tui.sources.replay import MAX_PAUSE_S, ReplayError, ReplaySource

HEADER = '{"format":"eagle-tui-record","version":1}'


async def _all(src: ReplaySource) -> tuple[list[Event], list[str]]:
    """Every event, retrying after each malformed line as the session does."""
    events: list[Event] = []
    errors: list[str] = []
    for _ in range(10):
        try:
            async for ev in src.events():
                events.append(ev)
            return events, errors
        except ReplayError as exc:
            errors.append(str(exc))
    raise AssertionError("did not finish")


@pytest.mark.parametrize("bad", ["1e300", "-5.0", "4102444801.0", "1" + "0" * 400])
async def test_out_of_range_times_are_malformed_lines(tmp_path: Path, bad: str) -> None:
    rec = tmp_path / "r.jsonl"
    rec.write_text("\n".join([HEADER, '{"type":"Tick","t":100.0}', f'{{"type":"Tick","t":{bad}}}',
                              '{"type":"Tick","t":101.0}']) + "\n")
    t0 = time.monotonic()
    events, errors = await _all(ReplaySource(rec, speed=1.0))
    assert time.monotonic() - t0 < 3.0
    assert events == [Tick(100.0), Tick(101.0)]
    assert len(errors) == 1 and ":3:" in errors[0]


async def test_a_long_gap_is_replayed_short(tmp_path: Path) -> None:
    rec = tmp_path / "r.jsonl"
    rec.write_text("\n".join([HEADER, '{"type":"Tick","t":100.0}',
                              '{"type":"Tick","t":4000000000.0}']) + "\n")
    t0 = time.monotonic()
    events, _ = await _all(ReplaySource(rec, speed=MAX_PAUSE_S * 20))
    assert len(events) == 2 and time.monotonic() - t0 < 1.0


@pytest.mark.parametrize("first", ['{"type":"NoSuchEvent","t":1.0}', '{"type":"Tick"',
                                   "[2026-12-01 10:00:00] server_args=ServerArgs(...)"])
async def test_a_file_whose_first_line_is_no_record_line_ends_the_replay(
        tmp_path: Path, first: str) -> None:
    """A raw log (or junk) replayed as a record: each of its lines used to fail in turn, one
    session backoff each (up to 30 s), so a headless replay of a log ran for hours. The first
    line decides: no record line, no replay; the replay ends at once, saying why."""
    rec = tmp_path / "r.jsonl"
    rec.write_text("\n".join([first, *['{"type":"Tick","t":100.0}'] * 3]) + "\n")
    src = ReplaySource(rec, kind="record")
    events, errors = await _all(src)
    assert events == [] and len(errors) == 1
    assert "not an eagle-tui record" in errors[0] and ":1" in errors[0]


async def test_a_bad_line_after_a_record_line_is_skipped_not_the_end(tmp_path: Path) -> None:
    rec = tmp_path / "r.jsonl"
    rec.write_text("\n".join(['{"type":"Tick","t":100.0}', "junk",
                              '{"type":"Tick","t":101.0}']) + "\n")
    events, errors = await _all(ReplaySource(rec, kind="record"))
    assert events == [Tick(100.0), Tick(101.0)]
    assert len(errors) == 1 and "not an eagle-tui record" not in errors[0]


async def test_damaged_lines_cost_one_report_a_run_and_the_rest_one_at_the_end(
        tmp_path: Path) -> None:
    """Each report is a session backoff (doubling while they come one after another): a block
    of damaged lines is one report, and after ``REPORTED_RUNS`` reports the rest are counted
    and reported once, at the end."""
    from eagle_tui.sources.replay import REPORTED_RUNS

    good = '{"type":"Tick","t":%d.0}'
    lines = [HEADER, good % 1, *["junk"] * 50, good % 2]
    for i in range(REPORTED_RUNS + 4):
        lines += ["junk", good % (3 + i)]
    rec = tmp_path / "r.jsonl"
    rec.write_text("\n".join(lines) + "\n")
    events, errors = await _all(ReplaySource(rec, kind="record"))
    assert events == [Tick(float(n)) for n in range(1, REPORTED_RUNS + 7)]
    assert len(errors) == REPORTED_RUNS + 1
    assert ":3:" in errors[0] and "with 49 more after it" in errors[0]
    assert "with 4 more damaged lines" in errors[-1]  # 7 single ones: 2 reported, 5 late
