"""One run boundary, told twice: a container's log and its new process each say that a new run
began (in either order); the second to arrive must not start another run. A container's crash
loop is told across its runs: the run its engine restarted keeps it until it is healthy. A
server restarted into the same log is told by its first line again (:func:`rerun_in_log`)."""

from __future__ import annotations

from eagle_tui.model.containers.states import LOOP_KIND, RESTARTED
from eagle_tui.model.engines import run_first
from eagle_tui.model.events import CrashEvent, Phase, PhaseEvent
from eagle_tui.model.fold.batch import Batch
from eagle_tui.model.state import DashboardState, LiveSources, Startup

MESSAGE_MAX = 240
# the restart reason of a run begun by the server's once-per-start line after an end
STARTED_AGAIN = "started again into its log"


def carried(st: Startup) -> CrashEvent | None:
    """The crash a new run keeps from the run before it: a crash loop (why it began)."""
    return st.crash if st.crash is not None and st.crash.kind == LOOP_KIND else None


def looped(loop: CrashEvent, before: CrashEvent | None) -> CrashEvent:
    """The loop's crash, with the cause the run's log gave before the exit (its line)."""
    if before is None or before.kind in (LOOP_KIND, "killed"):
        return loop
    text = f"{loop.message} — {before.kind}: {before.message}"
    cut = text if len(text) <= MESSAGE_MAX else text[: MESSAGE_MAX - 1] + "…"
    return CrashEvent(loop.kind, before.lineno, cut, loop.hint, before.time)


def log_restart_counts(st: Startup) -> bool:
    """Whether the log's restart is a new run: not when a new process already began this run
    and nothing of it was read yet (the log's lines only start again)."""
    return not (st.restarts and not st.restart_reason and not st.phases
                and (st.crash is None or carried(st) is not None))


def drawn_by_log(live: LiveSources, st: Startup) -> bool:
    """Whether the log already drew this run's boundary after the old process was last seen
    (a container's restart, or the server's first line after an end): a new process then
    begins no run of its own."""
    return (live.process is not None and st.restart_reason in (RESTARTED, STARTED_AGAIN)
            and (st.restart_t or 0) >= live.process.t)


def up_again(b: Batch, up: bool = True) -> None:
    """A run its engine restarted is healthy or ready (``up``): the loop it kept is over."""
    if up and carried(b.s.startup) is not None and b.s.live.process_exit is None:
        b.put("startup", crash=None)


def after_an_end(s: DashboardState, ev: PhaseEvent) -> bool:
    """A server's first line after its log told the run ready or crashed: a server restarted
    into the same log (``nohup ... >>``), the old run's crash or figures are not the new one's.
    A live view only (its clock runs, or it opened the log at its end: the background summary
    of the lines before its tail folds them without a clock; ``report`` folds a file alone and
    keeps its runs folded together) that has seen no process exit (an exit's own rules are
    :func:`rerun_in_log`'s). A process watched and alive does not print its first line twice:
    the end was an earlier server's (a watch begun after the relaunch finds the new server)."""
    if ((s.clock.now is None and s.log.log_start <= 0) or s.live.process_exit is not None
            or not ev.detail.startswith(run_first(s.startup.engine))):
        return False
    # (by line number: another node's log, a multi-node watch's, counts its own lines, and its
    # first line comes before the number of this log's ready or crash line)
    st = s.startup
    return (st.crash is not None and st.crash.lineno < ev.lineno) or any(
        m.phase.rank >= Phase.READY.rank and m.lineno < ev.lineno for m in st.phases)


def rerun_in_log(s: DashboardState, ev: PhaseEvent) -> str | None:
    """The restart reason when ``ev`` begins a new run in the same log (``None``: it does
    not): the server's first line after an end (:data:`STARTED_AGAIN`), or again after the
    watched process exited (``""``): the server was restarted writing to the same log
    (``>>``). (Only a live view can say the old run ended: a log read alone, as ``report``
    reads it, keeps its runs folded together.) After an exit the old run's first line must
    have been read before it: a server that died before its log was read has all of its lines
    after the exit, and its own second INIT line is none."""
    first = s.startup.phase_mark(Phase.INIT)
    if ev.phase is not Phase.INIT or ev.role != "target" or first is None \
            or ev.lineno <= first.lineno:
        return None
    if after_an_end(s, ev):
        return STARTED_AGAIN
    if not s.live.process_ended or first.lineno > s.live.exit_line:
        return None
    # The old run had moved on (a later phase, or a crash its log told before the exit) before
    # this line: lines that one run wrote before its exit may be read after it (the log read
    # lags the process watch), and every recorded log has all of a run's INIT lines before its
    # later phases. (A crash the exit itself says, SIGKILL's, sits at ``exit_line``.)
    st = s.startup
    moved = (any(m.phase is not Phase.INIT and m.lineno < ev.lineno for m in st.phases)
             or (st.crash is not None and st.crash.lineno < s.live.exit_line))
    return "" if moved else None
