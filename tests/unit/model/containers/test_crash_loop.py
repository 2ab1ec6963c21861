"""An OOM-killed or crash-looping container is a crash naming its limit or its restarts, from
recorded inspect output (tests/fixtures/containers/): the dashboard's crash (kept in the runs
its engine restarts, until one is healthy), ``wait``'s verdict and its diagnosis."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from eagle_tui.headless.lines import diagnosis_lines
from eagle_tui.headless.progress import verdict
from eagle_tui.model.containers.inspect import ContainerFacts, read_inspect
from eagle_tui.model.containers.states import (
    RESTART_GRACE_S,
    epoch,
    loop_text,
    observe,
    span_text,
)
from eagle_tui.model.events import (
    CrashEvent,
    HealthSample,
    LogLine,
    ProcessExited,
    StopRequested,
    Tick,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "containers"


def facts(name: str) -> ContainerFacts:
    return read_inspect((FIX / name).read_text())[0]


def at(f: ContainerFacts, after_s: float) -> float:
    """``after_s`` seconds after the container was created."""
    created = epoch(f.created)
    assert created is not None, f.created
    return created + after_s


def looping() -> tuple[ContainerFacts, ContainerFacts]:
    """The recorded container (``--restart on-failure:3``, a command that prints and exits 1)
    running its second run, and its first run before the restart."""
    again = facts("podman-inspect-crashloop-running.json")
    first = replace(again, pid=20300, restart_count=0, started_at=again.created)
    return first, again


def test_the_recorded_facts() -> None:
    _, again = looping()
    assert again.restart_count == 1 and again.restart_policy == "on-failure:3"
    assert again.created == "2026-12-02T12:20:37.566802437Z" and again.exit_code == 0
    done = facts("podman-inspect-crashloop-exited.json")
    assert (done.status, done.exit_code, done.restart_count) == ("exited", 1, 3)
    always = facts("podman-inspect-always-loop.json")
    assert (always.restart_policy, always.restart_count) == ("always", 6)
    oom = facts("podman-inspect-oom-memory.json")
    assert (oom.exit_code, oom.oom_killed, oom.memory_limit) == (137, False, 64 << 20)


def test_loop_wording() -> None:
    assert loop_text(4, "on-failure:5", 90.4, 1) == (
        "crash loop: restarted 4 times in 90 s (--restart on-failure:5); last exit code 1")
    assert loop_text(5, "on-failure:5", 1500, 1) == (
        "crash loop: restarted 5 times in 25 min (--restart on-failure:5); last exit code 1; "
        "no restarts left, it stays down")
    assert loop_text(1, "always", None, None) == "crash loop: restarted 1 time (--restart always)"
    assert span_text(9000) == "2.5 h" and span_text(-3) == "0 s"


def test_a_restart_by_the_policy_is_a_crash_loop_kept_in_the_new_run() -> None:
    first, again = looping()
    state = reduce(DashboardState(), observe(None, first, at(first, 0.5)))
    state = reduce(state, [LogLine(1, "starting server"), LogLine(2, "RuntimeError: boom")])
    events = observe(first, again, at(first, 90.0))
    assert isinstance(events[0], ProcessExited) and events[0].restart_policy == "on-failure:3"
    state = reduce(state, events)  # the exit and the new run's process, in one batch
    crash = state.startup.crash
    assert crash is not None and crash.kind == "crash_loop", crash
    assert crash.message == "crash loop: restarted 1 time in 90 s (--restart on-failure:3)"
    assert "restart policy" in crash.hint and "`docker stop NAME`" in crash.hint
    # the new run is watched (its process), and still says why it began
    assert state.live.process is not None and state.live.process.pid == again.pid
    assert state.startup.restarts == 1 and not state.startup.ready
    assert verdict(state, has_url=True) == ("crashed", crash.message)
    # the policy's last restart spent: the container stays down, and says so
    done = facts("podman-inspect-crashloop-exited.json")
    third = replace(done, status="running", pid=20700, exit_code=0)
    state = reduce(state, observe(again, third, at(first, 95.0)))
    state = reduce(state, observe(third, done, at(first, 96.0)))
    crash = state.startup.crash
    assert crash is not None and crash.message == (
        "crash loop: restarted 3 times in 96 s (--restart on-failure:3); last exit code 1; "
        "no restarts left, it stays down")
    found = verdict(state, has_url=True)
    assert found == ("crashed", crash.message)
    text = "\n".join(diagnosis_lines(state, "crashed", found[1], 3.0))
    assert "kind:  crash_loop" in text and "on-failure:3" in text


def test_a_first_exit_waits_for_the_restart_its_policy_promises() -> None:
    """Seen exited before its engine restarted it (one look a second), a container whose
    policy restarts it is not decided on yet: the restart makes it a loop; without one within
    the grace its exit is the answer. An exit no policy answers is decided at once."""
    first, again = looping()
    t0 = at(first, 0.5)
    state = reduce(DashboardState(), [Tick(t0), *observe(None, first, t0)])
    down = replace(first, status="exited", exit_code=1, pid=0)
    t1 = at(first, 2.0)
    exited = reduce(state, [Tick(t1), *observe(first, down, t1)])
    assert exited.live.process_exit is not None and exited.startup.crash is None
    assert verdict(exited, has_url=True) is None
    later = reduce(exited, [Tick(t1 + RESTART_GRACE_S - 0.5)])
    assert verdict(later, has_url=True) is None
    restarted = reduce(later, [Tick(t1 + 4.6), *observe(down, again, t1 + 4.6)])
    found = verdict(restarted, has_url=True)
    assert found is not None and found[0] == "crashed" and found[1].startswith("crash loop: ")
    gone = reduce(later, [Tick(t1 + RESTART_GRACE_S)])
    found = verdict(gone, has_url=True)
    assert found is not None and found[0] == "crashed" and "exited (exit code 1)" in found[1]
    for policy, code in (("", 1), ("no", 1), ("on-failure:3", 0), ("on-failure:0", 1)):
        other = replace(down, restart_policy=policy, exit_code=code)
        st = reduce(state, [Tick(t1), *observe(replace(first, restart_policy=policy), other, t1)])
        assert verdict(st, has_url=True) is not None, policy
    for policy in ("always", "unless-stopped", "on-failure"):
        other = replace(down, restart_policy=policy)
        st = reduce(state, [Tick(t1), *observe(replace(first, restart_policy=policy), other, t1)])
        assert verdict(st, has_url=True) is None, policy


def test_an_always_policy_loop_and_the_logs_own_cause() -> None:
    always = facts("podman-inspect-always-loop.json")
    before = replace(always, pid=20800, restart_count=5)
    state = reduce(DashboardState(), observe(None, before, at(always, 1.0)))
    cause = CrashEvent("other_traceback", 7, "RuntimeError: boom", "hint", "12:20:49")
    state = reduce(state, [LogLine(7, "RuntimeError: boom"), cause])
    state = reduce(state, observe(before, always, at(always, 4.2)))
    crash = state.startup.crash
    assert crash is not None and crash.kind == "crash_loop"
    # the loop said, with the cause the log gave (and its line) before the restart
    assert crash.message == ("crash loop: restarted 6 times in 4 s (--restart always) — "
                             "other_traceback: RuntimeError: boom")
    assert crash.lineno == 7 and crash.time == "12:20:49"


def test_a_restarted_run_that_is_healthy_ends_the_loop() -> None:
    first, again = looping()
    state = reduce(DashboardState(), observe(None, first, at(first, 0.5)))
    state = reduce(state, observe(first, again, at(first, 3.0)))
    assert state.startup.crash is not None
    state = reduce(state, [HealthSample("ready", at(first, 9.0), 200, path="/health")])
    assert state.startup.crash is None
    assert verdict(state, has_url=True) == ("ready", "/health answered 200")


def test_a_stop_from_eagle_tui_is_no_loop() -> None:
    first, again = looping()
    state = reduce(DashboardState(), observe(None, first, at(first, 0.5)))
    state = reduce(state, [StopRequested(at(first, 1.0), "relaunch")])
    state = reduce(state, observe(first, again, at(first, 3.0)))
    assert state.startup.crash is None


def test_the_memory_limit_kill_is_named_with_or_without_restarts() -> None:
    oom = facts("podman-inspect-oom-memory.json")  # cgroup v1: exit 137, no OOMKilled flag
    running = replace(oom, status="running", pid=30000, exit_code=0)
    state = reduce(DashboardState(), observe(None, running, at(oom, 0.2)))
    state = reduce(state, observe(running, oom, at(oom, 0.7)))
    crash = state.startup.crash
    assert crash is not None and crash.kind == "killed"
    assert crash.message == ("killed, likely OOM at 64 MiB (exit 137 with a memory limit, no "
                             "OOMKilled flag)")
    found = verdict(state, has_url=True)
    assert found is not None and "killed, likely OOM at 64 MiB" in found[1]
    # dockerd's OOMKilled flag, --restart on-failure:5, restarted twice: both named
    killed = facts("dockerd-inspect-oomkilled.json")
    up = replace(killed, status="running", pid=77, exit_code=0, oom_killed=False)
    state = reduce(DashboardState(), observe(None, up, at(killed, 1.0)))
    state = reduce(state, observe(up, killed, at(killed, 3600.0)))
    crash = state.startup.crash
    assert crash is not None and crash.kind == "crash_loop"
    assert crash.message == ("killed: out of memory (OOMKilled) at 16 GiB; crash loop: "
                             "restarted 2 times in 60 min (--restart on-failure:5); "
                             "last exit code 137")


def test_one_look_tells_the_end_for_report() -> None:
    from eagle_tui.commands.container_log import with_container_end
    from eagle_tui.model.containers.states import end_crash

    done = facts("podman-inspect-crashloop-exited.json")
    assert end_crash(done, at(done, 7.0)) == ("crash_loop", (
        "crash loop: restarted 3 times in 7 s (--restart on-failure:3); last exit code 1; "
        "no restarts left, it stays down"))
    _, again = looping()
    assert end_crash(again, at(again, 2.0)) == (
        "crash_loop", "crash loop: restarted 1 time in 2 s (--restart on-failure:3)")
    oom = facts("podman-inspect-oom-memory.json")
    assert end_crash(oom, at(oom, 1.0)) == ("killed", (
        "killed, likely OOM at 64 MiB (exit 137 with a memory limit, no OOMKilled flag)"))
    assert end_crash(facts("podman-inspect-running.json"), 0.0) is None
    # report's crash: the loop where the log had none, before the log's cause where it had one
    report: dict[str, object] = {"crash": None, "lines": 12, "engine": "unknown"}
    with_container_end(report, done, at(done, 7.0))
    assert report["crash"] == {"kind": "crash_loop", "line": 12, "message": (
        "crash loop: restarted 3 times in 7 s (--restart on-failure:3); last exit code 1; no "
        "restarts left, it stays down"), "hint": report["crash"]["hint"]}  # type: ignore[index]
    cause = {"kind": "other_traceback", "line": 3, "message": "RuntimeError: boom", "hint": "h"}
    report = {"crash": dict(cause), "lines": 12, "engine": "unknown"}
    with_container_end(report, again, at(again, 2.0))
    assert report["crash"]["line"] == 3  # type: ignore[index]
    assert report["crash"]["message"] == (  # type: ignore[index]
        "crash loop: restarted 1 time in 2 s (--restart on-failure:3) — other_traceback: "
        "RuntimeError: boom")
    # a kill without restarts does not hide the log's own cause
    report = {"crash": dict(cause), "lines": 12, "engine": "unknown"}
    with_container_end(report, oom, at(oom, 1.0))
    assert report["crash"] == cause
    report = {"crash": None, "lines": 5, "engine": "unknown"}
    with_container_end(report, oom, at(oom, 1.0))
    assert report["crash"]["kind"] == "killed"  # type: ignore[index]
