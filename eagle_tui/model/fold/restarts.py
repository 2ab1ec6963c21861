"""One run boundary, told twice: a container's log and its new process each say that a new run
began (in either order); the second to arrive must not start another run."""

from __future__ import annotations

from eagle_tui.model.containers.states import RESTARTED
from eagle_tui.model.state import LiveSources, Startup


def log_restart_counts(st: Startup) -> bool:
    """Whether the log's restart is a new run: not when a new process already began this run
    and nothing of it was read yet (the log's lines only start again)."""
    return not (st.restarts and not st.restart_reason and not st.phases and st.crash is None)


def drawn_by_log(live: LiveSources, st: Startup) -> bool:
    """Whether the container's log already drew this run's boundary after the old process was
    last seen (a new process then begins no run of its own)."""
    return (live.process is not None and st.restart_reason == RESTARTED
            and (st.restart_t or 0) >= live.process.t)
