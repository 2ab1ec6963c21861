"""The engines' servers among a host's containers (``attach``/``watch`` with nothing to watch).

Each CLI installed (docker, then podman) lists its running containers (``ps --format json``),
then ``inspect`` of those (bounded) says each one's command line, image, network and state; a
container runs a server when its command is an engine's launch or its image an engine's
(:func:`eagle_tui.model.containers.server.server_of`). A CLI that is not installed, or whose
engine does not answer, adds no rows and no error. A container both CLIs see (the docker CLI
talking to podman's socket) is listed once.
"""

from __future__ import annotations

from dataclasses import dataclass

from eagle_tui.model.containers.inspect import ContainerFacts, InspectError, read_inspect
from eagle_tui.model.containers.listing import read_ps
from eagle_tui.model.containers.server import ContainerServer, server_of
from eagle_tui.model.containers.states import status_text
from eagle_tui.model.launching.cmdline import Engine, FlagTable
from eagle_tui.model.launching.container_launch import TOKEN_LABEL
from eagle_tui.sources.containers.cli import CLIS, ContainerCli
from eagle_tui.transport.base import Transport, TransportError

MAX_LISTED = 64  # containers inspected per CLI (a host runs a handful of servers)
_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class FoundContainer:
    """A server in a container: the CLI that listed it, its facts and its server."""

    cli: str
    facts: ContainerFacts
    server: ContainerServer

    @property
    def name(self) -> str:
        return self.facts.name or self.facts.id[:12]

    @property
    def log(self) -> str:
        return f"{self.cli} logs {self.name}"

    @property
    def launched(self) -> bool:
        """Started by ``eagle-tui launch`` (its label names the run)."""
        return bool(self.facts.label(TOKEN_LABEL))

    def describe(self) -> str:
        url = self.server.url or "no URL from this host"
        compose = f", compose {self.facts.compose}" if self.facts.compose else ""
        launched = ", launched by eagle-tui (its run: eagle-tui runs list)" if self.launched \
            else ""
        return (f"{self.server.engine} container {self.name} ({self.facts.image or 'no image'}, "
                f"{self.cli}{compose}{launched}), {status_text(self.facts)}, {url} "
                f"({self.server.via}), "
                f"host pid {self.facts.pid or '-'}, log: `{self.log}` (watch it with "
                f"--container {self.name})")


async def _listed(cli: ContainerCli, tables: dict[Engine, FlagTable]) -> list[FoundContainer]:
    res = await cli.run("the container list", "ps", "--no-trunc", "--format", "json",
                        timeout=_TIMEOUT_S)
    rows = read_ps(res.stdout)[:MAX_LISTED]
    if not rows:
        return []
    res = await cli.run("the containers", "inspect", "--type", "container",
                        *(r.id for r in rows), timeout=_TIMEOUT_S)
    found: list[FoundContainer] = []
    for facts in read_inspect(res.stdout):
        server = server_of(facts, tables)
        if server is not None:
            found.append(FoundContainer(cli.program, facts, server))
    return found


async def discover_containers(transport: Transport, tables: dict[Engine, FlagTable],
                              choice: str = "auto") -> list[FoundContainer]:
    """The servers in the containers each installed CLI lists on ``transport``'s host."""
    found: list[FoundContainer] = []
    seen: set[str] = set()
    for program in (CLIS if choice == "auto" else (choice,)):
        try:
            listed = await _listed(ContainerCli(transport, program), tables)
        except (TransportError, InspectError):
            continue  # not installed, no daemon, refused: no rows from this CLI
        for f in listed:
            if f.facts.id not in seen:
                seen.add(f.facts.id)
                found.append(f)
    return found


__all__ = ["MAX_LISTED", "FoundContainer", "discover_containers"]
