"""The container log source over a scripted host: a ``logs --follow`` that ends while the
container's run goes on is followed again without a new run (and not at once); a run started
after the lines read is a new run; the CLI's own lines are notes, never log lines."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from eagle_tui.model.events import Event, LogLine, LogRestarted
from eagle_tui.sources.containers.logs import ContainerLog
from eagle_tui.transport.base import RunResult

T1 = b"2026-12-02T08:00:01.000000000Z"
T2 = b"2026-12-02T08:00:02.000000000Z"


class Host:
    """Each ``logs`` call answers the next script; ``inspect`` answers ``started``."""

    host = ""

    def __init__(self, scripts: list[list[bytes]], started: list[str]) -> None:
        self.scripts = scripts
        self.started = started
        self.argvs: list[list[str]] = []

    async def run(self, argv: list[str], timeout: float = 10.0, *,
                  stdin: bytes | None = None) -> RunResult:
        started = self.started.pop(0) if len(self.started) > 1 else self.started[0]
        doc = [{"State": {"Running": True, "StartedAt": started}}]
        return RunResult(0, json.dumps(doc).encode(), b"")

    async def stream_lines(self, argv: list[str], *, stderr: bool = False
                           ) -> AsyncIterator[bytes]:
        self.argvs.append(argv)
        for line in self.scripts.pop(0) if self.scripts else []:
            yield line
        if not self.scripts:
            await asyncio.sleep(30)  # the last follow stays open


async def _collect(source: ContainerLog, limit: float = 1.5) -> list[Event]:
    out: list[Event] = []

    async def run() -> None:
        async for item in source.events():
            out.extend(item if isinstance(item, list) else [item])

    try:
        await asyncio.wait_for(run(), limit)
    except TimeoutError:
        pass
    return out


async def test_a_follow_that_ends_while_the_run_goes_on_is_no_new_run() -> None:
    old = "2026-12-02T07:59:00.000000000Z"  # before the lines: the same run
    host = Host([[T1 + b" a", b"Error: a note of the CLI", T2 + b" b"],
                 [T1 + b" a", T2 + b" b", T2 + b" c"]], [old])
    source = ContainerLog(host, "srv", cli="docker", catchup_lines=100, poll=0.2)  # type: ignore[arg-type]
    events = await _collect(source)
    assert [e.text for e in events if type(e) is LogLine] == ["a", "b", "c"]
    assert not any(type(e) is LogRestarted for e in events)
    assert list(source.notes) == ["Error: a note of the CLI"]
    assert host.argvs[1][host.argvs[1].index("--since") + 1] < T1.decode()  # resumed before


async def test_a_run_started_after_the_lines_read_is_a_new_run() -> None:
    new = "2026-12-02T08:00:05.000000000Z"
    host = Host([[T1 + b" a"], [T1 + b" a", b"2026-12-02T08:00:06Z a"]], [new])
    source = ContainerLog(host, "srv", cli="podman", catchup_lines=100, poll=0.2)  # type: ignore[arg-type]
    events = await _collect(source)
    assert [e.text for e in events if type(e) is LogLine] == ["a", "a"]
    assert sum(type(e) is LogRestarted for e in events) == 1
