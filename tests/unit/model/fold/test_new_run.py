"""A server restarted under a running dashboard is a new run in the state.

The finding (issue 13): killing the server and starting it again on the same log and port
under a running ``watch`` left the Startup pane on the old pid ("zombie") forever and counted
the new run's ready time from the first run. Now a new process after the old one's exit, and a
server's first line again in an appended log after that exit, start a new run: fresh phases,
pid, health and clock; the old run's summary is kept as ``previous``.
"""

from __future__ import annotations

import pytest

from eagle_tui.model.events import (
    DecodeStats,
    Event,
    HealthSample,
    LogLine,
    LogRestarted,
    Phase,
    PhaseEvent,
    PreviousRun,
    ProcessExited,
    ProcessSample,
    Tick,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.fold.restarts import STARTED_AGAIN
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.runsummary import previous_line, ready_seconds
from tests.support.paths import FIXTURES


def first_run() -> DashboardState:
    return reduce(DashboardState(), [
        Tick(100.0), ProcessSample(100.0, 11, "running", started=99.0),
        PhaseEvent(Phase.INIT, 1, "2026-12-01 10:00:00"), LogLine(1, "server_args=..."),
        Tick(172.0), PhaseEvent(Phase.READY, 9, "2026-12-01 10:01:12"),
        HealthSample("ready", 172.0),
        DecodeStats(12, accept_len=1.0, gen_tps=56.7), LogLine(12, "Decode batch"),
    ])


def test_a_new_process_after_the_exit_is_a_new_run() -> None:
    s = reduce(first_run(), [Tick(300.0), ProcessExited(300.0, 11, 137, 9),
                             ProcessSample(300.0, 11, "zombie")])
    assert s.live.process_exit is not None and s.live.process is not None
    s = reduce(s, [Tick(310.0), ProcessSample(310.0, 22, "running", started=305.0)])
    assert s.live.process is not None
    assert s.live.process.pid == 22
    assert s.live.process.status == "running"
    assert s.live.process_exit is None and s.live.health is None and not s.live.ever_ready_health
    assert s.clock.t_start == 305.0  # the new run's clock starts with its process
    assert s.startup.phases == ()  # nothing of the old run
    assert not s.startup.ready
    assert s.startup.previous is not None


def test_the_first_line_again_after_the_exit_restarts_the_phases() -> None:
    s = reduce(first_run(), [ProcessExited(300.0, 11, 137, 9)])
    s = reduce(s, [Tick(310.0), ProcessSample(310.0, 22, "running", started=305.0),
                   PhaseEvent(Phase.INIT, 20, "2026-12-01 10:05:05"), LogLine(20, "server_args")])
    assert [m.phase for m in s.startup.phases] == [Phase.INIT] and s.startup.phase is Phase.INIT
    assert s.log.lines == 20  # the same file goes on: line numbers too
    assert len(s.stats.accept_len) == 0 and s.live.process is not None and s.live.process.pid == 22
    assert s.startup.previous is not None and s.startup.previous.accept_len == 1.0
    s = reduce(s, [Tick(345.0), PhaseEvent(Phase.READY, 30, "2026-12-01 10:05:45")])
    assert ready_seconds(s) == 40.0  # from the new run's start, not from the first run's


def test_a_repeated_first_line_while_the_process_lives_is_the_same_run() -> None:
    s = reduce(first_run(), [PhaseEvent(Phase.INIT, 15, "2026-12-01 10:01:20")])
    assert s.startup.phase_mark(Phase.READY) is not None and s.startup.previous is None


def test_a_server_that_died_before_its_log_was_read_is_one_run() -> None:
    """A fast crash: the exit is seen first, then the whole log, whose own INIT lines (vLLM's
    "non-default args" then "Resolved architecture") are one run, not a restart."""
    s = reduce(DashboardState(), [Tick(100.0), ProcessSample(100.0, 11, "zombie"),
                                  ProcessExited(100.0, 11, 1)])
    s = reduce(s, [Tick(101.0), PhaseEvent(Phase.INIT, 2, "12-01 10:00:00"),
                   LogLine(2, "non-default args"), PhaseEvent(Phase.INIT, 3, "12-01 10:00:00"),
                   LogLine(3, "Resolved architecture: LlamaForCausalLM")])
    assert s.startup.restarts == 0 and s.startup.restart_t is None
    assert s.live.process_exit is not None  # the exit is this run's, kept


def test_a_truncated_log_after_the_exit_keeps_the_previous_run() -> None:
    s = reduce(first_run(), [ProcessExited(300.0, 11, 137, 9),
                             LogRestarted("truncated", t=301.0)])
    assert s.startup.phases == () and s.live.process_exit is None and s.startup.previous is not None


def test_previous_line() -> None:
    line = previous_line(PreviousRun("#1", 1.0, 56.7, 72.0))
    assert line == "previous run #1: accept 1.00, 56.7 tok/s, ready 1:12"
    assert previous_line(PreviousRun("", crash="cuda_oom")) == "previous run: crashed (cuda_oom)"


# ---------------------------------------------------------------- one run read behind its exit
RUN_LOGS = ("sglang-cpu/eagle3.log", "sglang-cpu/misconf.log", "vllm-cpu/server-eagle3.log",
            "vllm-cpu/server-eagle3-enginecore-killed.log")


def line_events(name: str, copies: int = 1) -> list[list[Event]]:
    """The events of each line of a recorded log (``copies``: the run appended again)."""
    raw = (FIXTURES / name).read_bytes().splitlines()
    parser = LogParser()
    return [parser.feed_line(line) for line in raw * copies]


def with_exit_after(per_line: list[list[Event]], k: int, sig: int = 15) -> DashboardState:
    """A watched run whose exit (by signal ``sig``) is seen when ``k`` of its lines were read;
    the rest after."""
    head = [ev for evs in per_line[:k] for ev in evs]
    tail = [ev for evs in per_line[k:] for ev in evs]
    s = reduce(DashboardState(), [Tick(100.0), ProcessSample(100.0, 11, "running"), *head])
    return reduce(s, [Tick(200.0), ProcessSample(200.0, 11, "zombie"),
                      ProcessExited(200.0, 11, 128 + sig, sig), *tail])


@pytest.mark.parametrize("sig", [15, 9], ids=["SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("name", RUN_LOGS)
def test_one_run_read_behind_its_exit_stays_one_run(name: str, sig: int) -> None:
    """Killed during start-up with its log read behind: the same run's later INIT lines
    (its ranks' "Init parallel", vLLM's architecture line) are read after the exit. Every
    point of the exit in the whole log: one run, the exit kept (SIGKILL's crash, said by the
    exit itself, included)."""
    per_line = line_events(name)
    for k in range(1, len(per_line)):
        s = with_exit_after(per_line, k, sig)
        assert s.startup.restarts == 0, (name, k)
        assert s.live.process_exit is not None, (name, k)


@pytest.mark.parametrize("name", RUN_LOGS)
def test_the_run_appended_again_after_its_exit_is_a_new_run(name: str) -> None:
    """The same server started again on the log (``>>``) after the exit: a new run, its own
    phases from its own first line."""
    one = line_events(name)
    both = line_events(name, copies=2)
    s = with_exit_after(both, len(one))
    assert s.startup.restarts == 1 and s.live.process_exit is None
    first_init = next(m for m in s.startup.phases if m.phase is Phase.INIT)
    assert first_init.lineno > len(one)


# ------------------------------------------------------- a log that holds runs one after another
APPENDED = [("samples/sglang-oom-cuda-graph.log", "sglang-cpu/eagle3.log"),
            ("vllm-cpu/server-eagle3-enginecore-killed.log", "vllm-cpu/server-eagle3.log"),
            ("vllm-cpu/server-eagle3.log", "vllm-cpu/server-ngram.log")]


def fold_lines(names: tuple[str, ...], *, live: bool, process: bool = False) -> DashboardState:
    """The logs one after another in one file (``nohup ... >>``), folded line by line: ``live``
    as the dashboard folds them (its clock ticks), else as ``report`` does; ``process``: a
    process source watches the (old) server, alive."""
    parser = LogParser()
    s = DashboardState()
    if live:
        s = reduce(s, [Tick(100.0)])
    if process:
        s = reduce(s, [ProcessSample(100.0, 11, "running")])
    for name in names:
        for line in (FIXTURES / name).read_bytes().splitlines():
            s = reduce(s, parser.feed_line(line))
    return s


@pytest.mark.parametrize("names", APPENDED, ids=lambda n: f"{n[0]} then {n[1]}")
def test_a_server_started_again_into_its_log_is_a_new_run_on_screen(names: tuple[str, str]) -> None:
    """``watch --log nohup.out``: an earlier run that crashed (or served) before the server was
    started again into the same file. Its crash was shown as the new run's, for as long as it
    was watched; the new run's first line now starts a new run, the old one its ``previous``."""
    one = fold_lines(names[:1], live=True)
    assert one.startup.crash is not None or one.startup.ready
    s = fold_lines(names, live=True)
    assert s.startup.restarts == 1 and s.startup.crash is None, s.startup.crash
    assert s.startup.ready and s.startup.previous is not None
    first_init = next(m for m in s.startup.phases if m.phase is Phase.INIT)
    assert first_init.lineno > sum(1 for _ in (FIXTURES / names[0]).open("rb"))


@pytest.mark.parametrize("names", APPENDED[:2], ids=lambda n: n[0])
def test_report_keeps_the_appended_runs_as_they_were(names: tuple[str, str]) -> None:
    """``report`` (no clock) folds a file's runs together, as it always has."""
    s = fold_lines(names, live=False)
    assert s.startup.restarts == 0 and s.startup.crash is not None


@pytest.mark.parametrize("names", APPENDED, ids=lambda n: f"{n[0]} then {n[1]}")
def test_a_watch_of_the_new_server_shows_its_run(names: tuple[str, str]) -> None:
    """``watch --log nohup.out`` begun after the relaunch: the process it finds writing the log
    is the new server, alive, and no exit of the old one will ever come. The old run's crash
    stayed on screen for good (it waited for that exit); the new server's first line after
    the end now begins its run."""
    s = fold_lines(names, live=True, process=True)
    assert s.startup.restarts == 1 and s.startup.crash is None and s.startup.ready
    assert s.startup.restart_reason == STARTED_AGAIN
    assert s.live.process is not None and s.live.process.pid == 11


def test_the_new_process_found_after_the_log_began_its_run_begins_no_other() -> None:
    """The old server's process still thought up when the new server's first line is read (the
    watcher samples every few seconds): the line begins the run, and the new process's first
    sample then joins it instead of beginning another (which dropped the phases just read)."""
    old, new = (FIXTURES / n for n in APPENDED[0])
    parser = LogParser()
    s = reduce(DashboardState(), [Tick(100.0), ProcessSample(100.0, 11, "running")])
    for line in old.read_bytes().splitlines():
        s = reduce(s, parser.feed_line(line))
    s = reduce(s, [Tick(110.0)])
    for line in new.read_bytes().splitlines()[:60]:
        s = reduce(s, parser.feed_line(line))
    assert s.startup.restarts == 1 and s.startup.phase_mark(Phase.INIT) is not None
    phases = s.startup.phases
    s = reduce(s, [Tick(111.0), ProcessSample(111.0, 22, "running", started=109.0)])
    assert s.startup.restarts == 1 and s.startup.phases == phases
    assert s.live.process is not None and s.live.process.pid == 22


RELAUNCHED = [*APPENDED, ("sglang-cpu/misconf.log", "sglang-cpu/eagle3.log"),
              ("vllm-cpu/server-ngram.log", "vllm-cpu/server-eagle3.log")]


@pytest.mark.parametrize("names", RELAUNCHED, ids=lambda n: f"{n[0]} then {n[1]}")
def test_the_new_run_is_read_as_if_its_log_were_alone(names: tuple[str, str]) -> None:
    """A server started again into its log after a misconfigured run (the fix's relaunch by
    hand, ``nohup ... >>``): the new run's engine, settings and models are its own. The
    engine parser kept the old run's roles (the new target's load read as the draft's, its
    model dropped as seen), the state lost the engine, and vLLM's settings, said on the same
    line as its run's start, went to the old run."""
    alone, both = fold_lines(names[1:], live=True), fold_lines(names, live=True)
    assert both.startup.restarts == 1
    assert both.startup.engine == alone.startup.engine != "unknown"
    assert both.config.spec == alone.config.spec
    assert [(m.role, m.architecture) for m in both.config.models] == \
        [(m.role, m.architecture) for m in alone.config.models]
    assert [a.kind for a in both.alerts] == [a.kind for a in alone.alerts]
