"""``lint``'s container side: a ``docker``/``podman run`` command line or a compose service read
into the engine command it starts, the container's checks added to the engine's, and a fix
that rewrites only the engine's words.
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
from typing import Any

from eagle_tui.model.launching.cmdline import (
    CommandError,
    ParsedCommand,
    parse_command,
    split_command,
)
from eagle_tui.model.launching.compose import service_run, services
from eagle_tui.model.launching.container import ContainerRun, parse_run
from eagle_tui.model.launching.container_checks import (
    ContainerCommand,
    engine_command,
    findings,
    read_command,
    rebuild,
)
from eagle_tui.model.launching.flags import FlagTable
from eagle_tui.model.launching.lint import Finding
from eagle_tui.probe.compose_file import read_compose


@dataclasses.dataclass(frozen=True)
class Reading:
    """What ``lint`` was given, read: the engine's command, and its container when in one."""

    cmd: ParsedCommand
    container: ContainerCommand | None = None
    compose_file: str = ""


def read_words(words: list[str], tables: dict[str, FlagTable]) -> Reading:
    """A launch command, or a container CLI's run of one (raises :class:`CommandError`)."""
    return Reading(*read_command(split_command(words), tables))  # (a quoted string: its words)


def read_compose_service(path: str, name: str | None,
                         tables: dict[str, FlagTable]) -> Reading:
    """A compose file's service (the one that starts an engine, when ``name`` is not given)."""
    doc = read_compose(path)
    base = posixpath.dirname(posixpath.abspath(path))
    if name is None and len(services(doc)) > 1:
        found: list[ContainerCommand] = []
        for candidate in services(doc):
            try:
                found.append(engine_command(service_run(doc, candidate, base)[1], tables))
            except CommandError:
                continue
        if len(found) != 1:
            names = ", ".join(sorted(services(doc))[:8])
            raise CommandError(f"{len(found)} of the services ({names}) start a server: choose "
                               "one with --service")
        return Reading(found[0].cmd, found[0], path)
    cc = engine_command(service_run(doc, name, base)[1], tables)
    return Reading(cc.cmd, cc, path)


def relint_words(reading: Reading, words: list[str]) -> tuple[list[str], ContainerRun | None]:
    """The whole command for a fix's engine ``words``: the run's container part kept, and the
    run as it now reads (``None``: not a container)."""
    cc = reading.container
    if cc is None:
        return words, None
    new = rebuild(cc, words)
    if cc.run.cli == "compose":
        return new, dataclasses.replace(cc.run, command=tuple(new))
    return new, parse_run(new)


def again(reading: Reading, run: ContainerRun | None, words: list[str],
          tables: dict[str, FlagTable]) -> Reading:
    if run is None:
        return Reading(parse_command(words, tables))
    cc = engine_command(run, tables)
    return Reading(cc.cmd, cc, reading.compose_file)


def is_container_finding(f: Finding) -> bool:
    return f.code.startswith("container-")


def container_dict(reading: Reading) -> dict[str, Any] | None:
    """The ``--json`` contract's ``container`` object (``None``: not in a container)."""
    cc = reading.container
    if cc is None:
        return None
    run = cc.run
    return {
        "cli": run.cli, "source": run.source, "image": run.image, "lead": list(cc.lead),
        "via": cc.via, "command": list(run.command), "env": [k for k, _ in run.env],
        "gpus": [{"option": g.typed, "count": g.count, "devices": list(g.devices)}
                 for g in run.gpus],
        "shm_size": run.shm_size, "shm_bytes": run.shm_bytes, "ipc": run.ipc or None,
        "network": run.network or None,
        "publish": [{"host_ip": p.host_ip, "host": p.host, "container": p.container,
                     "proto": p.proto} for p in run.publish],
        "mounts": [{"kind": m.kind, "source": m.source, "target": m.target,
                    "readonly": m.readonly} for m in run.mounts],
        "compose_file": reading.compose_file or None,
    }


def container_line(reading: Reading) -> str | None:
    cc = reading.container
    if cc is None:
        return None
    lead = f" `{' '.join(cc.lead)}`" if cc.lead else ""
    return f"  container: {cc.run.source}, image {cc.run.image}; the server is {cc.via}{lead}"


def fixed_text(reading: Reading, words: list[str]) -> str | None:
    """A compose service's fixed ``command:`` as one YAML line (``None``: not compose)."""
    cc = reading.container
    if cc is None or cc.run.cli != "compose":
        return None
    return "command: " + json.dumps(words, ensure_ascii=True)


__all__ = ["Reading", "again", "container_dict", "container_line", "findings", "fixed_text",
           "is_container_finding", "read_compose_service", "read_words", "relint_words"]
