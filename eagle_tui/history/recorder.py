"""Keep a run's row in the history up to date while it is watched.

A session subscriber: at every change of phase, readiness or crash, and every ``every``
seconds otherwise, the run's summary (:func:`eagle_tui.model.views.runsummary.summarize`) is
written to its row, so a dashboard closed (or a server killed) at any moment still leaves
the phases, the time to ready and the figures in the history. Writes are small and rare
(one short SQLite transaction); a history that stops working is reported once and then left
alone — watching never fails because of it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from eagle_tui.console import warn
from eagle_tui.history.store import HistoryError, RunStore
from eagle_tui.model.boundary.termtext import inert_lines
from eagle_tui.model.events import Event
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.runsummary import summarize

EVERY_S = 5.0


class HistoryRecorder:
    """Writes ``summarize(state)`` into run ``run_id`` on changes and every ``every`` s."""

    def __init__(self, store: RunStore, run_id: int, *, every: float = EVERY_S,
                 clock: Callable[[], float] = time.monotonic, err: TextIO | None = None,
                 owns_start: bool = True) -> None:
        self.store = store
        self.run_id = run_id
        # the observer that started the run (launch, a relaunch) records its startup; another
        # (attach to a recorded run) only where the row has none and it saw the start itself
        self.owns_start = owns_start
        self._start_known: bool | None = None
        self.every = every
        self._clock = clock
        self._err = err if err is not None else sys.stderr
        self._key: tuple[Any, ...] | None = None
        self._last = -1e18
        self._broken = False
        self._written: tuple[str, dict[str, Any]] | None = None
        self.writes = 0

    def on_batch(self, state: DashboardState, _events: Sequence[Event] = ()) -> None:
        st = state.startup
        key = (st.phase, st.ready, st.crash is not None, st.engine)
        now = self._clock()
        if key != self._key or now - self._last >= self.every:
            self._key = key
            self._last = now
            self._write(state)

    def finish(self, state: DashboardState, final: str | None = None) -> None:
        """The last write: the summary, and the end state (``stopped``, ``exited``...)."""
        self._write(state, final=final)

    def _write(self, state: DashboardState, final: str | None = None) -> None:
        if self._broken:
            return
        fields = summarize(state)
        fields.pop("end_reason", None)
        run_state = final or fields.pop("state")
        fields.pop("state", None)
        if fields.get("engine") is None:
            fields.pop("engine", None)
        if final is not None or fields.get("crash"):
            fields["ended"] = time.time()
        if not self.owns_start and (fields.get("ready_s") is None or self._has_start()):
            fields.pop("ready_s", None)  # attaching sets nothing it did not see
            fields.pop("phases", None)
        if fields.get("ended") is None:
            fields.pop("ended", None)
        written = (run_state, fields)
        if final is None and written == self._written:
            return  # (a quiet server: its row already says all of this)
        try:
            # a run stopped (``stop``, ``K``, a relaunch) or ended stays so: only a final
            # write (the one that stopped it) may change that
            self.store.update(self.run_id, state=run_state,
                              unless_state=None if final else "final", **fields)
            self.writes += 1
            self._written = written
        except HistoryError as exc:
            self._broken = True
            warn(inert_lines(f"eagle-tui: run history not updated any more: {exc}"), self._err)

    def _has_start(self) -> bool:
        """Whether the run's row has a time to ready already (read once)."""
        if self._start_known is None:
            try:
                self._start_known = self.store.get(str(self.run_id)).ready_s is not None
            except HistoryError:
                self._start_known = True
        return self._start_known


class OpenedLater:
    """A :class:`HistoryRecorder` whose row is opened on the session thread at the first batch,
    not before the dashboard's first frame (SQLite's open, WAL and insert cost tens of ms on a
    cold disk). A new ``kind`` row is added unless ``run_id`` names one; an unusable history
    is said once and watching goes on."""

    def __init__(self, *, host: str, log_path: str | None, url: str | None, pid: int | None,
                 kind: str = "watched", run_id: int | None = None,
                 err: TextIO | None = None) -> None:
        self._row = {"host": host, "log_path": log_path, "url": url, "pid": pid}
        self.kind = kind
        self.run_id = run_id
        self._err = err if err is not None else sys.stderr
        self._recorder: HistoryRecorder | None = None
        self._broken = False
        self._new = False

    def on_batch(self, state: DashboardState, events: Sequence[Event] = ()) -> None:
        if self._broken:
            return
        if self._recorder is None:
            try:
                store = RunStore()
                if self.run_id is None:
                    self.run_id = store.add(kind=self.kind, state=self.kind, **self._row).id
                    self._new = True
            except HistoryError as exc:
                self._broken = True
                warn(inert_lines(f"eagle-tui: warning: {exc}"), self._err)
                return
            # a row of its own (a new watched run) is this observer's; one named by ``run_id``
            # (attach to a recorded run) had an observer before it
            self._recorder = HistoryRecorder(store, self.run_id, err=self._err,
                                             owns_start=self._new)
        self._recorder.on_batch(state, events)


__all__ = ["EVERY_S", "HistoryRecorder", "OpenedLater"]
