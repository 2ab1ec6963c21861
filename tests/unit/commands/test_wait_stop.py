"""``wait`` gives its verdict even when a source will not stop (bounded, and named on stderr)."""

from __future__ import annotations

import asyncio
import time

import pytest

from eagle_tui.commands.wait import stopped


async def test_a_source_that_will_not_stop_is_named_and_left_behind(
        capsys: pytest.CaptureFixture[str]) -> None:
    ended = asyncio.Event()

    async def stubborn() -> None:  # swallows the session's cancellation; ends on a second one
        for _ in range(2):
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                continue
        ended.set()

    helper = asyncio.create_task(stubborn(), name="source:stuck")

    async def session() -> None:
        await helper

    runner = asyncio.create_task(session(), name="session")
    await asyncio.sleep(0)
    t0 = time.monotonic()
    await stopped(runner, 0.3)
    assert time.monotonic() - t0 < 2.0
    err = capsys.readouterr().err
    assert err.startswith("eagle-tui wait: warning: the sources did not stop within 0.3 s (")
    assert "source:stuck" in err and err.count("\n") == 1
    helper.cancel()
    await asyncio.wait_for(ended.wait(), 5)


async def test_a_session_that_stops_gives_its_result_or_its_error() -> None:
    async def ok() -> None:
        await asyncio.sleep(0.01)

    await stopped(asyncio.create_task(ok()), 5.0)

    async def broken() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await stopped(asyncio.create_task(broken()), 5.0)
