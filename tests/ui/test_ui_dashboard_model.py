"""The dashboard's model beside the state (``ui/dashboard.py``): a batch's events reach the log
view in order, lines in one call per run between file events; GPU samples wait for the history."""

from __future__ import annotations

from collections.abc import Sequence

from eagle_tui.model.events import GpuSample, LogLine, LogOpened, LogPrefixCounted, LogRestarted
from eagle_tui.model.state import DashboardState, Gpus
from eagle_tui.ui.dashboard import DashboardModel


class Log:
    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def append(self, lines: Sequence[LogLine]) -> None:
        self.calls.append(("append", tuple(ln.lineno for ln in lines)))

    def add_separator(self, text: str, host: str = "") -> None:
        self.calls.append(("separator", text, host))

    def file_restarted(self, host: str) -> None:
        self.calls.append(("restarted", host))

    def file_event(self, ev: LogOpened | LogPrefixCounted) -> None:
        self.calls.append(("file", type(ev).__name__))


def test_a_batch_reaches_the_log_in_order_its_lines_in_runs() -> None:
    model, log = DashboardModel(100), Log()
    sample = GpuSample(1.0, "ok")
    model.route([LogLine(1, "a"), sample, LogLine(2, "b"), LogRestarted("truncated", "h"),
                 LogLine(3, "c"), LogPrefixCounted("/x.log", "", 10), LogLine(4, "d")], log)
    assert log.calls == [
        ("append", (1, 2)),
        ("separator", "──── ✂ log truncated: the file shrank, its lines start again at 1 ────",
         "h"),
        ("restarted", "h"),
        ("append", (3,)),
        ("file", "LogPrefixCounted"),
        ("append", (4,)),
    ]
    state = DashboardState(gpu=Gpus(sample))
    assert model.gpu_step(None, state)  # a first sample is a step: shown at once
    model.feed_gpus(state)
    assert model.gpu_history.last_recorded is sample
    assert not model.gpu_step(None, state)  # fed: no sample waits any more


def test_an_empty_batch_still_hands_the_log_one_call() -> None:
    model, log = DashboardModel(100), Log()
    model.route([], log)
    assert log.calls == [("append", ())]
