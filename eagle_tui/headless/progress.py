"""The headless presenter: prints progress as the session goes and decides ready/crashed.

:class:`ProgressPrinter` is subscribed to a session (any session: in-loop for ``wait``, the one
:func:`eagle_tui.assembly.open.open_dashboard` builds for ``watch``/``replay``/``demo``). It
prints a line at every phase, health or process change and every ``PROGRESS_EVERY_S``, one per
GPU memory step (:mod:`.gpusteps`), and, once the state answers the question (:func:`verdict`),
either ends a ``wait`` or (``decide=False``) prints the answer as a notice and goes on.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TextIO

from eagle_tui.console import say
from eagle_tui.headless.gpusteps import GpuSteps
from eagle_tui.headless.lines import (
    diagnosis_lines,
    exit_crash,
    progress_dict,
    progress_line,
    result_dict,
)
from eagle_tui.model.boundary.termtext import inert_json, inert_lines
from eagle_tui.model.containers.states import LOOP_KIND, restart_expected
from eagle_tui.model.events import Event
from eagle_tui.model.fold.prefix import summarizing
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.activity import startup_activity, stuck_collective
from eagle_tui.model.views.figures import figures
from eagle_tui.model.views.hold import hold_of
from eagle_tui.model.views.liveness import stopped_text
from eagle_tui.session import Subscriber

EXIT_READY = 0
EXIT_CRASHED = 1
EXIT_USAGE = 2
EXIT_TIMEOUT = 3
EXIT_ALERTS = 4  # ready, but with alerts at the --fail-on level
PROGRESS_EVERY_S = 10.0
CRASH_SETTLE_S = 0.4
_DEAD_HEALTH = ("no_listener", "starting", "error")


def verdict(state: DashboardState, *, has_url: bool) -> tuple[str, str] | None:
    """``("ready"|"crashed"|"stopped", reason)`` once the state decides ``wait``; else ``None``
    (``stopped``: the user stopped the run from eagle-tui before it crashed).

    Nothing is decided while the lines before a log's in-memory tail are being summarized: a
    crash there is the answer, whatever the tail says."""
    if summarizing(state):
        return None
    c, ex = state.startup.crash, state.live.process_exit
    if c is not None and c.kind == LOOP_KIND and state.live.stopped is None:
        return "crashed", c.message  # (told in the restarted run too, its exit gone)
    if c is not None and not exit_crash(state):
        return "crashed", f"crash in the log: {c.kind}"
    stopped = stopped_text(state)
    if stopped is not None:
        return "stopped", stopped
    if ex is not None and restart_expected(ex, state.clock.now):
        return None  # its engine restarts it: the loop is told at the restart (or the grace's end)
    if ex is not None:
        code = f"exit code {ex.exit_code}" if ex.exit_code is not None else "exit status unknown"
        said = f": {c.message}" if c is not None else ""  # (killed: what that most often is)
        who = f"container {ex.container}" if ex.container else f"server process {ex.pid}"
        return "crashed", f"{who} exited ({code}){said}"
    health = state.live.health
    held = hold_of(state)
    if held is not None and health is not None and health.state in ("ready", "starting"):
        return "ready", f"the server is up and {held.text}"  # (a paused /ready says 503)
    if has_url:
        if health is not None and state.live.ever_ready_health and health.state in _DEAD_HEALTH:
            return "crashed", f"{health.path or '/health'} was ready and is now {health.state}"
        if health is not None and health.state == "ready":
            return "ready", f"{health.path or '/health'} answered 200"
        return None
    if state.startup.ready:
        said = f"; {held.text}" if held is not None else ""
        return "ready", f"the log reached {state.startup.phase.value}{said}"
    return None


class ProgressPrinter:
    """Prints progress and decides; ``on_batch`` is subscribed to the session.

    ``decide=False`` (``watch``) prints the same lines and a crash diagnosis when it happens,
    but never ends the run.
    """

    def __init__(self, out: TextIO, *, as_json: bool, has_url: bool, decide: bool = True,
                 t0: float | None = None):
        self.out = out
        self.t0 = time.monotonic() if t0 is None else t0  # for the result's elapsed time
        self.as_json = as_json
        self.has_url = has_url
        self.decide = decide
        self.decided = asyncio.Event()  # set in the loop that awaits :meth:`wait_decided`
        self.outcome: tuple[str, str] | None = None
        self._lock = threading.Lock()
        self._waiter: asyncio.AbstractEventLoop | None = None
        self.state = DashboardState()
        self._last_key: tuple[Any, ...] | None = None
        self._last_print: float | None = None
        self._crash_pending = False
        self._ready_reported = False
        self.gpu_steps = GpuSteps()

    def emit(self, obj: dict[str, Any], text: str) -> None:
        if self.as_json:
            say(inert_json(obj), self.out)
        else:
            say(inert_lines(text), self.out)
        self.out.flush()

    def on_batch(self, state: DashboardState, _events: Sequence[Event]) -> None:
        self.state = state
        loop = asyncio.get_running_loop()
        pw = state.startup.piecewise
        key = (
            state.startup.phase,
            (pw.role, pw.label) if pw is not None else None,  # a piecewise graph stage begins
            # one line per change, not per TP rank's shard or graph count (the periodic lines
            # show those): 157 lines for one TP-8 startup otherwise
            act.kind if (act := startup_activity(state)) is not None else None,
            state.startup.engine_inferred is not None,
            stuck_collective(state) is not None,
            state.live.health.state if state.live.health else None,
            state.live.process.status if state.live.process else None,
            state.startup.crash is not None,
            state.live.process_exit is not None,
            state.gpu.sample.state if state.gpu.sample else None,
            figures(state).live.activity,
            # one line when the background summary starts and one when it is done
            state.log.summary is not None and state.log.summary.finished,
            state.log.log_start > 0,
        )
        if key != self._last_key or (
            self._last_print is not None and loop.time() - self._last_print >= PROGRESS_EVERY_S
        ):
            self.emit(progress_dict(state), progress_line(state))
            self._last_key = key
            self._last_print = loop.time()
        elapsed = state.clock.elapsed or 0.0
        for step in self.gpu_steps.update(state.gpu.sample):
            self.emit(step.as_dict(elapsed), step.text(elapsed))
        found = verdict(state, has_url=self.has_url)
        if found is None or self.outcome is not None:
            return
        status, reason = found
        if status == "crashed":
            if not self._crash_pending:
                # let the rest of the traceback arrive: the root cause is often a few lines
                # below the first fatal line
                self._crash_pending = True
                loop.call_later(CRASH_SETTLE_S, self._settle)
            return
        if self.decide:
            self._decide(found)
        elif status == "stopped":
            self.outcome = found  # said once: the run is over
            self.finish(state, status, reason, EXIT_CRASHED, final=False)
        elif not self._ready_reported:
            self._ready_reported = True
            self.finish(state, status, reason, EXIT_READY, final=False)

    def _settle(self) -> None:
        found = verdict(self.state, has_url=self.has_url)
        if self.outcome is not None:
            return
        if found is None:
            # the state moved on while the crash settled (a restarted container's log being
            # read anew): re-armed, the next batch that shows a crash starts another settle
            self._crash_pending = False
            return
        if self.decide:
            self._decide(("crashed", found[1]) if found[0] == "crashed" else found)
        else:
            self.finish(self.state, "crashed", found[1], EXIT_CRASHED, final=False)

    def _decide(self, outcome: tuple[str, str]) -> None:
        """Record the answer and wake :meth:`wait_decided`, whichever loop or thread it is in:
        the printer runs where the session runs (its own thread under ``open_dashboard``)."""
        with self._lock:
            self.outcome = outcome
            waiter = self._waiter
        if waiter is None:  # nobody waits yet: the flag is enough (wait_decided checks outcome)
            self.decided.set()
        elif not waiter.is_closed():
            waiter.call_soon_threadsafe(self.decided.set)

    async def wait_decided(self) -> None:
        """Return once the printer has decided (``decide=True``)."""
        with self._lock:
            if self.outcome is not None:
                return
            self._waiter = asyncio.get_running_loop()
        await self.decided.wait()

    def finish(self, state: DashboardState, status: str, reason: str, code: int, *,
               final: bool = True) -> None:
        wall = time.monotonic() - self.t0
        obj = result_dict(state, status, reason, code, wall)
        if not final:
            obj["event"] = status  # watch: a notice, the run goes on
        self.emit(obj, "\n".join(diagnosis_lines(state, status, reason, wall)))


def failing_alerts(state: DashboardState, fail_on: str | None) -> list[str]:
    """The alerts at ``fail_on`` level or worse (``critical`` ⊂ ``warning``)."""
    if fail_on is None:
        return []
    levels = ("critical",) if fail_on == "critical" else ("critical", "warning")
    return [a.message for a in state.alerts if a.severity in levels]


def finish_verdict(progress: ProgressPrinter, state: DashboardState, *, sources_ended: bool,
                   timeout: float, fail_on: str | None = None) -> int:
    """Turn how the wait ended into (status, reason, exit code), print it, return the code.

    Shared by ``wait`` and ``demo --headless`` so both answer with the same words and codes.
    """
    if progress.outcome is not None:
        status, reason = progress.outcome
        code = EXIT_READY if status == "ready" else EXIT_CRASHED
        failing = failing_alerts(state, fail_on) if code == EXIT_READY else []
        if failing:
            reason = f"{reason}; --fail-on {fail_on}: {failing[0]}"
            code = EXIT_ALERTS
    elif sources_ended:
        status, reason, code = "crashed", "every source ended without an answer", EXIT_CRASHED
    elif state.startup.crash is not None:  # seen in the tail while the rest was summarized
        status, code = "crashed", EXIT_CRASHED
        reason = (f"crash in the log: {state.startup.crash.kind} (the lines before the tail "
                  "were still being summarized: an earlier cause may be there)")
    else:
        status, reason, code = "timeout", f"no answer within {timeout:g} s", EXIT_TIMEOUT
    progress.finish(state, status, reason, code)
    return code


class Watched(Protocol):
    """What a presenter needs of a session: in-loop, or on its own thread (then subscribers are
    called there, and must only print or hand over thread-safely)."""

    @property
    def state(self) -> DashboardState: ...

    def subscribe(self, callback: Subscriber) -> Callable[[], None]: ...


async def follow(session: Watched, runner: asyncio.Task[DashboardState], out: TextIO, *,
                 as_json: bool, has_url: bool, duration: float | None = None,
                 crash_exit: bool = False) -> int:
    """``watch``/``replay`` without the dashboard: print as the run goes, never decide.

    Runs until the session ends (every source ended, or interrupted) or ``duration`` passes;
    the caller stops the session. Exit 0, or (``crash_exit``: ``replay``, so a script can ask
    "did that run crash?") 1 when the state ends crashed.
    """
    printer = ProgressPrinter(out, as_json=as_json, has_url=has_url, decide=False)
    session.subscribe(printer.on_batch)
    await asyncio.wait({runner}, timeout=duration)
    crashed = runner.done() and not runner.cancelled() and runner.exception() is None and (
        runner.result().startup.crash is not None)
    return EXIT_CRASHED if crash_exit and crashed else EXIT_READY


__all__ = ["CRASH_SETTLE_S", "EXIT_CRASHED", "EXIT_READY", "EXIT_TIMEOUT", "EXIT_USAGE",
           "PROGRESS_EVERY_S", "ProgressPrinter", "Watched", "finish_verdict", "follow", "verdict"]
