"""The container log source over a scripted host: a ``logs --follow`` that ends while the
container's run goes on is followed again without a new run (and not at once); a run started
after the lines read is a new run; the CLI's own lines are notes, never log lines."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.events import Event, LogLine, LogRestarted
from eagle_tui.sources.containers.logs import ContainerLog
from eagle_tui.transport.base import RunResult, TransportError

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


class CutHost(Host):
    """Every ``logs`` reads the whole log again (more than ``--since`` gives: the window must
    skip it); each but the last fails after its script's lines, before any pause in them."""

    async def stream_lines(self, argv: list[str], *, stderr: bool = False
                           ) -> AsyncIterator[bytes]:
        last = len(self.scripts) == 1
        async for line in super().stream_lines(argv, stderr=stderr):
            yield line
        if not last:
            raise TransportError("the CLI was killed")


async def _retried(source: ContainerLog, lines: int, limit: float) -> list[str]:
    """The source run as the session runs it (retried after a failure), until ``lines`` log
    lines came or ``limit`` s passed; their texts."""
    out: list[Event] = []

    def texts() -> list[str]:
        return [e.text for e in out if type(e) is LogLine]

    async def run() -> None:
        while len(texts()) < lines:
            try:
                async for item in source.events():
                    out.extend(item if isinstance(item, list) else [item])
                    if len(texts()) >= lines:
                        return
                return
            except TransportError:
                await asyncio.sleep(0.01)

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(run(), limit)
    return texts()


async def test_lines_held_while_catching_up_survive_a_failed_follow() -> None:
    """A follow that fails while catching up (its lines held for the backlog's end) is
    retried by the session; the lines it read were marked as handed out, so the next follow
    skips them: they are handed out, not dropped, and in order."""
    old = "2026-12-02T07:59:00.000000000Z"
    host = CutHost([[T1 + b" a", T1 + b" b", T2 + b" c"],
                    [T1 + b" a", T1 + b" b", T2 + b" c", T2 + b" d", T2 + b" e"]], [old])
    source = ContainerLog(host, "srv", cli="docker", catchup_lines=100, poll=0.2)  # type: ignore[arg-type]
    assert await _retried(source, 5, 1.5) == ["a", "b", "c", "d", "e"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 2), min_size=1, max_size=12),
       st.lists(st.integers(0, 12), max_size=4))
def test_failed_follows_lose_and_double_nothing(steps: list[int], cuts: list[int]) -> None:
    """Lines (several to a stamp) read by follows that fail after any number of them, each
    retried as the session retries a source: every line is handed out once, in order."""
    lines, second = [], 1
    for i, step in enumerate(steps):
        second += step
        lines.append(f"2026-12-02T08:00:{second:02d}.000000000Z line{i}".encode())
    host = CutHost([lines[:cut] for cut in cuts] + [lines], ["2026-12-02T07:59:00Z"])
    source = ContainerLog(host, "srv", cli="docker", catchup_lines=100, poll=0.01)  # type: ignore[arg-type]
    texts = asyncio.run(_retried(source, len(lines), 2.0))
    assert texts == [f"line{i}" for i in range(len(lines))]
