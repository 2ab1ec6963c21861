"""The user's own stop (``K``, ``R``, a relaunch) is no failure: after a ``StopRequested`` the
exit, the lost health and the engine's death lines raise no alert, and every view says
"stopped by you" instead of dead or crashed. A log that shrank reads "truncated", not a restart."""

from __future__ import annotations

from eagle_tui.headless.lines import diagnosis_lines
from eagle_tui.headless.progress import verdict
from eagle_tui.model.events import (
    CrashEvent,
    HealthSample,
    LogRestarted,
    ProcessExited,
    ProcessSample,
    StopRequested,
    Tick,
)
from eagle_tui.model.events.codec import dumps, loads
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.figtext import figures_text
from eagle_tui.model.views.figures import figures
from eagle_tui.model.views.liveness import liveness, stopped_text
from tests.unit.model.views.test_liveness import busy_vllm

DEATH = ("process_exited", "health_lost", "crash")


def serving() -> tuple[DashboardState, float]:
    state, t = busy_vllm()
    return reduce(state, [HealthSample("ready", t, 200, 0.001),
                          ProcessSample(t, 330, "running")]), t


def ended(state: DashboardState, t: float) -> DashboardState:
    """The server's end as the sources see it: a killed child's line, /health gone, the exit."""
    return reduce(state, [CrashEvent("killed", 9000, "Received sigquit from a child process.",
                                     "a child died"),
                          HealthSample("no_listener", t + 2, error="refused"),
                          ProcessExited(t + 3, 330, 0), Tick(t + 4)])


def test_an_unasked_end_is_dead_with_alerts() -> None:
    """The contrast: the same end without the user's stop is a failure."""
    state, t = serving()
    gone = ended(state, t)
    assert {a.kind for a in gone.alerts} & set(DEATH)
    assert verdict(gone, has_url=True) is not None
    assert verdict(gone, has_url=True)[0] == "crashed"  # type: ignore[index]


def test_the_users_stop_raises_no_alert_and_reads_stopped() -> None:
    state, t = serving()
    stopped = ended(reduce(state, [StopRequested(t + 1, "kill")]), t)
    assert not {a.kind for a in stopped.alerts} & set(DEATH)
    assert stopped.startup.crash is None  # the child's death line was the stop
    live = liveness(stopped)
    assert live.activity == "stopped" and live.since == t + 1
    assert live.reason.startswith("by you at ")
    assert stopped_text(stopped) == "stopped " + live.reason
    assert figures(stopped).tok_s.freshness == "stopped"
    text = figures_text(figures(stopped))
    assert text is not None and text.startswith("STOPPED (by you at ")
    found = verdict(stopped, has_url=True)
    assert found is not None and found[0] == "stopped" and "by you at" in found[1]
    lines = diagnosis_lines(stopped, *found)
    assert lines[0].startswith("STOPPED after") and not any("CRASH" in x for x in lines)


def test_a_crash_before_the_stop_is_still_a_crash() -> None:
    """Only what follows the stop is the stop's: an OOM the user stops after is still shown."""
    state, t = serving()
    crashed = reduce(state, [CrashEvent("cuda_oom", 10, "CUDA out of memory", "lower it")])
    stopped = ended(reduce(crashed, [StopRequested(t + 1, "kill")]), t)
    assert stopped.startup.crash is not None and stopped.startup.crash.kind == "cuda_oom"
    assert "crash" in {a.kind for a in stopped.alerts}


def test_a_new_process_after_the_stop_is_watched_as_usual() -> None:
    state, t = serving()
    stopped = ended(reduce(state, [StopRequested(t + 1, "restart")]), t)
    new = reduce(stopped, [ProcessSample(t + 5, 999, "running"), Tick(t + 5)])
    assert new.live.stopped is None
    dead = reduce(new, [ProcessExited(t + 9, 999, 1), Tick(t + 9)])
    assert "process_exited" in {a.kind for a in dead.alerts}
    assert liveness(dead).activity == "dead"


def test_stop_requested_round_trips_in_a_recording() -> None:
    ev = StopRequested(1.5, "relaunch")
    assert loads(dumps(ev)) == ev


def test_a_truncated_log_reads_truncated_a_new_process_restarted() -> None:
    state, t = serving()
    cut = reduce(state, [LogRestarted("truncated", t=t + 1), Tick(t + 1)])
    assert liveness(cut).restart_word == "✂ log truncated"
    replaced = reduce(state, [LogRestarted("replaced", t=t + 1), Tick(t + 1)])
    assert liveness(replaced).restart_word == "↻ restarted"
    new = reduce(cut, [ProcessSample(t + 5, 999, "running"), Tick(t + 5)])
    assert liveness(new).restart_word == "↻ restarted"
