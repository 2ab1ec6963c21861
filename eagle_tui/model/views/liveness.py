"""Is the server working, idle, silent or gone? Decided once, so no view can show a lie.

A number without its state misleads: an idle, correctly configured server that shows
``tok/s 0.0 accept 1.00 speedup 0.00×`` looks exactly like the real failure, and a killed server
whose status line still says ``SERVING 176.9 tok/s`` looks healthy. So every view shows a
figure with one of a few states, decided here.

More in docs/architecture.md, "Module notes", ``model/views/liveness``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from eagle_tui.model.events import Phase
from eagle_tui.model.record import Record, record
from eagle_tui.model.views.hold import hold_of

if TYPE_CHECKING:
    from eagle_tui.model.state import DashboardState

Activity = Literal["", "active", "idle", "stale", "dead", "stopped", "sleeping", "paused",
                   "recovering"]
HELD: tuple[Activity, ...] = ("sleeping", "paused", "recovering")  # on purpose (.hold)
IDLE_AFTER_S = 15.0  # > 2 vLLM stats intervals (5 s), > SGLang's decode-log period under load
FRESH_S = 10.0  # a health/process/metrics sample younger than this says the server is up
DEAD_AFTER_S = 10.0  # /health failing this long after being ready: the server is gone
RESTART_SHOWN_S = 60.0
_GONE = ("exited", "not_found", "zombie")


@record
class Liveness(Record):
    """The state, since when (observed time), how old the newest stats are, and why."""

    activity: Activity
    since: float | None = None
    data_age_s: float | None = None
    reason: str = ""
    restarted_ago_s: float | None = None
    restart_reason: str = ""  # Startup.restart_reason: "truncated" is the log's, not a restart

    @property
    def restart_word(self) -> str:
        """``"✂ log truncated"`` for a log file that shrank, else ``"↻ restarted"``."""
        return "✂ log truncated" if self.restart_reason == "truncated" else "↻ restarted"

    @property
    def current(self) -> bool:
        """The figures are current readings (not last-active, stale or dead ones)."""
        return self.activity in ("active", "")


def _fresh(t: float | None, now: float) -> bool:
    return t is not None and now - t <= FRESH_S


def _dead(state: DashboardState, now: float) -> tuple[float | None, str] | None:
    ex = state.live.process_exit
    if ex is not None:
        how = f"signal {ex.signal}" if ex.signal is not None else f"exit code {ex.exit_code}"
        return ex.t, f"process {ex.pid} exited ({how})"
    p = state.live.process
    if p is not None and p.status in _GONE:
        return p.t, f"process {p.pid} {p.status.replace('_', ' ')}"
    h = state.live.health
    if h is None or not state.live.ever_ready_health or h.state in ("ready", "starting"):
        return None
    since = state.liveness.health_ok_t
    if h.state == "no_listener":
        return h.t, "nothing listens on the port any more"
    if since is not None and now - since >= DEAD_AFTER_S:
        return since, f"{h.path or '/health'} failing ({h.state}) for {now - since:.0f} s"
    return None


def stopped_text(state: DashboardState, word: str = "stopped ") -> str | None:
    """``"stopped by you at 14:02:11"`` once the user stopped the run from eagle-tui, else None
    (``word=""``: after a ``STOPPED`` state word)."""
    stop = state.live.stopped
    if stop is None:
        return None
    return f"{word}by you at {time.strftime('%H:%M:%S', time.localtime(stop.t))}"


def _up_evidence(state: DashboardState, now: float) -> bool:
    h, p, m = state.live.health, state.live.process, state.metrics.last
    return ((h is not None and h.state == "ready" and _fresh(h.t, now))
            or (p is not None and p.status in ("running", "sleeping") and _fresh(p.t, now))
            or (m is not None and _fresh(m.t, now)))


def liveness(state: DashboardState) -> Liveness:
    now = state.clock.now
    restart_t = state.startup.restart_t
    restarted = (now - restart_t if now is not None and restart_t is not None
                 and now - restart_t <= RESTART_SHOWN_S else None)
    live = _liveness(state, now, restarted)
    if restarted is None:
        return live
    return replace(live, restart_reason=state.startup.restart_reason)


def _liveness(state: DashboardState, now: float | None, restarted: float | None) -> Liveness:
    if now is None or state.startup.crash is not None:
        return Liveness("", restarted_ago_s=restarted)
    age = now - state.liveness.data_t if state.liveness.data_t is not None else None
    dead = _dead(state, now)
    stopped = stopped_text(state, "")
    if dead is not None and stopped is not None and state.live.stopped is not None:
        return Liveness("stopped", state.live.stopped.t, age, stopped, restarted)
    if dead is not None:
        return Liveness("dead", dead[0], age, dead[1], restarted)
    held = hold_of(state)  # asleep, paused, recovering: on purpose, neither idle nor stale
    if held is not None:
        return Liveness(held.state, held.since, age, held.text, restarted)
    serving = state.startup.phase.rank >= Phase.READY.rank
    if state.liveness.data_t is None:
        if serving and (_up_evidence(state, now) or state.startup.phase is Phase.READY):
            mark = state.startup.phase_mark(Phase.READY)
            return Liveness("idle", mark.t if mark else None, None, "ready, no request yet",
                            restarted)
        return Liveness("", restarted_ago_s=restarted)
    assert age is not None
    if state.startup.phase is not Phase.NONE and not serving:
        # still starting: a warm-up's /metrics say nothing runs, yet the server is not idle
        return Liveness("", restarted_ago_s=restarted)
    if state.liveness.idle_t is not None:
        return Liveness("idle", state.liveness.idle_t, age, "no request running, nothing generated",
                        restarted)
    if age <= IDLE_AFTER_S:
        return Liveness("active", state.liveness.active_t, age, "", restarted)
    if _up_evidence(state, now):
        return Liveness("idle", state.liveness.data_t, age, "no stats lately, the server is up",
                        restarted)
    return Liveness("stale", state.liveness.data_t, age, f"no data for {age:.0f} s", restarted)


__all__ = ["DEAD_AFTER_S", "FRESH_S", "HELD", "IDLE_AFTER_S", "RESTART_SHOWN_S", "Activity",
           "Liveness", "liveness", "stopped_text"]
