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
