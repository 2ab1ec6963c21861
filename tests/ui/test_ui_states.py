"""The status line cannot lie: idle, stale, dead and restarted servers on the real dashboard
(Pilot), from the recorded real vLLM run (tests/fixtures/vllm-cpu/server-eagle3.log)."""

from __future__ import annotations

from pathlib import Path

from eagle_tui.model.events import (
    Baseline,
    DecodeStats,
    Event,
    HealthSample,
    ProcessExited,
    ProcessSample,
    SpecStats,
    Tick,
)
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.ui.textual_private import screen_text
from tests.support.ui_helpers import make_app, settle

LOG = (Path(__file__).resolve().parents[1] / "fixtures" / "vllm-cpu" /
       "server-eagle3.log").read_text().splitlines()
T0 = 1_796_000_000.0
LAST_BUSY = max(i for i, line in enumerate(LOG) if "SpecDecoding metrics" in line)


def events(lines: list[str]) -> tuple[list[Event], float]:
    parser, out, t = LogParser(), [Tick(T0), Baseline(500.0), ProcessSample(T0, 330, "running")], T0
    for line in lines:
        evs = parser.feed_line(line)
        if any(isinstance(e, DecodeStats | SpecStats) for e in evs):
            t += 2.0
        out += [Tick(t), *evs]
    return out, t


async def status_of(evs: list[Event]) -> str:
    app = make_app(evs)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        return screen_text(app).splitlines()[0]


async def test_busy_server_reads_serving_with_current_numbers() -> None:
    evs, t = events(LOG[: LAST_BUSY + 1])
    line = await status_of([*evs, HealthSample("ready", t, 200, 0.001)])
    assert "SERVING" in line and "1023.3 tok/s" in line and "last" not in line


async def test_idle_server_reads_idle_with_its_last_figures() -> None:
    evs, t = events(LOG)
    line = await status_of([*evs, HealthSample("ready", t, 200, 0.001)])
    assert "IDLE" in line and "SERVING" not in line
    assert "last 1023.3 tok/s" in line and "accept 3.53" in line
    assert "0.0 tok/s" not in line and "accept 1.00" not in line


async def test_dead_server_does_not_read_serving() -> None:
    evs, t = events(LOG[: LAST_BUSY + 1])
    line = await status_of([*evs, ProcessExited(t + 1, 330, None, 15), Tick(t + 2)])
    assert "DEAD" in line and "SERVING" not in line
    assert "signal 15" in line and "last 1023.3 tok/s" in line
    # SIGKILL says more than "dead": the crash it most often is (the kernel's OOM killer)
    killed = await status_of([*evs, ProcessExited(t + 1, 330, None, 9), Tick(t + 2)])
    assert "CRASHED: killed" in killed and "SERVING" not in killed


async def test_silent_server_reads_no_data_with_its_age() -> None:
    evs, t = events(LOG[: LAST_BUSY + 1])
    line = await status_of([*evs, Tick(t + 45)])
    assert "no data 45.0s" in line and "old 1023.3 tok/s" in line


async def test_new_process_reads_restarted_with_fresh_numbers() -> None:
    evs, t = events(LOG[: LAST_BUSY + 1])
    line = await status_of([*evs, ProcessSample(t + 3, 4242, "running"), Tick(t + 3)])
    assert "↻ restarted" in line and "tok/s" not in line and "SERVING" not in line
