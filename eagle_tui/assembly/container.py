"""``--container NAME|ID``: the container found before anything opens, and what it tells.

:func:`resolve_container` asks the container CLI (docker or podman, on this machine or the
``--ssh`` host) for the container once: a refusal (no such container, no daemon, no CLI) is the
command's one-line error, exit 2, before a dashboard or a session starts. The spec it returns
names the CLI that knows the container, the server's URL (unless ``--url`` gave one) and a
label with the container's name, image and state for the status line.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from eagle_tui.assembly.spec import DashboardSpec

_ANY_ADDRESS = ("", "0.0.0.0", "::", "[::]")


def _words(value: object) -> list[str]:
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [w for w in value if isinstance(w, str)]
    return []


def _flag(words: list[str], name: str) -> str | None:
    """The value of ``--name V`` or ``--name=V`` (the last one given)."""
    found = None
    for i, w in enumerate(words):
        if w == name and i + 1 < len(words):
            found = words[i + 1]
        elif w.startswith(name + "="):
            found = w[len(name) + 1:]
    return found


def server_url(doc: dict[str, Any]) -> str | None:
    """The server's URL from the host, read from one container's ``inspect`` object.

    The port is the engine's ``--port`` in the container's command line (else its engine's
    default, the engine told by the command or the image); the URL is that port on a
    host-network container, the host port it is published on, else the container's address.
    """
    from eagle_tui.model.engines import profiles

    config = doc.get("Config") if isinstance(doc.get("Config"), dict) else {}
    assert isinstance(config, dict)
    words = _words(config.get("Entrypoint")) + _words(config.get("Cmd"))
    image = config.get("Image") if isinstance(config.get("Image"), str) else ""
    text = " ".join([*words, str(image), str(doc.get("ImageName", ""))])
    port_text = _flag(words, "--port")
    port: int | None = int(port_text) if port_text and port_text.isdigit() else None
    if port is None:
        port = next((p.default_port for p in profiles() if p.name in text), None)
    if port is None or not 0 < port < 65536:
        return None
    host_cfg = doc.get("HostConfig") if isinstance(doc.get("HostConfig"), dict) else {}
    net = doc.get("NetworkSettings") if isinstance(doc.get("NetworkSettings"), dict) else {}
    assert isinstance(host_cfg, dict) and isinstance(net, dict)
    if host_cfg.get("NetworkMode") == "host":
        host = _flag(words, "--host") or ""
        return f"http://{'127.0.0.1' if host in _ANY_ADDRESS else host}:{port}"
    ports = net.get("Ports") if isinstance(net.get("Ports"), dict) else {}
    assert isinstance(ports, dict)
    bound = ports.get(f"{port}/tcp")
    if isinstance(bound, list):
        for b in bound:
            hp = b.get("HostPort") if isinstance(b, dict) else None
            if isinstance(hp, str) and hp.isdigit():
                ip = b.get("HostIp") or ""
                return f"http://{'127.0.0.1' if ip in _ANY_ADDRESS else ip}:{hp}"
    address = net.get("IPAddress")
    return f"http://{address}:{port}" if isinstance(address, str) and address else None


def label_of(doc: dict[str, Any], name: str, host: str) -> str:
    """``[host:]container NAME · IMAGE · STATE`` for the status line."""
    config = doc.get("Config") if isinstance(doc.get("Config"), dict) else {}
    state = doc.get("State") if isinstance(doc.get("State"), dict) else {}
    assert isinstance(config, dict) and isinstance(state, dict)
    image = doc.get("ImageName") or config.get("Image") or ""
    status = state.get("Status") or ""
    parts = [f"container {name}", *(str(x)[:80] for x in (image, status) if x)]
    return (f"{host}:" if host else "") + " · ".join(parts)


async def _resolve(spec: DashboardSpec) -> DashboardSpec:
    from eagle_tui.assembly.remote import close_transports, open_transports
    from eagle_tui.sources.containers.cli import locate

    assert spec.container is not None
    transports = await open_transports(spec.ssh)
    try:
        tr = transports[0]
        cli, doc = await locate(tr, spec.container, spec.container_cli)
    finally:
        await close_transports(transports)
    return replace(spec, container_cli=cli.program, url=spec.url or server_url(doc),
                   label=spec.label or label_of(doc, spec.container, tr.host))


def resolve_container(spec: DashboardSpec) -> DashboardSpec:
    """The spec with its container's CLI, URL and label (unchanged without ``--container``);
    raises the container engine's one-line ``ContainerError`` (an ``EagleError``)."""
    if not spec.container:
        return spec
    return asyncio.run(_resolve(spec))


__all__ = ["label_of", "resolve_container", "server_url"]
