"""Ask the hosts of the fleet's ``up == 0`` instances what they are: starting, down or crashed.

Why: Prometheus alone reads a loading server and a dead one the same (``up == 0``). For an
instance whose host maps to an SSH destination (``--ssh-map``, ``~/.ssh/config``), the prober
looks on that host with the ordinary, nothing-installed tools: discovery's process scan and
the end of its log (``tail -c``), read by the dashboard's own parser
(:func:`~eagle_tui.model.fleet.probe.probe_hint`). The answers become the poller's
per-instance ``hints``.

Bounded, so a fleet of hundreds of down instances cannot stall anything: probes run in the
background, never in the refresh; at most ``max_hosts`` hosts at once, each within
``deadline_s``; answers (and failures) cached for ``ttl_s``. docs/architecture.md ("Module
notes") has the details, and why a server seen once is remembered.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from eagle_tui.model.boundary.grammar import GrammarError, remote_path
from eagle_tui.model.fleet.hosts import SshRule, ssh_destination
from eagle_tui.model.fleet.probe import probe_hint
from eagle_tui.model.fleet.snapshot import FleetSnapshot
from eagle_tui.transport.base import Transport, TransportError

DEFAULT_MAX_HOSTS = 8
DEFAULT_DEADLINE_S = 10.0
DEFAULT_TTL_S = 10.0
TAIL_BYTES = 64 * 1024  # a crash's traceback and root cause fit many times over


def _port(instance: str) -> int | None:
    port = instance.rpartition(":")[2]
    return int(port) if port.isdigit() else None


@dataclass
class FleetProber:
    """Per-instance hints from the hosts; ``connect(dest)`` makes a (not yet connected)
    transport for an SSH destination."""

    rules: list[SshRule]
    config_hosts: set[str]
    connect: Callable[[str], Transport]
    max_hosts: int = DEFAULT_MAX_HOSTS
    deadline_s: float = DEFAULT_DEADLINE_S
    ttl_s: float = DEFAULT_TTL_S
    clock: Callable[[], float] = time.monotonic
    answers: dict[str, tuple[float, str]] = field(default_factory=dict)  # inst -> (t, hint)
    # dest -> why its probe failed; a label the grammar gate refused -> why (at most 1024)
    errors: dict[str, str] = field(default_factory=dict)
    probes: int = 0
    _asked: dict[str, float] = field(default_factory=dict)  # dest -> when last probed
    _logs: dict[str, str] = field(default_factory=dict)  # inst -> its log path, once seen
    _transports: dict[str, Transport] = field(default_factory=dict)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _inflight: set[str] = field(default_factory=set)  # a host is never probed twice at once
    _slots: asyncio.Semaphore | None = None

    def hints(self) -> dict[str, str]:
        """The answers not older than ``ttl_s`` (the poller's ``hints``)."""
        now = self.clock()
        return {i: h for i, (t, h) in self.answers.items() if now - t <= self.ttl_s}

    def observe(self, snap: FleetSnapshot) -> None:
        """Start probes for the snapshot's down instances whose hosts map to SSH (no wait)."""
        self.start([r.instance for r in snap.rows if r.up is False and not r.stale])

    def start(self, instances: Iterable[str]) -> None:
        now = self.clock()
        by_dest: dict[str, list[str]] = {}
        for inst in instances:
            try:
                dest = ssh_destination(inst, self.rules, self.config_hosts)
            except GrammarError as exc:  # a label no host name can come from: never probed
                if inst in self.errors or len(self.errors) < 1024:
                    self.errors[inst] = str(exc)
                continue
            if dest is not None:
                by_dest.setdefault(dest, []).append(inst)
        for dest, insts in by_dest.items():
            last = self._asked.get(dest)
            if dest in self._inflight or (last is not None and now - last < self.ttl_s):
                continue
            self._inflight.add(dest)
            self._asked[dest] = now
            task = asyncio.get_running_loop().create_task(self._bounded(dest, insts))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _bounded(self, dest: str, instances: list[str]) -> None:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_hosts)
        try:
            async with self._slots:
                await self._probe_one(dest, instances)
        finally:
            self._inflight.discard(dest)

    async def _probe_one(self, dest: str, instances: list[str]) -> None:
        """One probe within the deadline (a slot held); its answers or its error recorded."""
        self.probes += 1
        try:
            found = await asyncio.wait_for(self.probe(dest, instances), self.deadline_s)
        except (TransportError, OSError, TimeoutError) as exc:
            self.errors[dest] = str(exc) or type(exc).__name__
            await self._drop(dest)
            return
        self.errors.pop(dest, None)
        now = self.clock()
        self.answers.update({i: (now, h) for i, h in found.items()})

    async def probe(self, dest: str, instances: list[str]) -> dict[str, str]:
        """One host: its engine processes, then each down instance's log tail → its hint."""
        from eagle_tui.probe.discover import discover

        tr = self._transports.get(dest)
        if tr is None:
            tr = self._transports[dest] = self.connect(dest)
            connect = getattr(tr, "connect", None)
            if connect is not None:
                await connect(retry=False)
        servers = {f.port: f for f in await discover(tr, timeout=self.deadline_s)}
        out: dict[str, str] = {}
        for inst in instances:
            port = _port(inst)
            server = servers.get(port) if port is not None else None
            if server is not None and server.log_kind == "file" and server.log_path:
                self._logs[inst] = server.log_path
            log = self._logs.get(inst)
            out[inst] = probe_hint(server is not None, await self._tail(tr, log) if log else None)
        return out

    async def _tail(self, tr: Transport, path: str) -> bytes | None:
        try:  # the path came from the host's process scan: outside text
            remote_path(path)
        except GrammarError:
            return None
        res = await tr.run(["tail", "-c", str(TAIL_BYTES), "--", path], self.deadline_s)
        return res.stdout if res.exit_code == 0 else None

    async def _drop(self, dest: str) -> None:
        tr = self._transports.pop(dest, None)
        if tr is not None:
            with contextlib.suppress(TransportError, OSError):
                await tr.close()

    async def close(self) -> None:
        """Cancel the probes in flight and close every connection."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for dest in list(self._transports):
            await self._drop(dest)


__all__ = ["FleetProber"]
