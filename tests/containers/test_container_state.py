"""The container state source against real containers (podman, and the docker CLI through its
API socket): a memory-limited container killed by its limit, and ``--restart on-failure:N``
whose rising RestartCount the dashboard sees as new runs."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

import pytest

from eagle_tui.model.containers.inspect import facts_of
from eagle_tui.model.containers.states import status_text
from eagle_tui.model.events import Event, ProcessExited, ProcessSample
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.sources.containers.cli import ContainerCli
from eagle_tui.sources.containers.state import ContainerStateSource
from eagle_tui.transport.local import LocalTransport
from tests.support.containers import ContainerEngine


@pytest.fixture
def engine_env(containers: ContainerEngine, monkeypatch: pytest.MonkeyPatch) -> ContainerEngine:
    for key, value in containers.env.items():  # the CLIs this process starts find the engine
        monkeypatch.setenv(key, value)
    return containers


def first_pids(events: list[Event]) -> list[int]:
    """Each run's first process, in order (the source samples it)."""
    return list(dict.fromkeys(e.pid for e in events if isinstance(e, ProcessSample)))


async def collect(source: ContainerStateSource, done: Callable[[list[Event]], bool],
                  timeout: float) -> list[Event]:
    """The source's events until ``done`` says so (or ``timeout``)."""
    got: list[Event] = []

    async def run() -> None:
        async for batch in source.events():
            got.extend(batch if isinstance(batch, list) else [batch])
            if done(got):
                return

    try:
        await asyncio.wait_for(run(), timeout)
    except TimeoutError:
        pass
    return got


def exits_of(events: list[Event]) -> list[ProcessExited]:
    return [e for e in events if isinstance(e, ProcessExited)]


@pytest.mark.parametrize("cli", ["podman", "docker"])
async def test_memory_limited_container_killed_is_likely_oom(
        engine_env: ContainerEngine, cli: str) -> None:
    name = engine_env.name("oom")
    # grows past its 64 MiB limit after a moment (cgroup v1 here: exit 137, OOMKilled false)
    engine_env.run(name, [sys.executable, "-c", "import time; time.sleep(1.5); "
                          "x = [bytearray(8 << 20) for _ in range(64)]; time.sleep(60)"],
                   options=["--memory", "64m", "--memory-swap", "64m"])
    try:
        source = ContainerStateSource(ContainerCli(LocalTransport(), cli), name, interval=0.5)
        events = await collect(source, lambda got: bool(exits_of(got)), 30)
        [ended] = [e for e in events if isinstance(e, ProcessExited)]
        assert ended.exit_code == 137 and ended.memory_limit == 64 << 20
        state = reduce(DashboardState(), events)
        crash = state.startup.crash
        assert crash is not None and crash.kind == "killed"
        assert crash.message.startswith("killed, likely OOM at 64 MiB"), crash.message
        facts = facts_of(await source.cli.inspect(name))
        assert facts is not None and status_text(facts).startswith("killed, likely OOM at 64 MiB")
    finally:
        engine_env.remove(name)


async def test_restarts_are_new_runs(engine_env: ContainerEngine) -> None:
    name = engine_env.name("restart")
    engine_env.run(name, ["sh", "-c", "sleep 1.5; exit 3"],
                   options=["--restart", "on-failure:2"])
    try:
        source = ContainerStateSource(ContainerCli(LocalTransport(), "podman"), name,
                                      interval=0.3)
        # until the third run's own end
        events = await collect(source, lambda got: len(pids := first_pids(got)) == 3 and any(
            e.pid == pids[2] for e in exits_of(got)), 40)
        exits, pids = exits_of(events), first_pids(events)
        assert len(pids) == 3, pids  # each run its own first process
        assert exits[-1].pid == pids[2] and exits[-1].exit_code == 3, exits
        assert exits[-1].restarts == 2
        # every run's end told; a restarted end seen exited first is told again when seen
        # restarted (a loop's end, of the exited container's pid 0): one more per restart at
        # most; a restart quicker than a look leaves its exit code unknown (the container
        # already runs again, its exit code reset)
        assert set(pids) <= {e.pid for e in exits} <= {*pids, 0}, exits
        assert len(exits) <= len(pids) + 2, exits
        assert all(e.exit_code in (3, None) for e in exits), exits
        assert [e.restarts for e in exits] == sorted(e.restarts for e in exits)
        state = reduce(DashboardState(), events)
        assert state.startup.restarts == 2  # two new runs after the first
        assert state.live.process_exit is not None
    finally:
        engine_env.remove(name)
