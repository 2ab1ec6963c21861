"""One run boundary, told twice: a container's log and its new process each say that a new run
began (in either order); the second to arrive must not start another run. A container's crash
loop is told across its runs: the run its engine restarted keeps it until it is healthy."""

from __future__ import annotations

from eagle_tui.model.containers.states import LOOP_KIND, RESTARTED
from eagle_tui.model.events import CrashEvent
from eagle_tui.model.fold.batch import Batch
from eagle_tui.model.state import LiveSources, Startup

MESSAGE_MAX = 240


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
    """Whether the container's log already drew this run's boundary after the old process was
    last seen (a new process then begins no run of its own)."""
    return (live.process is not None and st.restart_reason == RESTARTED
            and (st.restart_t or 0) >= live.process.t)


def up_again(b: Batch, up: bool = True) -> None:
    """A run its engine restarted is healthy or ready (``up``): the loop it kept is over."""
    if up and carried(b.s.startup) is not None and b.s.live.process_exit is None:
        b.put("startup", crash=None)
