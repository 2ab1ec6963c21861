"""Which engine's server a container runs, and its URL from the host (pure).

The engine is read from the container's command line the way the host scan reads a process's
(the registered profiles' entry points, :mod:`..launching.cmdline`), else from its image (the
profiles' ``launch.images``: ``vllm/vllm-openai`` takes only flags after the image name). The
port is the engine's ``--port`` (else its default); the URL is where the host reaches it: that
port on a host-network container, the host port it is published on, else the container's own
address.
"""

from __future__ import annotations

from eagle_tui.model.boundary import shellwords
from eagle_tui.model.boundary.grammar import GrammarError, host_name, port
from eagle_tui.model.containers.inspect import ContainerFacts
from eagle_tui.model.engines import profile_of, profiles
from eagle_tui.model.launching.cmdline import (
    CommandError,
    Engine,
    FlagTable,
    ParsedCommand,
    parse_command,
)
from eagle_tui.model.record import Record, record

_SHELLS = frozenset({"sh", "bash", "dash", "zsh"})
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})
_ANY_ADDRESS = ("", "0.0.0.0", "::", "[::]")


@record
class ContainerServer(Record):
    """The server a container runs: its engine, its port inside, its URL from the host and how
    that URL was found (``via``); ``cmd`` is the parsed command (None: known by image only)."""

    engine: Engine
    port: int
    url: str
    via: str
    cmd: ParsedCommand | None = None


def image_engine(image: str) -> Engine | None:
    """The engine whose published image ``image`` is (any registry, tag or digest)."""
    repo = image.split("@", 1)[0]
    last = repo.rsplit("/", 1)[-1]
    if ":" in last:
        repo = repo[: len(repo) - len(last)] + last.split(":", 1)[0]
    parts = repo.lower().split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]  # a registry host
    path = "/".join(parts)
    for p in profiles():
        if any(path == i or path.endswith("/" + i) for i, _entry in p.launch.images):
            return p.name
    return None


def _segments(command: tuple[str, ...]) -> list[list[str]]:
    """The command, and for ``sh -c "a && b"`` each command of the script."""
    words = list(command)
    if words and words[0].rsplit("/", 1)[-1] in _SHELLS and "-c" in words[:4]:
        script = words[words.index("-c") + 1] if words.index("-c") + 1 < len(words) else ""
        try:
            words = shellwords.split(script[:64_000])
        except ValueError:
            return []
        out: list[list[str]] = [[]]
        for w in words[:2000]:
            if w in _SEPARATORS:
                out.append([])
            else:
                out[-1].append(w)
        return [s for s in out if s]
    return [words] if words else []


def parse_container_command(command: tuple[str, ...],
                            tables: dict[Engine, FlagTable]) -> ParsedCommand | None:
    """The engine launch in a container's command line (None: none there)."""
    for words in _segments(command)[:16]:
        try:
            return parse_command(words, tables)
        except CommandError:
            continue
    return None


def _port(value: object, default: int) -> int:
    try:
        return port(value) if isinstance(value, str) else default
    except GrammarError:
        return default


def _host(value: str, fallback: str = "127.0.0.1") -> str:
    if value in _ANY_ADDRESS:
        return fallback
    try:
        return host_name(f"[{value}]" if ":" in value and not value.startswith("[") else value)
    except GrammarError:
        return fallback


def server_of(facts: ContainerFacts, tables: dict[Engine, FlagTable]) -> ContainerServer | None:
    """The engine server ``facts``' container runs (None: none known)."""
    cmd = parse_container_command(facts.command, tables)
    engine = cmd.engine if cmd is not None else image_engine(facts.image)
    profile = profile_of(engine)
    if engine is None or profile is None:
        return None
    launch = profile.launch
    inside = _port(cmd.get(launch.port_dest), profile.default_port) if cmd else \
        profile.default_port
    bound = cmd.get(launch.host_dest) if cmd else None
    if facts.network_mode == "host":
        host = _host(bound if isinstance(bound, str) else "")
        return ContainerServer(engine, inside, f"http://{host}:{inside}", "host network", cmd)
    for m in facts.ports:
        if m.container_port == inside and m.protocol == "tcp" and m.host_port:
            host = _host(m.host_ip)
            return ContainerServer(engine, inside, f"http://{host}:{m.host_port}",
                                   f"published {m.host_port}->{inside}", cmd)
    if facts.ip_address:
        host = _host(facts.ip_address, "")
        if host:
            return ContainerServer(engine, inside, f"http://{host}:{inside}",
                                   "container address (not published)", cmd)
    return ContainerServer(engine, inside, "", "not published", cmd)


__all__ = ["ContainerServer", "image_engine", "parse_container_command", "server_of"]
