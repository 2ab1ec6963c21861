"""Headless ``wait``/``watch`` (issue 12): one line per change, the real elapsed time, a
mistyped ``--pid`` as a usage error, and what is inferred or what a silent startup does."""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import time

import pytest

from eagle_tui.assembly.spec import DashboardSpec, SshSpec
from eagle_tui.commands.wait import EXIT_USAGE, check_pid
from eagle_tui.commands.wait import run as wait_run
from eagle_tui.errors import UsageError
from eagle_tui.headless.lines import diagnosis_lines, progress_dict, progress_line
from eagle_tui.headless.progress import ProgressPrinter as Progress
from eagle_tui.model.events import DecodeStats, Phase, PhaseEvent, ProcessSample, Tick
from eagle_tui.model.events import Progress as Prog
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState


async def test_one_line_per_change_not_per_tp_shard() -> None:
    out = io.StringIO()
    p = Progress(out, as_json=False, has_url=False, decide=False)
    s = reduce(DashboardState(), [Tick(100.0), PhaseEvent(Phase.LOADING_WEIGHTS, 1)])
    p.on_batch(s, [])
    # 8 TP ranks, each counting its shards: the state's progress goes back and forth
    for rank in range(8):
        for done in range(1, 5):
            s = reduce(s, [Prog("shards", done, 4, 10 + rank * 4 + done)])
            p.on_batch(s, [])
    s = reduce(s, [PhaseEvent(Phase.WEIGHTS_LOADED, 50)])
    p.on_batch(s, [])
    assert len(out.getvalue().splitlines()) == 2


async def test_a_crash_that_vanished_while_settling_does_not_silence_the_next() -> None:
    """A crash, then (before its settle time ends) a state with no verdict, such as a
    restarted container's log read anew: a crash seen after that still decides."""
    from eagle_tui.headless.progress import CRASH_SETTLE_S
    from eagle_tui.model.events import CrashEvent

    out = io.StringIO()
    p = Progress(out, as_json=True, has_url=False)
    start = reduce(DashboardState(), [Tick(100.0), PhaseEvent(Phase.LOADING_WEIGHTS, 1)])
    crashed = reduce(start, [CrashEvent("other_traceback", 2, "RuntimeError: boom", "hint")])
    p.on_batch(crashed, [])
    p.on_batch(start, [])  # gone before the settle
    await asyncio.sleep(CRASH_SETTLE_S + 0.2)
    assert p.outcome is None
    p.on_batch(crashed, [])
    await asyncio.sleep(CRASH_SETTLE_S + 0.2)
    assert p.outcome is not None and p.outcome[0] == "crashed", out.getvalue()[-500:]


async def test_result_elapsed_is_the_wall_time_waited() -> None:
    out = io.StringIO()
    p = Progress(out, as_json=False, has_url=False, t0=time.monotonic() - 10.7)
    # the state's clock saw 9.4 s of events: the user waited 10.7 s
    s = reduce(DashboardState(), [Tick(100.0), Tick(109.4)])
    p.finish(s, "timeout", "no answer within 10 s", 3)
    assert "TIMEOUT after 10.7 s" in out.getvalue()
    assert diagnosis_lines(s, "timeout", "x")[0].startswith("TIMEOUT after 9.4 s")


def test_mistyped_pid_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    gone = 999_999_999
    while os.path.exists(f"/proc/{gone}"):
        gone -= 1
    with pytest.raises(UsageError, match="no such process"):
        check_pid(DashboardSpec(pid=gone))
    check_pid(DashboardSpec(pid=os.getpid()))
    check_pid(DashboardSpec(pid=gone, ssh=SshSpec(dests=("host",))))  # remote: checked there
    args = argparse.Namespace(pid=gone, ssh=None, log=None, url=None, record=None, timeout=5.0,
                              json=False, fail_on=None)
    assert wait_run(args) == EXIT_USAGE
    assert "no such process" in capsys.readouterr().err


def test_progress_says_what_is_inferred_and_what_a_silent_startup_does() -> None:
    s = reduce(DashboardState(), [Tick(1.0), DecodeStats(4, None, 100.0, 2.0)])
    assert "serving (inferred from a decode stats line)" in progress_line(s)
    assert progress_dict(s)["inferred"] == {"phase": "a decode stats line", "engine": None}
    quiet = reduce(DashboardState(), [Tick(1.0), PhaseEvent(Phase.LOADING_WEIGHTS, 1),
                                      ProcessSample(60.0, 5, "running", cpu_percent=400.0)])
    assert "compiling: CPU 400%" in progress_line(quiet)
    assert progress_dict(quiet)["activity"]["kind"] == "compiling"


def test_progress_line_names_a_stuck_collective() -> None:
    from eagle_tui.model.events import EngineDetected, GpuInfo, GpuSample, LogLine

    busy = (GpuInfo(0, util_gpu=100.0),)
    s = reduce(DashboardState(), [Tick(1000.0), EngineDetected("vllm"),
                                  PhaseEvent(Phase.READY, 1), LogLine(2, "x"),
                                  GpuSample(1001.0, "ok", busy), GpuSample(1100.0, "ok", busy)])
    line = progress_line(s)
    assert "STUCK COLLECTIVE: GPUs busy, no tokens for 99 s, watchdog in 501 s" in line


async def test_remote_pid_typo_is_a_usage_error() -> None:
    from eagle_tui.commands.wait import check_remote_pid
    from eagle_tui.transport.local import LocalTransport

    class Remote(LocalTransport):  # runs the check locally, named like a host
        @property
        def host(self) -> str:
            return "gpu-node"

    gone = 999_999_999
    while os.path.exists(f"/proc/{gone}"):
        gone -= 1
    with pytest.raises(UsageError, match="no such process on gpu-node"):
        await check_remote_pid(Remote(), gone)
    await check_remote_pid(Remote(), os.getpid())
