"""A compose service as a container run: what ``docker compose up`` would start for it.

A service's ``image``, ``entrypoint`` and ``command`` (a string is split as shell words, a list
is the words), ``environment`` (a list of ``K=V`` or a mapping), ``ports`` (short
``[IP:]HOST:CONTAINER`` or long ``{target, published}``), ``shm_size``, ``ipc``,
``network_mode``, ``runtime``, ``privileged``, ``volumes`` (short ``SOURCE:TARGET[:ro]`` or long
``{type, source, target}``; a relative source is relative to the file's folder), its GPUs
(``deploy.resources.reservations.devices`` with ``count``/``device_ids``, ``gpus:``, CDI
``devices:``) are read into a :class:`~.container.ContainerRun` the checks share with
``docker run``. The document is plain data already loaded (and bounded) by
``eagle_tui.probe.compose_file``.

Pure: no I/O.
"""

from __future__ import annotations

import posixpath
from typing import Any

from eagle_tui.model.boundary import shellwords
from eagle_tui.model.launching.cmdline import MAX_TOKENS, CommandError
from eagle_tui.model.launching.container import (
    ContainerRun,
    GpuRequest,
    Mount,
    Publish,
    cdi_gpus,
    parse_mount,
    parse_publish,
    parse_volume,
)
from eagle_tui.model.launching.flags import Problem


def services(doc: Any) -> dict[str, dict[str, Any]]:
    """The services of a compose document (raises :class:`CommandError` when it has none)."""
    found = doc.get("services") if isinstance(doc, dict) else None
    if not isinstance(found, dict) or not found:
        raise CommandError("not a compose file: no services")
    return {str(k): v for k, v in found.items() if isinstance(v, dict)}


def _words(value: Any, what: str, problems: list[Problem]) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return tuple(shellwords.split(value[: MAX_TOKENS * 64])[:MAX_TOKENS])
        except ValueError as exc:
            raise CommandError(f"{what}: cannot split it: {exc}") from None
    if isinstance(value, list):
        return tuple(_text(v) for v in value[:MAX_TOKENS])
    problems.append(Problem("value", what, f"{what}: neither a string nor a list"))
    return None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _env(value: Any) -> tuple[tuple[str, str], ...]:
    if isinstance(value, dict):
        return tuple((str(k), _text(v)) for k, v in value.items() if v is not None)
    if isinstance(value, list):
        pairs = (str(x).partition("=") for x in value)
        return tuple((k, v) for k, eq, v in pairs if eq and k)
    return ()


def _ports(value: Any, problems: list[Problem]) -> tuple[Publish, ...]:
    out: list[Publish] = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict):
            target, published = _text(item.get("target")), _text(item.get("published"))
            pub = parse_publish(f"{published}:{target}" if published else target)
            if pub is not None:
                pub = Publish(f"{published}:{target}" if published else target,
                              _text(item.get("host_ip")), pub.host, pub.container,
                              _text(item.get("protocol")) or "tcp")
        else:
            pub = parse_publish(_text(item))
        if pub is None:
            problems.append(Problem("value", "ports", f"ports: {item!r} is not a port"))
        else:
            out.append(pub)
    return tuple(out)


def _volumes(value: Any, base: str) -> tuple[Mount, ...]:
    out: list[Mount] = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict):
            m = Mount(str(item), _text(item.get("type")) or "volume", _text(item.get("source")),
                      _text(item.get("target")), item.get("read_only") is True)
        elif isinstance(item, str):
            m = parse_volume(item) if not item.startswith("type=") else parse_mount(item)
        else:
            continue
        if m.kind == "bind" and m.source.startswith(".") and base:
            m = Mount(m.typed, m.kind, posixpath.normpath(posixpath.join(base, m.source)),
                      m.target, m.readonly)
        out.append(m)
    return tuple(out)


def _gpus(service: dict[str, Any]) -> tuple[GpuRequest, ...]:
    out: list[GpuRequest] = []
    deploy = service.get("deploy")
    resources = deploy.get("resources") if isinstance(deploy, dict) else None
    reserved = resources.get("reservations") if isinstance(resources, dict) else None
    devices = reserved.get("devices") if isinstance(reserved, dict) else None
    gpus = service.get("gpus")
    listed = [*(devices if isinstance(devices, list) else []),
              *(gpus if isinstance(gpus, list) else [])]
    if gpus == "all":
        out.append(GpuRequest("gpus: all", None))
    for d in listed:
        if not isinstance(d, dict):
            continue
        caps = d.get("capabilities")
        if _text(d.get("driver")) not in ("", "nvidia") and not (
                isinstance(caps, list) and "gpu" in caps):
            continue
        ids = d.get("device_ids")
        count = d.get("count")
        if isinstance(ids, list) and ids:
            got = tuple(_text(i) for i in ids)
            out.append(GpuRequest(f"device_ids: {list(got)}", len(got), got,
                                  "count and device_ids are exclusive" if count is not None
                                  else ""))
        elif count == "all" or count == -1:
            out.append(GpuRequest("count: all", None))
        elif isinstance(count, int) and not isinstance(count, bool):
            out.append(GpuRequest(f"count: {count}", count))
        else:
            out.append(GpuRequest("devices", None))  # neither: compose reserves them all
    for dev in service.get("devices") or [] if isinstance(service.get("devices"), list) else []:
        req = cdi_gpus(_text(dev), f"devices: {_text(dev)}")
        if req is not None:
            out.append(req)
    return tuple(out)


def service_run(doc: Any, name: str | None, base: str = "") -> tuple[str, ContainerRun]:
    """The named service (or the only one with a command or an image) as a run."""
    found = services(doc)
    if name is None:
        if len(found) != 1:
            raise CommandError(f"the file has {len(found)} services: choose one with --service "
                               f"({', '.join(sorted(found)[:8])})")
        name = next(iter(found))
    service = found.get(name)
    if service is None:
        raise CommandError(f"no service {name!r} (the file has {', '.join(sorted(found)[:8])})")
    problems: list[Problem] = []
    command = _words(service.get("command"), "command", problems) or ()
    entry = _words(service.get("entrypoint"), "entrypoint", problems)
    image = _text(service.get("image"))
    if not image:
        raise CommandError(f"service {name!r} has no image (a build: section is not read)")
    shm = service.get("shm_size")
    return name, ContainerRun(
        "compose", f"compose service {name}", (), image, command, (), entry,
        _env(service.get("environment")), _gpus(service),
        None if shm is None else _text(shm), _text(service.get("ipc")),
        _text(service.get("network_mode")), _ports(service.get("ports"), problems), False,
        _volumes(service.get("volumes"), base), _text(service.get("runtime")),
        service.get("privileged") is True, tuple(problems))


__all__ = ["service_run", "services"]
