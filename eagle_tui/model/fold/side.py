"""Events that touch one record each, kept out of the reducer's dispatch: the active speculative
tier, the data-parallel ranks' loads, the sleep/pause/fault-tolerance holds, and a process's
exit (its crash reading)."""

from __future__ import annotations

from eagle_tui.model.containers.states import LOOP_KIND
from eagle_tui.model.events import HoldLine, HoldSample, ProcessExited, RankLoads, SpecTier
from eagle_tui.model.fold import hold
from eagle_tui.model.fold.batch import Batch
from eagle_tui.model.fold.restarts import looped
from eagle_tui.model.ingest.crash import killed_crash

SIDE_EVENTS = (SpecTier, RankLoads, HoldLine, HoldSample)


def apply_side(b: Batch, ev: SpecTier | RankLoads | HoldLine | HoldSample, now: float) -> None:
    """One of :data:`SIDE_EVENTS` into its record."""
    s = b.s
    if isinstance(ev, SpecTier):
        b.put("config", active_steps=ev.steps)
    elif isinstance(ev, RankLoads):
        b.put("metrics", ranks=ev, ranks_before=s.metrics.ranks)
    elif isinstance(ev, HoldLine):
        b.swap("holds", hold.on_line(s.holds, ev, now))
    else:
        b.swap("holds", hold.on_sample(s.holds, ev, now))


def process_exited(b: Batch, ev: ProcessExited) -> None:
    """The server's process ended: kept, and read as a crash unless the user stopped it."""
    b.put("live", process_exit=ev, process_ended=True, exit_line=b.max_lineno)
    st = b.s.startup
    # the user's own stop ends in a KILL after its grace: that is no crash
    killed = None if b.s.live.stopped is not None else killed_crash(
        ev, b.max_lineno, st.engine, st.phase)
    if killed is not None and killed.kind == LOOP_KIND:
        b.put("startup", crash=looped(killed, st.crash))  # restarted: the log's cause with it
    elif killed is not None and (st.crash is None or st.crash.kind == "killed"):
        b.put("startup", crash=killed)  # the log's own "Killed" line says less than this
