"""A container's state as the user sees it and as the dashboard's events, from the recorded
inspect output (tests/fixtures/containers/): OOMKilled, exit 137 with a memory limit, a rising
RestartCount as a new run; and the server URL from the command line and the network."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from eagle_tui.model.containers.inspect import ContainerFacts, PortMap, read_inspect
from eagle_tui.model.containers.server import image_engine, server_of
from eagle_tui.model.containers.states import epoch, observe, size_text, status_text
from eagle_tui.model.events import ProcessExited, ProcessSample
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.probe.tables import load_tables

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "containers"
TABLES = load_tables()


def facts(name: str) -> ContainerFacts:
    return read_inspect((FIX / name).read_text())[0]


def test_oomkilled_is_said_with_its_limit_and_restarts() -> None:
    f = facts("dockerd-inspect-oomkilled.json")
    assert status_text(f) == "killed: out of memory (OOMKilled) at 16 GiB; restarted 2 times"
    assert f.compose == "llm/sglang" and facts("dockerd-inspect-vllm-published.json").compose == ""


def test_exit_137_with_a_limit_and_no_flag_is_likely_oom() -> None:
    f = facts("podman-inspect-killed.json")
    assert status_text(f).startswith("killed, likely OOM at 256 MiB")
    assert status_text(replace(f, memory_limit=0)).startswith("killed (exit 137: SIGKILL")
    assert status_text(replace(f, exit_code=1)) == "exited with code 1"
    assert status_text(replace(f, exit_code=143)) == "exited with code 143 (signal 15)"


def test_live_states() -> None:
    f = facts("podman-inspect-running.json")
    assert status_text(f) == "running"
    assert status_text(replace(f, restart_count=3)) == "running; restarted 3 times"
    assert status_text(replace(f, status="paused")) == "paused"
    assert status_text(replace(f, status="restarting", restart_count=1, pid=0)) == \
        "restarting (restart 2, policy on-failure:2)"
    assert size_text(1536 << 20) == "1.5 GiB" and size_text(100) == "100 B"


def test_started_at_as_epoch() -> None:
    assert epoch("2026-12-02T08:25:38.757291725Z") == 1796199938.757291
    assert epoch("2026-12-02T09:25:38+01:00") == 1796199938.0
    assert epoch("") is None and epoch("garbage") is None and epoch("9" * 100) is None


def test_the_killed_container_is_a_crash_naming_the_limit() -> None:
    running, killed = facts("podman-inspect-running.json"), facts("podman-inspect-killed.json")
    state = reduce(DashboardState(), observe(None, running, 10.0))
    assert state.live.process is not None and state.live.process.pid == 14092
    events = observe(running, killed, 12.0)
    assert isinstance(events[0], ProcessExited) and events[0].exit_code == 137
    state = reduce(state, events)
    crash = state.startup.crash
    assert crash is not None and crash.kind == "killed"
    assert crash.message.startswith("killed, likely OOM at 256 MiB")
    oom = facts("dockerd-inspect-oomkilled.json")
    state = reduce(reduce(DashboardState(), observe(None, replace(
        oom, status="running", pid=77, exit_code=0, oom_killed=False), 1.0)),
        observe(replace(oom, status="running", pid=77), oom, 2.0))
    assert state.startup.crash is not None
    # (restarted by its policy: a crash loop, tests/unit/model/containers/test_crash_loop.py)
    assert state.startup.crash.message == ("killed: out of memory (OOMKilled) at 16 GiB; "
                                           "crash loop: restarted 2 times (--restart "
                                           "on-failure:5); last exit code 137")


def test_a_rising_restart_count_is_a_new_run() -> None:
    running = facts("podman-inspect-running.json")
    state = reduce(DashboardState(), observe(None, running, 10.0))
    # restarted between two looks: a new first process, one more restart
    again = replace(running, pid=15000, restart_count=1, exit_code=1)
    events = observe(running, again, 11.0)
    assert [type(e) for e in events] == [ProcessExited, ProcessSample]
    state = reduce(state, events)
    assert state.startup.restarts == 1 and state.live.process is not None
    assert state.live.process.pid == 15000 and state.live.process_exit is None
    # seen restarting in between: the exit then, the new run when it runs
    restarting = replace(again, status="restarting", pid=0, exit_code=137)
    state = reduce(state, observe(again, restarting, 12.0))
    assert state.live.process_exit is not None and state.live.process_exit.exit_code == 137
    state = reduce(state, observe(restarting, replace(again, pid=16000, restart_count=2), 13.0))
    assert state.startup.restarts == 2 and state.live.process_exit is None
    # the same run looked at again: nothing new; paused, its process says so
    assert [type(e) for e in observe(again, again, 14.0)] == [ProcessSample]
    third = replace(again, pid=16000, restart_count=2)
    [paused] = observe(third, replace(third, status="paused"), 15.0)
    assert isinstance(paused, ProcessSample) and paused.status == "paused"
    state = reduce(state, [paused])
    assert state.live.process is not None and state.live.process.status == "paused"
    assert state.startup.restarts == 2


def test_gone_and_first_seen_exited() -> None:
    running = facts("podman-inspect-running.json")
    [gone] = observe(running, None, 5.0)
    assert isinstance(gone, ProcessExited) and gone.pid == 14092 and gone.exit_code is None
    killed = facts("podman-inspect-killed.json")
    [ended] = observe(None, killed, 5.0)
    assert isinstance(ended, ProcessExited) and ended.exit_code == 137 and ended.signal == 9
    assert observe(killed, killed, 6.0) == []  # told once
    # restarting, then a run that started and ended between two looks: its end is told
    restarting = replace(killed, status="restarting", restart_count=1)
    assert observe(killed, restarting, 7.0) == []
    [short] = observe(restarting, replace(killed, restart_count=2, started_at="later"), 8.0)
    assert isinstance(short, ProcessExited) and short.restarts == 2


def test_server_url_from_command_and_network() -> None:
    oom = facts("dockerd-inspect-oomkilled.json")
    s = server_of(oom, TABLES)
    assert s is not None and s.engine == "sglang" and s.port == 30000
    assert (s.url, s.via) == ("http://127.0.0.1:30000", "published 30000->30000")
    v = server_of(facts("dockerd-inspect-vllm-published.json"), TABLES)
    assert v is not None and v.engine == "vllm" and v.port == 8000
    assert v.url == "http://127.0.0.1:8001"
    # not published: the container's own address
    v2 = server_of(replace(facts("dockerd-inspect-vllm-published.json"), ports=()), TABLES)
    assert v2 is not None and v2.url == "http://172.17.0.3:8000"
    # host network: the engine's --port (and --host where it names one)
    host = replace(oom, network_mode="host", ports=())
    s2 = server_of(host, TABLES)
    assert s2 is not None and (s2.url, s2.via) == ("http://127.0.0.1:30000", "host network")
    bound = replace(host, command=(*host.command[:-4], "--host", "10.0.0.5", "--port", "31000"))
    s3 = server_of(bound, TABLES)
    assert s3 is not None and s3.url == "http://10.0.0.5:31000"


def test_engine_by_image_or_shell_script() -> None:
    assert image_engine("lmsysorg/sglang:v0.5.2-cu126") == "sglang"
    assert image_engine("docker.io/vllm/vllm-openai@sha256:abc") == "vllm"
    assert image_engine("registry.local:5000/mirror/lmsysorg/sglang") == "sglang"
    assert image_engine("redis:alpine") is None and image_engine("") is None
    oom = facts("dockerd-inspect-oomkilled.json")
    by_image = server_of(replace(oom, command=("/bin/bash",)), TABLES)
    assert by_image is not None and by_image.engine == "sglang" and by_image.cmd is None
    script = ("sh", "-c", "pip install x && exec python3 -m sglang.launch_server --port 31001")
    s = server_of(replace(oom, image="me/custom", command=script, network_mode="host"), TABLES)
    assert s is not None and s.url == "http://127.0.0.1:31001"
    assert server_of(replace(oom, image="redis", command=("redis-server",)), TABLES) is None
    sim = facts("podman-inspect-running.json")  # the simulator is no engine's entry point
    assert server_of(sim, TABLES) is None


def test_ports_that_do_not_match_the_server() -> None:
    v = facts("dockerd-inspect-vllm-published.json")
    other = replace(v, ports=(PortMap(9000, "tcp", "0.0.0.0", 9001),
                              PortMap(8000, "udp", "", 8002)), ip_address="")
    s = server_of(other, TABLES)
    assert s is not None and (s.url, s.via) == ("", "not published")


def test_a_restart_told_by_the_log_and_by_the_process_is_one_run() -> None:
    from eagle_tui.model.containers.states import RESTARTED
    from eagle_tui.model.events import LogLine, LogRestarted, Phase, PhaseEvent

    running = facts("podman-inspect-running.json")
    again = replace(running, pid=15000, restart_count=1)
    first = reduce(DashboardState(), [*observe(None, running, 10.0),
                                      PhaseEvent(Phase.INIT, 1, None)])
    new_lines = [LogLine(1, "server_args=..."), PhaseEvent(Phase.INIT, 1, None)]
    # the log's restart first (and the new run's first line), then the new process
    log_first = reduce(first, [LogRestarted(RESTARTED, "", 11.0), *new_lines])
    log_first = reduce(log_first, observe(running, again, 11.5))
    # the new process first, then the log's restart and its lines
    proc_first = reduce(first, observe(running, again, 11.0))
    proc_first = reduce(proc_first, [LogRestarted(RESTARTED, "", 11.5), *new_lines])
    for state in (log_first, proc_first):
        assert state.startup.restarts == 1
        assert state.startup.phase_mark(Phase.INIT) is not None  # the new run's line kept
        assert state.live.process is not None and state.live.process.pid == 15000
    # a later restart is counted again
    third = replace(again, pid=16000, restart_count=2)
    later = reduce(proc_first, observe(again, again, 13.0))
    later = reduce(later, observe(again, third, 14.0))
    assert later.startup.restarts == 2
