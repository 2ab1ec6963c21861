"""K / R / E for a run eagle-tui launched: stop, restart, edit and relaunch, off the UI thread.

The dashboard's keys post an intent (:mod:`eagle_tui.model.launching.control`);
:class:`LaunchControl` does the work on its own thread and event loop (``eagle-control``):
connect the run's host, ``stop_run``, ``prepare`` (parse and lint there), ``start``, the history
rows. It answers with one :class:`~eagle_tui.model.launching.control.Outcome` through the
dashboard's reply callback. Not the session thread: a relaunch replaces the session.

A relaunch is a new run: a new row whose ``parent`` is the replaced run (which gets its final
summary with its server's last counters, and ``relaunched as #N`` in its timeline), a new log,
pid and URL, and a new :class:`~eagle_tui.assembly.threaded.ThreadedSession` first given the
replaced run's summary (a ``PreviousRun`` event) so the dashboard keeps it for comparison.

Only a run eagle-tui launched gets a control: a watched or attached server is never signalled
from the dashboard.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from eagle_tui.assembly.spec import DashboardSpec
from eagle_tui.assembly.threaded import Subscriber, ThreadedSession
from eagle_tui.launch.members import check_grace
from eagle_tui.model.boundary.shellwords import join
from eagle_tui.model.launching.control import Intent, Kill, Outcome, Relaunch, Restart
from eagle_tui.model.launching.editing import finding_lines, restore_secrets
from eagle_tui.model.launching.redact import redact_words
from eagle_tui.model.views.runsummary import previous_run, previous_run_from_record, with_final

if TYPE_CHECKING:
    from eagle_tui.history.records import RunRecord
    from eagle_tui.history.store import RunStore
    from eagle_tui.launch.plan import Prepared
    from eagle_tui.launch.process import RunHandle
    from eagle_tui.model.launching.lint import Finding
    from eagle_tui.model.launching.remedy import Remedy
    from eagle_tui.transport.base import Transport

Reply = Callable[[Outcome], None]
# Subscribers for a run's session (its history recorder; the demo's load): run, its spec
SubscribersFor = Callable[["RunRecord", DashboardSpec], Sequence[Subscriber]]
STOP_GRACE_S = 10.0


def recorder_for(store: RunStore) -> SubscribersFor:
    """The default: each run's session keeps its own history row current."""

    def make(run: RunRecord, _spec: DashboardSpec) -> Sequence[Subscriber]:
        from eagle_tui.history.recorder import HistoryRecorder

        return (HistoryRecorder(store, run.id).on_batch,)

    return make


class LaunchControl:
    """The control of one launched run and the runs relaunched from it (see the module doc).

    ``spec`` is the dashboard's spec of the current run (its log, URL and pid are replaced for
    each new run); ``prep``/``run``/``launched`` what ``launch`` prepared, recorded and started.
    ``log_dir``: where relaunched runs write their logs (default: a new file each in the data
    folder, as ``launch`` does); ``label_for``: what the status line names a new run.
    """

    def __init__(self, *, store: RunStore, spec: DashboardSpec, prep: Prepared, run: RunRecord,
                 launched: RunHandle, demo: bool = False, log_dir: str | None = None,
                 subscribers_for: SubscribersFor | None = None,
                 label_for: Callable[[RunRecord, RunHandle], str] | None = None,
                 grace: float = STOP_GRACE_S, keep: bool = False) -> None:
        self.store = store
        self.spec = spec
        self.demo = demo
        self.log_dir = log_dir
        self.grace = check_grace(grace)
        self.keep = keep  # a stopped container is kept (K, and the one a relaunch replaces)
        self._subscribers_for = subscribers_for or recorder_for(store)
        self._label_for = label_for or self._label
        self._argv = list(prep.argv)
        self._prep = prep
        self._run = run
        self._launched = launched
        self._session: ThreadedSession | None = None
        self._sessions: list[ThreadedSession] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._busy = False
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ any thread
    @property
    def run(self) -> RunRecord:
        return self._run

    @property
    def label(self) -> str:
        return self._run.label

    @property
    def command(self) -> str:
        """The current run's command as the editor shows it: shell-quoted, secrets masked."""
        return join(redact_words(self._argv))

    @property
    def remedies(self) -> tuple[Remedy, ...]:
        """The lint's remedies for the current run's command (less a busy port: the run's own
        port is freed before a relaunch starts)."""
        return tuple(f.remedy for f in self._findings(self._prep) if f.remedy is not None)

    def fixed(self, remedies: Sequence[Remedy]) -> str | None:
        """The current command with ``remedies`` applied, as the editor shows it (secrets
        masked; the relaunch puts them back); ``None`` when they change nothing."""
        from eagle_tui.model.launching.container_launch import fixed_words
        from eagle_tui.probe.tables import load_tables

        # (a container's run: the engine's words fixed, its container options kept)
        words = fixed_words(list(self._argv), remedies, load_tables())
        return join(redact_words(words)) if words != self._argv else None

    def attach(self, session: ThreadedSession) -> None:
        """The session the dashboard shows for the current run (its state is the summary
        kept when the run is replaced)."""
        self._session = session

    def request(self, intent: Intent, reply: Reply) -> None:
        """Do ``intent`` on the control's thread and call ``reply`` there with the outcome.

        One request at a time: a key pressed while a relaunch runs is answered ``failed``.
        """
        with self._lock:
            if self._busy:
                reply(Outcome("failed", "busy: the last request is still running"))
                return
            self._busy = True
        future = self._submit(self._handle(intent))

        def done(f: concurrent.futures.Future[Outcome]) -> None:
            with self._lock:
                self._busy = False
            exc = f.exception()
            reply(f.result() if exc is None else Outcome(
                "failed", f"{type(exc).__name__}: {exc}"))

        future.add_done_callback(done)

    def stop_current(self, timeout: float = 30.0) -> None:
        """Stop the current run's group and wait for it (the demo on exit: nothing is left)."""
        self._submit(self._stop()).result(timeout)

    def close(self) -> None:
        """Stop the sessions this control started and its thread (the dashboard has exited)."""
        for session in self._sessions:
            session.stop()
        for session in self._sessions:
            session.join()
        loop, self._loop = self._loop, None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(10.0)
            loop.close()

    def _submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        if self._loop is None:
            loop = self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=loop.run_forever, name="eagle-control",
                                            daemon=True)
            self._thread.start()
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    # ------------------------------------------------------------------ control thread
    async def _handle(self, intent: Intent) -> Outcome:
        from eagle_tui.history.store import HistoryError
        from eagle_tui.launch.process import LaunchError
        from eagle_tui.model.launching.cmdline import CommandError
        from eagle_tui.transport.base import TransportError

        try:
            if isinstance(intent, Kill):
                return await self._kill()
            if isinstance(intent, Restart):
                return await self._relaunch(list(self._argv), force=True)
            assert isinstance(intent, Relaunch)
            from eagle_tui.model.launching.cmdline import split_command

            words = restore_secrets(split_command(intent.command), self._argv)
            if not words:
                return Outcome("failed", "the command is empty")
            return await self._relaunch(words, force=intent.force)
        except (CommandError, LaunchError, HistoryError, TransportError, OSError,
                TimeoutError) as exc:
            return Outcome("failed", str(exc) or type(exc).__name__)

    async def _connect(self) -> Transport:
        from eagle_tui.assembly.remote import connect_one, one_transport

        transport = one_transport(replace(self.spec.ssh, dests=self.spec.ssh.dests[:1]))
        await connect_one(transport)
        return transport

    async def _stop(self, transport: Transport | None = None, action: str = "stop") -> str:
        """Stop the current run (every process with its token, or its container); what
        happened.

        The run's session is told first (``StopRequested``), so the exit and the lost health
        that follow read as this stop, not as a crash."""
        from eagle_tui.model.events import StopRequested

        if self._session is not None:
            self._session.post(StopRequested(time.time(), action))
        own = transport is None
        tr = transport if transport is not None else await self._connect()
        try:
            counters = await self._final_counters(tr)
            res = await self._launched.stop(tr, grace=self.grace, keep=self.keep)
        finally:
            if own:
                await tr.close()
        if res.left:
            from eagle_tui.launch.process import LaunchError

            raise LaunchError(f"run {self.label} not stopped: {res.text}")
        self._record_stopped(counters)
        if not res.ran:
            return f"run {self.label} was not running: {res.text}"
        return f"stopped run {self.label}: {res.text}"

    async def _final_counters(self, transport: Transport) -> dict[str, float]:
        """The server's counters just before it is signalled (one bounded scrape; none when
        it does not answer: the figures are then the session's last)."""
        from eagle_tui.sources.final_scrape import final_scrape
        from eagle_tui.sources.metrics import run_counters

        if self._session is None or not self._prep.url:
            return {}
        snap, _note = await final_scrape(transport, self._prep.url)
        return dict(run_counters(snap)) if snap is not None else {}

    def _record_stopped(self, counters: dict[str, float] | None = None) -> None:
        """The run's final summary; a crashed run stays ``crashed`` (its relaunch is added to
        its timeline by :meth:`_relaunch`), any other is ``stopped``."""
        from eagle_tui.history.recorder import HistoryRecorder

        session = self._session
        recorder = HistoryRecorder(self.store, self._run.id)
        if session is not None:
            state = with_final(session.state, counters or {})
            recorder.finish(state, final="crashed" if state.startup.crash else "stopped")
        else:
            row = self.store.get(str(self._run.id))
            if row.ended is None and row.state != "crashed":
                self.store.update(self._run.id, state="stopped", ended=time.time())

    async def _kill(self) -> Outcome:
        return Outcome("stopped", await self._stop(action="kill"))

    def _findings(self, prep: Prepared) -> list[Finding]:
        """The lint's findings, less "port in use" for the port the replaced run holds (it is
        stopped before the new one starts)."""
        same_port = prep.port == self._prep.port
        return [f for f in prep.result.findings if not (same_port and f.code == "port-in-use")]

    async def _relaunch(self, argv: list[str], *, force: bool) -> Outcome:
        from eagle_tui.launch.plan import prepare, start
        from eagle_tui.launch.process import LaunchError

        transport = await self._connect()
        try:
            prep = await prepare(transport, argv, cwd=self._prep.cwd, env=self._extra_env())
            findings = self._findings(prep)
            errors = [f for f in findings if f.level == "error"]
            if errors and not force:
                return Outcome("lint_errors", f"lint found {len(errors)} error"
                               f"{'s' * (len(errors) != 1)}", finding_lines(findings))
            old = self._run
            previous = self._previous(old)
            await self._stop(transport, "restart" if argv == self._argv else "relaunch")
            log = os.path.join(self.log_dir, f"run-{int(time.time() * 1000)}.log") \
                if self.log_dir else None
            try:
                run, launched = await start(self.store, transport, prep, log_path=log,
                                            demo=self.demo, parent=old.id,
                                            baseline=self.spec.baseline)
            except LaunchError as exc:
                raise LaunchError(f"run {old.label} was stopped, but the new command did not "
                                  f"start: {exc}") from None
            self.store.mark(old.id, "relaunched", f"#{run.id}")
        finally:
            await transport.close()
        self._argv, self._prep, self._run, self._launched = list(argv), prep, run, launched
        session = await self._open_session(run, launched, prep.url, previous)
        return Outcome("relaunched", f"run {run.label} started (relaunch of {old.label}): "
                       f"{launched.started_text}", session=session,
                       label=self._label_for(run, launched), command=self.command)

    def _extra_env(self) -> dict[str, str]:
        """The ``--env`` values of the launch (the command's own ``K=V`` words are in argv)."""
        return dict(self._prep.extra)

    def _previous(self, old: RunRecord) -> Any:
        label = f"#{old.id}"
        session = self._session
        if session is not None:
            return previous_run(session.state, label)
        row = self.store.get(str(old.id))
        return previous_run_from_record(label, {"metrics": row.metrics, "ready_s": row.ready_s,
                                                "crash": row.crash})

    def _usual(self, run: RunRecord) -> Any:
        """Earlier runs' phase times for the new run's flags (its startup ETA)."""
        from eagle_tui.history.store import HistoryError
        from eagle_tui.history.usual import usual_times

        try:
            return usual_times(self.store, host=run.host, engine=run.engine,
                               flags=run.flags or {}, exclude=run.id)
        except HistoryError:
            return None

    @staticmethod
    def _label(run: RunRecord, launched: RunHandle) -> str:
        return f"{run.name or run.id}: {launched.where}"

    async def _open_session(self, run: RunRecord, launched: RunHandle, url: str,
                            previous: Any) -> ThreadedSession:
        from eagle_tui.assembly.opener import spec_opener

        spec = replace(self.spec, **launched.follow(), url=url,
                       label=self._label_for(run, launched))
        spec = replace(spec, usual=self._usual(run), launched_spec=self._prep.spec_config)
        session = ThreadedSession(spec_opener(spec, screen=True))  # (the dashboard's K/R/E)
        for cb in self._subscribers_for(run, spec):
            session.subscribe(cb)
        await asyncio.to_thread(session.start)
        if previous is not None:
            session.post(previous)  # (before the sources start: the new run's first event)
        self._sessions.append(session)
        self._session = session
        return session


__all__ = [
    "STOP_GRACE_S",
    "LaunchControl",
    "finding_lines",
    "recorder_for",
    "restore_secrets",
]
