"""Gather what the lint checks a container's run against, on the host the container runs on.

The paths the engine reads inside the container are read where they come from: a bind mount's
host folder (``-v /srv/models:/models`` makes ``/models/x`` the host's ``/srv/models/x``), the
host folder mounted as the container's Hugging Face cache for a hub id. The port checked is the
host port that reaches the server (the published one, or the server's own with the host's
network), and the GPUs are those the container is given, numbered as it sees them.
"""

from __future__ import annotations

import asyncio
import dataclasses

from eagle_tui.model.launching.container_checks import (
    ContainerCommand,
    ContainerFacts,
    container_gpus,
    container_paths,
    hf_home,
    host_path,
    host_port,
)
from eagle_tui.model.launching.lint import ConfigFact, LintFacts
from eagle_tui.probe.facts import cpu_build, free_port, gpus, port_in_use, read_config
from eagle_tui.transport.base import Transport


async def _config(cc: ContainerCommand, transport: Transport, path: str,
                  cwd: str | None) -> ConfigFact | None:
    """The config of a path as the container reads it (``None``: the host cannot show it)."""
    if path.startswith("/"):
        found, mount = host_path(cc.run, path)
        if found is None or mount is None:
            return None
        fact = await read_config(transport, found, cwd)
        return dataclasses.replace(fact, given=path, detail=fact.detail and
                                   f"on the host at {found}, mounted by {mount.typed}")
    home, _mount = host_path(cc.run, hf_home(cc.run))
    if home is None:
        return None
    return await read_config(transport, path, cwd, hf_home=home)


async def gather_container(cc: ContainerCommand, transport: Transport, *,
                           cwd: str | None = None) -> tuple[LintFacts, ContainerFacts]:
    """The engine's facts as the container sees them, and the container's own."""
    cmd = cc.cmd
    is_cpu = cpu_build(cmd, {})  # (the container's env, not this shell's)
    port = host_port(cc)
    paths = dict(container_paths(cc))

    async def none() -> None:
        return None

    model, draft, in_use, gpu_info = await asyncio.gather(
        _config(cc, transport, paths["model"], cwd) if "model" in paths else none(),
        _config(cc, transport, paths["draft"], cwd) if "draft" in paths else none(),
        port_in_use(transport, port) if port is not None else none(),
        none() if is_cpu else gpus(transport))
    gpu_list, note = gpu_info if gpu_info is not None else (None, "CPU build")
    shared = cc.run.network == "host"  # the server's own port is the host's: the plain check
    free = await free_port(transport, port) if in_use and shared and port else None
    facts = LintFacts(host=transport.host, model=model, draft=draft,
                      port_in_use=in_use if shared else None, free_port=free,
                      gpus=container_gpus(cc.run, gpu_list) if gpu_list is not None else None,
                      gpu_note=note, cpu_build=is_cpu)
    return facts, ContainerFacts(port, None if shared else in_use)


__all__ = ["gather_container"]
