"""The container CLI runner: argv only, the engines' refusals as one-line errors, and the
automatic choice of docker or podman (a scripted transport stands in for the host)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from eagle_tui.sources.containers.cli import (
    CliMissing,
    ContainerCli,
    ContainerError,
    EngineUnreachable,
    NoSuchContainer,
    classify,
    locate,
)
from eagle_tui.transport.base import CommandNotFound, RunResult

# what the engines print (docker 28 CLI, podman 4.3 and its Docker-compatible API)
DOCKER_NO_SUCH = (b'Error response from daemon: no container with name or ID "nope" found: '
                  b"no such container\n")
PODMAN_NO_SUCH = b"Error: inspecting object: no such container nope\n"
DOCKER_NO_DAEMON = (b"Cannot connect to the Docker daemon at unix:///tmp/dead.sock. "
                    b"Is the docker daemon running?\n")
PODMAN_NO_DAEMON = (b"Cannot connect to Podman. Please verify your connection\n"
                    b'Error: unable to connect to Podman socket: Get "http://d/v4.3.1/libpod/'
                    b'_ping": dial unix /tmp/dead.sock: connect: no such file or directory\n')
DOCKER_DENIED = (b"permission denied while trying to connect to the Docker daemon socket at "
                 b"unix:///var/run/docker.sock: Get \"http://%2Fvar%2Frun%2Fdocker.sock/v1.50/"
                 b'containers/x/json": dial unix /var/run/docker.sock: connect: permission '
                 b"denied\n")


@pytest.mark.parametrize(("stderr", "kind", "words"), [
    (DOCKER_NO_SUCH, NoSuchContainer, "no such container: nope"),
    (PODMAN_NO_SUCH, NoSuchContainer, "no such container: nope"),
    (DOCKER_NO_DAEMON, EngineUnreachable, "cannot connect to the container engine"),
    (PODMAN_NO_DAEMON, EngineUnreachable, "cannot connect to the container engine"),
    (DOCKER_DENIED, EngineUnreachable, "permission denied on the engine's socket"),
    (b"Error: something else\x1b]0;title\x07\n", ContainerError, "something else"),
])
def test_refusals_are_one_line(stderr: bytes, kind: type[ContainerError], words: str) -> None:
    err = classify("docker", "nope", stderr, " on h1")
    assert type(err) is kind
    text = str(err)
    assert words in text and text.startswith("docker on h1: ")
    assert "\n" not in text and "\x1b" not in text and "\x07" not in text


class Host:
    """A transport whose commands answer from a table: program → (code, stdout, stderr)."""

    host = ""

    def __init__(self, answers: dict[str, tuple[int, bytes, bytes]]) -> None:
        self.answers = answers
        self.argvs: list[list[str]] = []

    async def run(self, argv: list[str], timeout: float = 10.0, *,
                  stdin: bytes | None = None) -> RunResult:
        self.argvs.append(argv)
        if argv[0] not in self.answers:
            raise CommandNotFound(f"{argv[0]}: command not found")
        return RunResult(*self.answers[argv[0]])

    def stream_lines(self, argv: list[str], *, stderr: bool = False) -> AsyncIterator[bytes]:
        raise NotImplementedError


INSPECT = json.dumps([{"Id": "ab" * 32, "Name": "/srv", "State": {"Status": "running"}}])


def test_auto_takes_the_cli_that_knows_the_container() -> None:
    host = Host({"docker": (1, b"[]", DOCKER_NO_DAEMON), "podman": (0, INSPECT.encode(), b"")})
    cli, doc = asyncio.run(locate(host, "srv"))  # type: ignore[arg-type]
    assert cli.program == "podman" and doc["State"]["Status"] == "running"
    assert host.argvs == [["docker", "inspect", "--type", "container", "srv"],
                          ["podman", "inspect", "--type", "container", "srv"]]


def test_auto_reports_the_first_installed_clis_refusal() -> None:
    host = Host({"docker": (1, b"[]", DOCKER_NO_DAEMON), "podman": (125, b"[]", PODMAN_NO_SUCH)})
    with pytest.raises(EngineUnreachable, match=r"^docker: cannot connect"):
        asyncio.run(locate(host, "srv"))  # type: ignore[arg-type]
    only_podman = Host({"podman": (125, b"[]", PODMAN_NO_SUCH)})
    with pytest.raises(NoSuchContainer, match=r"^podman: no such container: srv$"):
        asyncio.run(locate(only_podman, "srv"))  # type: ignore[arg-type]


def test_missing_clis_and_a_chosen_one() -> None:
    with pytest.raises(CliMissing, match="neither docker nor podman is installed"):
        asyncio.run(locate(Host({}), "srv"))  # type: ignore[arg-type]
    host = Host({"podman": (0, INSPECT.encode(), b"")})
    with pytest.raises(CliMissing, match=r"^docker is not installed$"):
        asyncio.run(locate(host, "srv", "docker"))  # type: ignore[arg-type]
    cli, _ = asyncio.run(locate(host, "srv", "podman"))  # type: ignore[arg-type]
    assert cli.program == "podman"


@pytest.mark.parametrize("name", ["-rm", "a b", "x;rm -rf /", "", "ü"])
def test_names_go_through_the_grammar(name: str) -> None:
    with pytest.raises(ContainerError, match=r"not a container name or id|empty"):
        asyncio.run(locate(Host({}), name))  # type: ignore[arg-type]


def test_logs_argv_is_a_list_with_the_resume_point() -> None:
    cli = ContainerCli(Host({}), "docker")  # type: ignore[arg-type]
    assert cli.logs_argv("srv", since="2026-12-02T08:26:25Z") == [
        "docker", "logs", "--timestamps", "--follow", "--since", "2026-12-02T08:26:25Z", "srv"]
    assert cli.logs_argv("srv", follow=False) == ["docker", "logs", "--timestamps", "srv"]


def test_inspect_is_read_through_the_bounded_loader() -> None:
    deep = ("[" * 100 + "]" * 100).encode()
    with pytest.raises(ContainerError, match="nested deeper"):
        asyncio.run(ContainerCli(Host({"docker": (0, deep, b"")}), "docker"  # type: ignore[arg-type]
                                 ).inspect("srv"))
