"""The demo's small bounded load, started once the simulated server is ready."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from eagle_tui.commands.bench import run_bench
from eagle_tui.model.events import Event
from eagle_tui.model.state import DashboardState

LOAD_MAX_TOKENS = 256
LOAD_REQUESTS = 10_000


def start_load_when_ready(url: str) -> Callable[[DashboardState, Sequence[Event]], None]:
    """A subscriber (on the session's loop) that starts the bounded load once the server at
    ``url`` is ready; the load ends with that loop (a relaunched run gets its own)."""
    tasks: list[asyncio.Task[Any]] = []

    def on_batch(state: DashboardState, _events: Sequence[Event]) -> None:
        if state.startup.ready and not tasks:
            tasks.append(asyncio.create_task(run_bench(
                url, concurrency=1, requests=LOAD_REQUESTS, max_tokens=LOAD_MAX_TOKENS,
                timeout=3600.0)))

    return on_batch
