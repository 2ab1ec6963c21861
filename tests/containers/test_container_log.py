"""A container's log followed through the real CLIs (podman, and docker through podman's API):
nothing doubled or lost when the container restarts mid-follow or the CLI is killed and the
source resumed (``--since`` plus the resume window), and a ``--rm`` container's log kept after
it exits and vanishes. The lines are counted: each run prints ``out I`` and ``err I`` once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import Counter
from collections.abc import Callable

import psutil
import pytest

from eagle_tui.model.events import Event, LogLine, LogRestarted
from eagle_tui.sources.containers.logs import ContainerLog
from eagle_tui.transport.local import LocalTransport
from tests.support.containers import ContainerEngine

N = 60  # lines of each stream per run


def _script(n: int, tail: str) -> list[str]:
    return ["/bin/sh", "-c", f'i=0; while [ $i -lt {n} ]; do echo "out $i"; echo "err $i" >&2; '
            f"i=$((i+1)); sleep 0.02; done; {tail}"]


class Follow:
    """The source run as the session runs it: retried after a failure (at once here)."""

    def __init__(self, source: ContainerLog) -> None:
        self.source = source
        self.texts: list[str] = []
        self.events: list[Event] = []
        self.failures = 0
        self.errors: list[str] = []
        self.done = False

    async def run(self) -> None:
        while True:
            try:
                async for item in self.source.events():
                    for ev in item if isinstance(item, list) else [item]:
                        self.events.append(ev)
                        if type(ev) is LogLine:
                            self.texts.append(ev.text)  # (the stamp stripped)
                self.done = True
                return
            except Exception as exc:
                self.errors.append(str(exc))
                self.failures += 1
                await asyncio.sleep(0.2)

    async def until(self, ok: Callable[[], bool], what: str, limit: float = 60.0) -> None:
        deadline = time.monotonic() + limit
        while not ok():
            assert time.monotonic() < deadline, f"timed out waiting for {what}: {self.texts[-3:]}"
            await asyncio.sleep(0.05)


def _kill_cli(program: str, name: str) -> int:
    """Kill this process's ``PROGRAM logs ... NAME`` child; its pid."""
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            cmd = child.cmdline()
            if cmd[:2] == [program, "logs"] and cmd[-1] == name:
                child.kill()
                return child.pid
    raise AssertionError(f"no {program} logs process for {name}")


@pytest.fixture
def engine_env(containers: ContainerEngine, monkeypatch: pytest.MonkeyPatch) -> ContainerEngine:
    for key, value in containers.env.items():  # the CLIs run by the source read these
        monkeypatch.setenv(key, value)
    return containers


@pytest.mark.parametrize("program", ["podman", "docker"])
async def test_restart_and_killed_cli_lose_and_double_nothing(engine_env: ContainerEngine,
                                                              program: str) -> None:
    name = engine_env.name(f"log-{program}")
    engine_env.run(name, _script(N, "sleep 600"))
    source = ContainerLog(LocalTransport(), name, cli=program, catchup_lines=100_000, poll=0.2)
    follow = Follow(source)
    task = asyncio.create_task(follow.run())
    try:
        await follow.until(lambda: len(follow.texts) >= 30, "the first lines")
        _kill_cli(program, name)  # mid-run: the source fails and resumes from its window
        await follow.until(lambda: len(follow.texts) >= 2 * N, "the first run's lines")
        # (a loaded host may fail a resumed CLI once more: the counts below are what matters)
        assert follow.failures >= 1 and source.follows >= 2, follow.errors
        restarted = await asyncio.to_thread(engine_env.podman, "restart", "-t", "0", name)
        assert restarted.returncode == 0, restarted.stderr
        await follow.until(lambda: len(follow.texts) >= 4 * N, "the second run's lines")
        _kill_cli(program, name)  # and once more while nothing is written
        await follow.until(lambda: source.follows >= 4, "the resumed follow")
        await asyncio.sleep(1.0)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        engine_env.remove(name)
    expected = Counter({f"{s} {i}": 2 for s in ("out", "err") for i in range(N)})
    assert Counter(follow.texts) == expected
    assert sum(type(ev) is LogRestarted for ev in follow.events) == 1
    for s in ("out", "err"):  # each stream in its order, run after run
        assert [t for t in follow.texts if t.startswith(s)] == [f"{s} {i}" for i in range(N)] * 2


async def test_a_removed_containers_log_is_kept(engine_env: ContainerEngine) -> None:
    name = engine_env.name("rm")
    engine_env.run(name, _script(N, "sleep 1.5"), options=["--rm"])
    source = ContainerLog(LocalTransport(), name, cli="podman", catchup_lines=100_000, poll=0.2)
    follow = Follow(source)
    await asyncio.wait_for(follow.run(), 60)
    assert follow.done and follow.failures == 0  # the container went away: the source ended
    assert Counter(follow.texts) == Counter(f"{s} {i}" for s in ("out", "err") for i in range(N))
    gone = engine_env.podman("ps", "-a", "-q", "--filter", f"name={name}")
    assert gone.stdout.strip() == ""
    assert os.environ["DOCKER_HOST"] == engine_env.env["DOCKER_HOST"]
