"""A source that is stopped stops: cancelling a task inside ``SshTransport.run`` always ends it.

Python 3.11's ``asyncio.wait_for`` swallows a cancellation that arrives as the awaited read
completes; a stopped process source then polled forever and ``wait``/``launch`` never returned.
Cancels land at random moments of back-to-back commands on the loopback sshd; every one must
take (with ``wait_for`` several of the 150 did not).
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest


@pytest.mark.sshd
async def test_every_cancel_of_a_polling_task_takes(sshd: Any) -> None:
    rng = random.Random(21)
    stuck = 0
    async with sshd.transport() as t:
        for _ in range(150):
            async def poll() -> None:
                while True:
                    await t.run(["true"])

            task = asyncio.create_task(poll())
            await asyncio.sleep(rng.uniform(0.0, 0.03))
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=2)
            if not done:
                stuck += 1
                task.cancel()
                await asyncio.wait({task}, timeout=2)
    assert stuck == 0
