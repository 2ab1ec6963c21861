"""What the dashboard keeps beside the reduced state, and where a batch's events go.

The state holds no log text and only the newest GPU sample (``model/state``); the log buffer,
the GPU history and the bench windows found in the log are mutable structures fed with the
session's events, owned here rather than by the app, which only renders. Plain Python: the log
view is reached through :class:`LogSink`, so the routing is tested without a terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from eagle_tui.model.bench.windows import WindowTracker
from eagle_tui.model.buffers.gpuhistory import GpuHistory, memory_moved
from eagle_tui.model.buffers.logbuffer import LogBuffer
from eagle_tui.model.events import (
    Event,
    GpuSample,
    LogLine,
    LogOpened,
    LogPrefixCounted,
    LogRestarted,
)
from eagle_tui.model.state import DashboardState
from eagle_tui.ui.safety import inert

# the log view's separator for each way a followed file starts over (LogRestarted.reason)
RESTART_SEPARATOR = {"truncated": "✂ log truncated: the file shrank, its lines start again at 1",
                     "replaced": "↻ log replaced: a new file at the path"}


class LogSink(Protocol):
    """The log view, as the routing uses it."""

    def append(self, lines: Sequence[LogLine]) -> None: ...
    def add_separator(self, text: str, host: str = "") -> None: ...
    def file_restarted(self, host: str) -> None: ...
    def file_event(self, ev: LogOpened | LogPrefixCounted) -> None: ...


class DashboardModel:
    """The log buffer, the GPU history and the bench windows; routes each batch's events."""

    def __init__(self, max_lines: int) -> None:
        self.log_buffer = LogBuffer(max_lines)
        self.gpu_history = GpuHistory()
        self.windows = WindowTracker()  # bench windows found in the log, shown as separators
        self._gpu_samples: list[GpuSample] = []  # since the GPU history was last fed
        self._lines: list[LogLine] = []  # a batch's lines not yet handed to the log
        self._routes: dict[type, Callable[[Any, LogSink], None]] = {  # by the event's type
            LogLine: self._line,  # (``route`` keeps these inline)
            GpuSample: self._sample,
            LogRestarted: self._restarted,
            LogOpened: self._file_event,
            LogPrefixCounted: self._file_event,
        }

    def route(self, events: Sequence[Event], log: LogSink) -> None:
        """Hand a batch to the log (its lines in one call per run between file events) and keep
        its GPU samples for the history; a bench window's start or end becomes a separator."""
        routes, lines = self._routes, self._lines
        for ev in events:
            if isinstance(ev, LogLine):  # most of a busy batch: kept without a call
                lines.append(ev)
            elif (handler := routes.get(type(ev))) is not None:
                handler(ev, log)
                lines = self._lines  # the handler may have handed the lines to the log
        self._flush_lines(log)
        for banner in self.windows.banners(events):
            log.add_separator(banner)

    def _flush_lines(self, log: LogSink) -> None:
        lines, self._lines = self._lines, []
        log.append(lines)

    def _line(self, ev: LogLine, _log: LogSink) -> None:
        self._lines.append(ev)

    def _sample(self, ev: GpuSample, _log: LogSink) -> None:
        self._gpu_samples.append(ev)

    def _restarted(self, ev: LogRestarted, log: LogSink) -> None:
        self._flush_lines(log)
        what = RESTART_SEPARATOR.get(ev.reason, f"log restarted ({inert(ev.reason)})")
        log.add_separator(f"──── {what} ────", ev.host)
        log.file_restarted(ev.host)

    def _file_event(self, ev: LogOpened | LogPrefixCounted, log: LogSink) -> None:
        self._flush_lines(log)  # the tail's lines before it keep their numbers
        log.file_event(ev)

    def gpu_step(self, shown: GpuSample | None, state: DashboardState) -> bool:
        """Whether this batch brought a GPU memory step to show now rather than at the next
        pane update (an allocation, a process's memory freed)."""
        return bool(self._gpu_samples) and memory_moved(shown, state.gpu.sample)

    def feed_gpus(self, state: DashboardState) -> None:
        """Feed the GPU history the samples since the last feed (before the pane draws)."""
        samples, self._gpu_samples = self._gpu_samples, []
        self.gpu_history.update(state.gpu.sample, samples)


__all__ = ["DashboardModel", "LogSink"]
