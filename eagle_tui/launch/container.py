"""Start and stop a launched container: the user's ``docker``/``podman run``, framed.

The run is started through the same framing as a process launch (:func:`~eagle_tui.launch.
process.run_framed`: environment values on stdin), with the words of
:func:`~eagle_tui.model.launching.container_launch.framed` (``-d``, the run's label, a name);
the container's id is read from the CLI's stdout. Stopping is the CLI's ``stop -t GRACE`` (its
TERM, then KILL after the grace), then ``rm`` unless the container is kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from eagle_tui.launch.process import LaunchError, Stopped, run_argv, run_framed
from eagle_tui.model.launching.container import ContainerRun
from eagle_tui.model.launching.container_launch import (
    NAME_PREFIX,
    container_id,
    framed,
    given_name,
)
from eagle_tui.sources.containers.cli import ContainerCli, ContainerError, NoSuchContainer
from eagle_tui.transport.base import Transport

_STOP_SLACK_S = 30.0  # the CLI's own time around the grace it is given
PULL_LIMIT_S = 1800.0  # ``run`` pulls a missing image first: an engine's image is many GB


@dataclass(frozen=True)
class ContainerLaunched:
    """A started container: its CLI, id and name, the image, and the run's token (its label)."""

    cli: str
    id: str
    name: str
    image: str
    token: str

    @property
    def log_path(self) -> str:
        return ""  # (the container's log is the CLI's ``logs``)

    @property
    def log_offset(self) -> int:
        return 0

    @property
    def pid(self) -> int:
        return 0

    @property
    def where(self) -> str:
        return f"container {self.name} · {self.image[:80]}"

    @property
    def started_text(self) -> str:
        return f"container {self.name} ({self.id[:12]}, {self.cli}), image {self.image}"

    def follow(self) -> dict[str, Any]:
        """What the dashboard follows: the container, as ``watch --container`` does."""
        return {"log": None, "log_offset": 0, "pid": None, "container": self.id,
                "container_cli": self.cli}

    async def stop(self, transport: Transport, *, grace: float, keep: bool = False) -> Stopped:
        """``CLI stop -t GRACE``, then ``CLI rm`` unless ``keep``; a container already gone
        is said so."""
        cli = ContainerCli(transport, self.cli)
        shown = f"container {self.name} ({self.id[:12]})"
        seconds = max(0, math.ceil(grace))
        try:
            state = (await cli.inspect(self.id)).get("State")
            running = not isinstance(state, dict) or state.get("Running") is not False
            if running:
                await cli.run(self.id, "stop", "-t", str(seconds), self.id,
                              timeout=seconds + _STOP_SLACK_S)
        except NoSuchContainer:
            return Stopped(f"{shown} is gone already (removed)", False)
        except ContainerError as exc:
            return Stopped(f"{shown} not stopped: {exc}", True, left=True)
        done = await _how_stopped(cli, self.id, seconds) if running else "had exited"
        if keep:
            kept = await self._free_name(cli)
            return Stopped(f"{shown} {done} (kept{kept}: {self.cli} rm {self.id[:12]} removes "
                           "it)", running)
        try:
            await cli.run(self.id, "rm", self.id, timeout=_STOP_SLACK_S)
        except NoSuchContainer:  # (``--rm``: the engine removed it on its stop)
            pass
        except ContainerError as exc:
            return Stopped(f"{shown} {done}, not removed: {exc}", running, left=True)
        return Stopped(f"{shown} {done} and removed", running)

    async def _free_name(self, cli: ContainerCli) -> str:
        """A kept container named by the user is renamed ``NAME-ID6``: the name goes with the
        run's command, which a relaunch starts again (``" as NEW"``, or ``""``)."""
        if self.name.startswith(NAME_PREFIX) or self.name == self.id[:12]:
            return ""
        new = f"{self.name[:200]}-{self.id[:6]}"
        try:
            await cli.run(self.id, "rename", self.id, new, timeout=_STOP_SLACK_S)
        except ContainerError:
            return ""
        return f" as {new}"


async def _how_stopped(cli: ContainerCli, cid: str, grace: int) -> str:
    """``stopped``, or how: its exit code 137 is the KILL after the grace (a first process
    that ignores TERM, as a PID 1 without a handler does: ``--init`` gives it one)."""
    try:
        state = (await cli.inspect(cid)).get("State")
    except ContainerError:
        return "stopped"
    code = state.get("ExitCode") if isinstance(state, dict) else None
    if code == 137:
        return f"stopped (KILLed after the {grace} s grace: TERM did not end it)"
    return f"stopped (exit code {code})" if isinstance(code, int) and code else "stopped"


async def start_container(transport: Transport, run: ContainerRun, *, cwd: str, token: str,
                          name: str, env: dict[str, str], pass_env: list[str],
                          timeout: float = PULL_LIMIT_S) -> tuple[ContainerLaunched, list[str]]:
    """Start ``run`` detached (see the module docstring): the container, and the words run."""
    argv = framed(run, token=token, name=name, env_names=pass_env)
    # (``K=V`` before the CLI: its environment, on stdin as the rest)
    res = await run_framed(transport, run_argv(argv), cwd=cwd, env=env, timeout=timeout)
    out = res.stdout.decode("utf-8", "replace")
    if res.exit_code != 0:
        err = res.stderr.decode("utf-8", "replace").strip().splitlines()
        why = err[-1][:300] if err else f"exit {res.exit_code}"
        raise LaunchError(f"could not start the container: {run.cli}: {why}")
    cid = container_id(out)
    if cid is None:
        raise LaunchError(f"could not start the container: {run.cli} printed no container id "
                          f"({out.strip()[-60:]!r})")
    return ContainerLaunched(run.cli, cid, given_name(run) or name, run.image, token), argv


__all__ = ["PULL_LIMIT_S", "ContainerLaunched", "start_container"]
