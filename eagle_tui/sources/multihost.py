"""One GPU source for a multi-node run: every host's GPUs in one sample, grouped by host.

Why merge: the state keeps *one* ``GpuSample`` (the latest), so two hosts each sending their own
would replace each other every interval and the GPU pane would flip between them. This source
runs one GPU source per host and emits a single sample holding all GPUs, each ``GpuInfo`` tagged
with its ``host`` (the pane groups by it), in ``--ssh`` order.

A failing host does not take the others down: its stream is retried here with backoff and,
meanwhile, the merged sample says which host is failing and why (``error``), so the user sees
"gpu-b: reconnecting ..." next to gpu-a's live numbers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence

from eagle_tui.model.events import Event, GpuSample, GpuState
from eagle_tui.sources.base import Source

_BACKOFF_FIRST_S = 0.5
_BACKOFF_MAX_S = 10.0


def merge_samples(hosts: Sequence[str], latest: dict[str, GpuSample], t: float) -> GpuSample:
    """All hosts' GPUs in host order; ``ok`` if any host is, errors listed per host."""
    gpus = tuple(g for h in hosts if h in latest for g in latest[h].gpus)
    states = [latest[h].state for h in hosts if h in latest]
    errors = [f"{h}: {latest[h].error or latest[h].state}" for h in hosts
              if h in latest and latest[h].state != "ok"]
    state: GpuState
    if "ok" in states:
        state = "ok"
    elif states and all(s == "no_driver" for s in states):
        state = "no_driver"
    elif "error" in states:
        state = "error"
    else:
        state = "unknown"
    backends = {latest[h].backend for h in hosts if h in latest} - {""}
    return GpuSample(t, state, gpus, error="; ".join(errors), host="",
                     backend=backends.pop() if len(backends) == 1 else "")


class MergedGpu:
    """Runs ``sources`` (one per host, keyed by host name) and merges their ``GpuSample`` s."""

    def __init__(
        self,
        sources: Sequence[tuple[str, Source]],
        *,
        name: str = "gpu",
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not sources:
            raise ValueError("MergedGpu needs at least one source")
        self.name = name
        self.sources = tuple(sources)
        self._clock = clock

    async def events(self) -> AsyncIterator[Event]:
        hosts = [h for h, _ in self.sources]
        latest: dict[str, GpuSample] = {}
        queue: asyncio.Queue[tuple[str, GpuSample]] = asyncio.Queue(maxsize=256)

        async def pump(host: str, src: Source) -> None:
            failures = 0
            while True:
                try:
                    async for ev in src.events():
                        if isinstance(ev, GpuSample):
                            failures = 0
                            await queue.put((host, ev))
                    return  # the host's source has nothing more to say (e.g. no driver)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    failures += 1
                    text = str(exc).strip()
                    why = text.splitlines()[0] if text else type(exc).__name__
                    await queue.put((host, GpuSample(self._clock(), "error", (), error=why,
                                                     host=host)))
                    delay = min(_BACKOFF_MAX_S, _BACKOFF_FIRST_S * 2 ** (failures - 1))
                    await asyncio.sleep(delay)

        tasks = [asyncio.create_task(pump(h, s), name=f"gpu {h}") for h, s in self.sources]
        try:
            while True:
                if all(t.done() for t in tasks) and queue.empty():
                    return
                try:
                    host, sample = await asyncio.wait_for(queue.get(), 1.0)
                except TimeoutError:
                    continue
                latest[host] = sample
                yield merge_samples(hosts, latest, self._clock())
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


__all__ = ["MergedGpu", "merge_samples"]
