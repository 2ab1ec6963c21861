"""A container's state as dashboard events: ``inspect`` polled quietly, ``wait`` for its end.

Every ``interval`` the source asks the CLI's ``inspect`` (one short command, bounded JSON) and
turns what changed into events (:func:`eagle_tui.model.containers.states.observe`): the running
container as a process sample (its first process's host PID, ``.State.Pid``, and its
descendants: psutil here, ``ps`` over SSH, for the GPU pane), its end with the engine's cause
(OOMKilled, exit 137 with a memory limit), a restart as a new run. While the container runs, the
CLI's own ``wait`` (over SSH; here its first process's host PID) is watched beside the polls,
so an exit is seen when it happens, not at the next poll. A container that is removed
(``--rm``, ``rm -f``) ends the source after its exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from eagle_tui.model.containers.inspect import ContainerFacts, facts_of
from eagle_tui.model.containers.states import observe
from eagle_tui.model.events import Event
from eagle_tui.sources.containers.cli import ContainerCli, NoSuchContainer
from eagle_tui.sources.exitwatch import pause, watching
from eagle_tui.sources.remote_process import PS_ARGV, parse_ps, tree
from eagle_tui.transport.base import TransportError

INTERVAL_S = 1.0
_WAIT_TIMEOUT_S = 24 * 3600.0  # ``wait`` blocks for as long as the container runs
_REMOTE_WAIT_S = 30.0  # over SSH each ``wait`` is given this long, then asked again
_LIVE = ("running", "paused", "restarting")
_GONE_CHECK_S = 60.0  # a pidfd's wait is checked against the pid this often all the same
Tree = tuple[tuple[int, ...], int | None, float | None]  # pids, RSS bytes, CPU %


class ContainerStateSource:
    """Events of one container's state; see the module docstring."""

    def __init__(self, cli: ContainerCli, container: str, *, interval: float = INTERVAL_S,
                 clock: Callable[[], float] = time.time) -> None:
        self.cli = cli
        self.container = container
        self.name = f"container {container}"
        self.interval = interval
        self._clock = clock
        self._last: ContainerFacts | None = None  # kept across retries: no run told twice
        self._procs: dict[int, Any] = {}  # psutil.Process by pid (cpu_percent's memory)

    async def facts(self) -> ContainerFacts | None:
        """The container's facts now (None: the engine no longer has it)."""
        try:
            obj = await self.cli.inspect(self.container)
        except NoSuchContainer:
            return None
        return facts_of(obj)

    async def events(self) -> AsyncIterator[Event | list[Event]]:
        waiter: asyncio.Task[object] | None = None
        try:
            while True:
                cur = await self.facts()
                pids: Tree = ((), None, None)
                if cur is not None and cur.pid > 0 and cur.status in ("running", "paused"):
                    pids = await self.host_tree(cur.pid)
                events = observe(self._last, cur, self._clock(), *pids)
                self._last = cur
                if events:
                    yield events
                if cur is None:
                    return  # removed: its end was told; nothing more will come
                live = cur.status in _LIVE
                if live and waiter is None:
                    waiter = asyncio.create_task(
                        self._gone(cur.pid) if self.cli.transport.host == "" and cur.pid > 0
                        else self._wait())
                if waiter is not None:
                    done, _ = await asyncio.wait({waiter}, timeout=self.interval)
                    if done:
                        waiter = None
                else:
                    await asyncio.sleep(self.interval)
        finally:
            if waiter is not None:
                waiter.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await waiter

    async def _wait(self) -> object:
        """The CLI's ``wait`` (returns when the container stops); its errors are the polls'."""
        args = ["wait", self.container]
        if self.cli.program == "podman":
            args[1:1] = ["--interval", "100ms"]  # podman polls every 250 ms by default
        argv = self.cli.argv(*args)
        if self.cli.transport.host:
            # a remote command outlives its closed channel while it prints nothing: bounded,
            # so a dashboard closed while the container runs leaves no ``wait`` behind for long
            argv = ["timeout", str(int(_REMOTE_WAIT_S)), *argv]
        try:
            return await self.cli.transport.run(argv, timeout=_WAIT_TIMEOUT_S)
        except TransportError:
            await asyncio.sleep(self.interval)  # (the next inspect says what is wrong)
            return None

    async def _gone(self, pid: int) -> object:
        """Here: until the container's first process is gone (its pidfd, :mod:`..exitwatch`,
        else psutil every 50 ms: a kill is told at once; a restart's new process replaces a
        gone one). No CLI ``wait`` here: a child cancelled with its session would outlive the
        event loop unreaped."""
        import psutil

        with watching(pid) as watch:
            while psutil.pid_exists(pid):  # (a pid reused before the watch: the inspect tells)
                await pause(watch, _GONE_CHECK_S, 0.05)
        return None

    async def host_tree(self, pid: int) -> Tree:
        """The host PIDs of the container's processes: ``pid`` and its descendants, with their
        RSS and CPU where they can be read (here with psutil; over SSH with ``ps``)."""
        if self.cli.transport.host == "":
            return self._local_tree(pid)
        try:
            res = await self.cli.transport.run(PS_ARGV, timeout=10.0)
        except TransportError:
            return (pid,), None, None
        rows = parse_ps(res.stdout.decode("utf-8", "replace")[: 16 << 20])
        members = tree(pid, rows)[:4096]
        if not members:
            return (pid,), None, None
        return (tuple(r.pid for r in members), sum(r.rss_kib for r in members) * 1024, None)

    def _local_tree(self, pid: int) -> Tree:
        import psutil

        from eagle_tui.sources.process import MAX_TREE, descendants

        try:
            root = psutil.Process(pid)
            members = [root, *descendants(root, self._procs)][:MAX_TREE]
        except psutil.Error:
            return (pid,), None, None
        rss, cpu, pids = 0, 0.0, []
        kept: dict[int, Any] = {}
        for p in members:
            proc = self._procs.get(p.pid, p)
            assert isinstance(proc, psutil.Process)
            try:
                rss += proc.memory_info().rss
                cpu += proc.cpu_percent(None)
            except psutil.Error:
                continue
            pids.append(p.pid)
            kept[p.pid] = proc
        self._procs = kept
        return tuple(pids) or (pid,), rss, round(cpu, 1)


__all__ = ["INTERVAL_S", "ContainerStateSource"]
