"""The container engine's CLI (``docker`` or ``podman``) over any transport.

Everything eagle-tui asks a container engine goes through :class:`ContainerCli`: argv lists only
(the transport quotes them for a remote shell), container names and ids through the argv grammar,
and the environment passed through as it is, so ``DOCKER_HOST`` (``ssh://`` included), a docker
context or podman's connection apply as they do in the user's shell. ``--container-cli`` picks
the CLI; by default :func:`locate` asks ``docker`` and then ``podman`` and takes the first that
knows the container. The engines' refusals (no daemon, permission denied on the socket, no such
container, no CLI) become one-line :class:`ContainerError` messages (exit 2 at the command line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from eagle_tui.model.boundary.grammar import GrammarError, container
from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.boundary.termtext import inert
from eagle_tui.transport.base import CommandNotFound, RunResult, Transport, TransportError

CLIS = ("docker", "podman")
CLI_CHOICES = ("auto", *CLIS)
INSPECT_MAX_BYTES = 4 << 20  # one container's inspect JSON is a few KB; its env can be long
_TIMEOUT_S = 15.0

# what the engines say (docker's CLI and daemon, podman, podman's Docker-compatible API)
_NO_SUCH = re.compile(r"no such (?:container|object)", re.IGNORECASE)
_NO_DAEMON = re.compile(
    r"cannot connect to (?:the docker daemon|podman)|is the docker daemon running"
    r"|unable to connect to podman|connection refused|error during connect", re.IGNORECASE)
_DENIED = re.compile(r"permission denied", re.IGNORECASE)


class ContainerError(TransportError):
    """The container engine refused or failed; ``str()`` is the one line shown."""


class NoSuchContainer(ContainerError):
    """The engine does not know the container (never created, or removed, e.g. ``--rm``)."""


class EngineUnreachable(ContainerError):
    """The CLI is there but its daemon/socket is not (or not to this user)."""


class CliMissing(ContainerError):
    """Neither ``docker`` nor ``podman`` (or not the one asked for) is installed."""


def _where(transport: Transport) -> str:
    return f" on {transport.host}" if transport.host else ""


def _last_line(data: bytes) -> str:
    lines = [ln.strip() for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()]
    text = lines[-1] if lines else ""
    return str(inert(text[:300]))


def classify(program: str, what: str, stderr: bytes, where: str = "") -> ContainerError:
    """The one-line error for a failed ``program`` command about ``what`` (its stderr read)."""
    text = stderr.decode("utf-8", "replace")
    why = _last_line(stderr) or "no message"
    if _DENIED.search(text) and ("sock" in text or "daemon" in text or "connect" in text):
        return EngineUnreachable(f"{program}{where}: permission denied on the engine's socket "
                                 f"({why})")
    low = text.lower()
    if _NO_DAEMON.search(text) or ("no such file or directory" in low and ".sock" in low):
        return EngineUnreachable(f"{program}{where}: cannot connect to the container engine "
                                 f"({why})")
    if _NO_SUCH.search(text):
        return NoSuchContainer(f"{program}{where}: no such container: {what}")
    return ContainerError(f"{program}{where}: {why}")


def checked_name(text: str) -> str:
    """A container name or id, or the one-line refusal (a :class:`ContainerError`)."""
    try:
        return container(text)
    except GrammarError as exc:
        raise ContainerError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class ContainerCli:
    """One container CLI on one host: ``program`` is ``"docker"`` or ``"podman"``."""

    transport: Transport
    program: str

    @property
    def where(self) -> str:
        return _where(self.transport)

    def argv(self, *args: str) -> list[str]:
        return [self.program, *args]

    def logs_argv(self, name: str, *, since: str | None = None,
                  follow: bool = True) -> list[str]:
        """``logs --timestamps`` (and ``--follow``, ``--since STAMP``) of ``name``."""
        args = ["logs", "--timestamps"]
        if follow:
            args.append("--follow")
        if since is not None:
            args += ["--since", since]
        return self.argv(*args, checked_name(name))

    async def run(self, what: str, *args: str, timeout: float = _TIMEOUT_S) -> RunResult:
        """Run ``program ARGS`` to completion; a failure is raised as its one-line error."""
        try:
            res = await self.transport.run(self.argv(*args), timeout=timeout)
        except CommandNotFound:
            raise CliMissing(f"{self.program} is not installed{self.where}") from None
        if res.exit_code == 127:
            raise CliMissing(f"{self.program} is not installed{self.where}")
        if res.exit_code != 0:
            raise classify(self.program, what, res.stderr or res.stdout, self.where)
        return res

    async def inspect(self, name: str) -> dict[str, Any]:
        """``inspect`` of one container: its JSON object, read through the bounded loader."""
        name = checked_name(name)
        res = await self.run(name, "inspect", "--type", "container", name)
        try:
            doc = load_json(res.stdout, f"{self.program} inspect {name}",
                            max_bytes=INSPECT_MAX_BYTES)
        except LoadError as exc:
            raise ContainerError(str(exc)) from None
        if isinstance(doc, list) and doc and isinstance(doc[0], dict):
            return doc[0]
        if isinstance(doc, dict):
            return doc
        raise NoSuchContainer(f"{self.program}{self.where}: no such container: {name}")


async def locate(transport: Transport, name: str, choice: str = "auto"
                 ) -> tuple[ContainerCli, dict[str, Any]]:
    """The CLI that knows container ``name`` and its ``inspect`` object.

    ``choice`` "docker"/"podman" asks that one only; "auto" asks each installed CLI in turn and
    takes the first that knows the container, else raises the first installed one's error
    (no daemon, no such container), else :class:`CliMissing`.
    """
    name = checked_name(name)
    if choice not in CLI_CHOICES:
        raise ContainerError(f"--container-cli must be one of {', '.join(CLI_CHOICES)}, "
                             f"not {choice!r}")
    first: ContainerError | None = None
    for program in (CLIS if choice == "auto" else (choice,)):
        cli = ContainerCli(transport, program)
        try:
            return cli, await cli.inspect(name)
        except CliMissing as exc:
            if choice != "auto":
                raise
            if first is None:
                first = exc
        except ContainerError as exc:
            if first is None or isinstance(first, CliMissing):
                first = exc
    if first is None or isinstance(first, CliMissing):
        raise CliMissing(f"neither docker nor podman is installed{_where(transport)}")
    raise first


__all__ = [
    "CLIS",
    "CLI_CHOICES",
    "CliMissing",
    "ContainerCli",
    "ContainerError",
    "EngineUnreachable",
    "NoSuchContainer",
    "checked_name",
    "classify",
    "locate",
]
