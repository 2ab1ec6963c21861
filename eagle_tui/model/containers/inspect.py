"""One bounded reader of ``docker inspect`` / ``podman inspect`` JSON → :class:`ContainerFacts`.

Both CLIs print a JSON array of objects; their shapes differ in places (podman's ``Name`` has no
leading ``/``, its image is ``ImageName`` and its ``Config.Entrypoint`` may be a string; docker's
image name is ``Config.Image``, its ``Image`` an id). Whatever the text holds, the reader returns
facts or raises :class:`InspectError`: the document passes the loaders' size and depth caps, each
value of a wrong type reads as absent, strings and lists are cut (:data:`MAX_TEXT`, ...), and at
most :data:`MAX_CONTAINERS` objects are read. Pure: the text comes from the runner.
"""

from __future__ import annotations

from typing import Any, Literal

from eagle_tui.errors import InputError
from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.record import Record, record

ContainerStatus = Literal["created", "running", "paused", "restarting", "removing", "exited",
                          "dead", "unknown"]
_STATUSES: frozenset[str] = frozenset(
    ("created", "running", "paused", "restarting", "removing", "exited", "dead"))
MAX_BYTES = 4 << 20  # one container's inspect is a few KB; a hundred of them fit
MAX_CONTAINERS = 256
MAX_TEXT = 4096  # a name, an image, one argument
MAX_WORDS = 2000  # the command line's words (the launch parser's own bound)
MAX_LABELS = 256
MAX_PORTS = 256
_ZERO_TIME = "0001-01-01T00:00:00Z"  # Go's zero time: "never"
_INT_CAP = 1 << 62


class InspectError(InputError):
    """The text is not inspect output (not JSON, over its caps, or no object in it)."""


@record
class PortMap(Record):
    """One published port: the container's port and protocol, and the host's address and port
    it is published on (``host_port`` 0: exposed, not published)."""

    container_port: int
    protocol: str = "tcp"
    host_ip: str = ""
    host_port: int = 0


@record
class ContainerFacts(Record):
    """What one container's inspect says, in the parts eagle-tui reads."""

    id: str
    name: str = ""
    image: str = ""
    status: ContainerStatus = "unknown"
    exit_code: int | None = None
    oom_killed: bool = False
    error: str = ""
    memory_limit: int = 0  # bytes; 0: none (HostConfig.Memory)
    restart_count: int = 0
    restart_policy: str = ""  # "on-failure:3", "always", ...
    auto_remove: bool = False  # ``--rm``: its log goes with it
    created: str = ""  # when the container was made: a crash loop's restarts count from it
    started_at: str = ""
    finished_at: str = ""
    pid: int = 0  # the host PID of its first process (0: none running)
    command: tuple[str, ...] = ()  # Path + Args (else Config.Entrypoint + Config.Cmd)
    network_mode: str = ""
    ip_address: str = ""
    ports: tuple[PortMap, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()

    def label(self, key: str) -> str:
        return next((v for k, v in self.labels if k == key), "")

    @property
    def compose(self) -> str:
        """``project/service`` of a docker compose container ('' for another)."""
        project = self.label("com.docker.compose.project")
        service = self.label("com.docker.compose.service")
        return f"{project}/{service}" if project or service else ""


def text(value: object, limit: int = MAX_TEXT) -> str:
    """A string value cut to ``limit``; anything else is ''."""
    return value[:limit] if isinstance(value, str) else ""


def integer(value: object) -> int | None:
    """An integer value (a bool or an absurd one is none)."""
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > _INT_CAP:
        return None
    return value


def words(value: object, limit: int = MAX_WORDS) -> tuple[str, ...]:
    """A list of strings (a single string is one word; other items are skipped)."""
    if isinstance(value, str):
        return (value[:MAX_TEXT],) if value else ()
    if not isinstance(value, list):
        return ()
    return tuple(v[:MAX_TEXT] for v in value[:limit] if isinstance(v, str))


def labels_of(value: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        return ()
    out: list[tuple[str, str]] = []
    for k, v in value.items():
        if len(out) >= MAX_LABELS:
            break
        if isinstance(k, str) and isinstance(v, str):
            out.append((k[:MAX_TEXT], v[:MAX_TEXT]))
    return tuple(out)


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _port_key(key: str) -> tuple[int, str] | None:
    """``"30000/tcp"`` → (30000, "tcp")."""
    number, _, proto = key.partition("/")
    if not number.isdigit() or len(number) > 5 or not 0 < int(number) < 65536:
        return None
    return int(number), (proto or "tcp")[:8]


def _host_port(value: object) -> int:
    if isinstance(value, str) and value.isdigit() and len(value) <= 5:
        number = int(value)
    else:
        number = integer(value) or 0
    return number if 0 < number < 65536 else 0


def ports_of(*tables: object) -> tuple[PortMap, ...]:
    """Published ports from ``NetworkSettings.Ports`` (else ``HostConfig.PortBindings``):
    ``{"8000/tcp": [{"HostIp": "0.0.0.0", "HostPort": "8001"}], "9000/tcp": null}``."""
    for table in tables:
        if not isinstance(table, dict) or not table:
            continue
        out: list[PortMap] = []
        for key, binds in table.items():
            parsed = _port_key(key) if isinstance(key, str) else None
            if parsed is None:
                continue
            if not isinstance(binds, list) or not binds:
                out.append(PortMap(parsed[0], parsed[1]))
            for b in binds[:8] if isinstance(binds, list) else ():
                b = _dict(b)
                out.append(PortMap(parsed[0], parsed[1], text(b.get("HostIp"), 64),
                                   _host_port(b.get("HostPort"))))
            if len(out) >= MAX_PORTS:
                break
        return tuple(out[:MAX_PORTS])
    return ()


def _status(state: dict[str, Any]) -> ContainerStatus:
    status = text(state.get("Status"), 32).lower()
    if status in _STATUSES:
        return status  # type: ignore[return-value]  # (checked against the literal's values)
    if status in ("stopped", "configured", "initialized"):  # podman's own words
        return "exited" if status == "stopped" else "created"
    for flag, name in (("Restarting", "restarting"), ("Paused", "paused"),
                       ("Running", "running"), ("Dead", "dead")):
        if state.get(flag) is True:
            return name  # type: ignore[return-value]
    return "unknown"


def _image(obj: dict[str, Any], config: dict[str, Any]) -> str:
    for value in (config.get("Image"), obj.get("ImageName"), obj.get("Image")):
        name = text(value)
        if name and not name.startswith("sha256:"):
            return name
    return ""


def _time(value: object) -> str:
    stamp = text(value, 64)
    return "" if stamp.startswith(_ZERO_TIME[:10]) else stamp


def _restart_policy(host: dict[str, Any]) -> str:
    policy = _dict(host.get("RestartPolicy"))
    name = text(policy.get("Name"), 32)
    count = integer(policy.get("MaximumRetryCount")) or 0
    return f"{name}:{count}" if name == "on-failure" and count > 0 else name


def facts_of(obj: dict[str, Any]) -> ContainerFacts | None:
    """One inspect object's facts (``None``: no id)."""
    cid = text(obj.get("Id") or obj.get("ID"), 128)
    if not cid:
        return None
    state, config = _dict(obj.get("State")), _dict(obj.get("Config"))
    host, net = _dict(obj.get("HostConfig")), _dict(obj.get("NetworkSettings"))
    command = words(obj.get("Path"), 1) + words(obj.get("Args"), MAX_WORDS - 1)
    if not command:
        command = (words(config.get("Entrypoint")) + words(config.get("Cmd")))[:MAX_WORDS]
    memory = integer(host.get("Memory")) or 0
    pid = integer(state.get("Pid")) or 0
    return ContainerFacts(
        id=cid,
        name=text(obj.get("Name")).removeprefix("/"),
        image=_image(obj, config),
        status=_status(state),
        exit_code=integer(state.get("ExitCode")),
        oom_killed=state.get("OOMKilled") is True,
        error=text(state.get("Error"), 512),
        memory_limit=max(memory, 0),
        restart_count=max(integer(obj.get("RestartCount")) or 0, 0),
        restart_policy=_restart_policy(host),
        auto_remove=host.get("AutoRemove") is True,
        created=_time(obj.get("Created")),
        started_at=_time(state.get("StartedAt")),
        finished_at=_time(state.get("FinishedAt")),
        pid=pid if 0 < pid < (1 << 31) else 0,
        command=command,
        network_mode=text(host.get("NetworkMode"), 256),
        ip_address=text(net.get("IPAddress"), 64),
        ports=ports_of(net.get("Ports"), host.get("PortBindings")),
        labels=labels_of(config.get("Labels")),
    )


def read_inspect(data: str | bytes) -> list[ContainerFacts]:
    """The containers of one ``inspect`` answer (an array, or one object), in order."""
    try:
        doc = load_json(data, "container inspect output", max_bytes=MAX_BYTES)
    except LoadError as exc:
        raise InspectError(str(exc)) from None
    items = doc if isinstance(doc, list) else [doc]
    found = [f for o in items[:MAX_CONTAINERS] if isinstance(o, dict)
             and (f := facts_of(o)) is not None]
    if not found and items:
        raise InspectError("container inspect output holds no container")
    return found


__all__ = ["ContainerFacts", "ContainerStatus", "InspectError", "PortMap", "facts_of",
           "read_inspect"]
