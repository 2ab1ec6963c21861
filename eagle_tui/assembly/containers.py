"""``--container NAME``: find the CLI that knows the container and the server inside it.

Before the session is built, the container is looked up once (:func:`resolve_container`): the
CLI that knows it (``--container-cli``, else docker then podman), and the server's URL from its
command line and network where ``--url`` was not given (:mod:`eagle_tui.model.containers.server`).
The session then watches it with :class:`~eagle_tui.sources.containers.state.ContainerStateSource`
in place of the process watcher (the container's state says how its processes end).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from eagle_tui.assembly.spec import DashboardSpec, normalize_url
from eagle_tui.model.containers.inspect import facts_of
from eagle_tui.model.containers.server import server_of
from eagle_tui.probe.tables import load_tables
from eagle_tui.sources.containers.cli import locate
from eagle_tui.transport.base import Transport


async def resolve_container(spec: DashboardSpec, transport: Transport) -> DashboardSpec:
    """``spec`` with its container's CLI chosen, and its URL and label where none was given;
    raises the runner's one-line :class:`~eagle_tui.sources.containers.cli.ContainerError`."""
    if not spec.container:
        return spec
    cli, obj = await locate(transport, spec.container, spec.container_cli)
    facts = facts_of(obj)
    url = spec.url
    if url is None and facts is not None:
        server = server_of(facts, load_tables())
        if server is not None and server.url:
            url = normalize_url(server.url)
    name = facts.name if facts is not None and facts.name else spec.container
    host = f"{transport.host}:" if transport.host else ""
    # the status line names the container and its image; its state is live, shown by the
    # process and crash it reads as (a state frozen here went stale at the first exit)
    shown = [f"container {name}", *((facts.image[:80],) if facts is not None and facts.image
                                     else ())]
    return replace(spec, container_cli=cli.program, url=url,
                   label=spec.label or host + " · ".join(shown))


async def _opened_and_resolved(spec: DashboardSpec) -> DashboardSpec:
    from eagle_tui.assembly.remote import close_transports, open_transports

    transports = await open_transports(spec.ssh)
    try:
        return await resolve_container(spec, transports[0])
    finally:
        await close_transports(transports)


def resolved(spec: DashboardSpec) -> DashboardSpec:
    """:func:`resolve_container` for a command that opens its session later (``watch``,
    ``report``, ``replay``): its own connection to the ``--ssh`` host, closed again."""
    if not spec.container:
        return spec
    return asyncio.run(_opened_and_resolved(spec))


__all__ = ["resolve_container", "resolved"]


