"""The container run grammar: which words are options, which is the image, what runs after it.

Generated runs put a random set of docker's and podman's options in a random order, each in one
of its spellings (``--opt value``, ``--opt=value``, ``-p value``, ``-pvalue``, ``-p=value``,
grouped switches), with values that look like images or options' names, through the CLI as an
argv and as one shell-quoted string; the image and the command after it must come out as built.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.boundary.shellwords import join
from eagle_tui.model.launching.cmdline import CommandError
from eagle_tui.model.launching.container import (
    DEFAULT_SHM,
    cdi_gpus,
    entrypoint_words,
    image_repository,
    is_container_command,
    parse_gpus,
    parse_publish,
    parse_run,
    size_bytes,
)
from eagle_tui.model.launching.container_checks import engine_command, rebuild
from eagle_tui.probe.tables import load_tables

TABLES = load_tables()
# values that a reader taking the wrong word would mistake for the image or an option
TRICKY = ["lmsysorg/sglang:latest", "vllm/vllm-openai", "python3", "run", "8000:8000",
          "a b", "it's", "--", "-x", "x=y=z", "", "$HOME", "nvidia.com/gpu=all"]
LONG_VALUE = ["name", "env", "shm-size", "ipc", "network", "label", "workdir", "user",
              "restart", "pull", "platform", "memory", "cpus", "hostname", "add-host",
              "log-opt"]
LONG_BOOL = ["detach", "interactive", "tty", "rm", "privileged", "init", "read-only",
             "sig-proxy", "quiet", "replace"]
SHORT_VALUE = {"e": "env", "v": "volume", "p": "publish", "w": "workdir", "u": "user",
               "l": "label", "m": "memory", "h": "hostname"}
SHORT_BOOL = "dit"


@st.composite
def option(draw: Any) -> list[str]:
    """One option in one of its spellings (a separate value is taken whatever it looks like,
    ``--`` and ``-x`` included, as pflag takes it)."""
    kind = draw(st.sampled_from(["long", "long=", "bool", "bool=", "short", "short=",
                                 "shortjoined", "group"]))
    value = draw(st.sampled_from(TRICKY))
    if kind == "long":
        return [f"--{draw(st.sampled_from(LONG_VALUE))}", value]
    if kind == "long=":
        return [f"--{draw(st.sampled_from(LONG_VALUE))}={value}"]
    if kind == "bool":
        return [f"--{draw(st.sampled_from(LONG_BOOL))}"]
    if kind == "bool=":
        return [f"--{draw(st.sampled_from(LONG_BOOL))}={draw(st.sampled_from(['true', 'false']))}"]
    letter = draw(st.sampled_from(sorted(SHORT_VALUE)))
    if kind == "short":
        return [f"-{letter}", value]
    if kind == "short=":
        return [f"-{letter}={value}"]
    if kind == "shortjoined":
        return [f"-{letter}{value}"] if value else [f"-{letter}", "x"]
    switches = "".join(draw(st.permutations(SHORT_BOOL)))[: draw(st.integers(1, 3))]
    return [f"-{switches}{letter}", value] if draw(st.booleans()) else [f"-{switches}"]


@settings(max_examples=300, deadline=None)
@given(opts=st.lists(option(), max_size=8), cli=st.sampled_from(["docker", "podman", "nerdctl"]),
       sub=st.sampled_from([["run"], ["container", "run"]]), dashdash=st.booleans(),
       image=st.sampled_from(["lmsysorg/sglang:v0.5", "docker.io/lmsysorg/sglang@sha256:ab",
                              "localhost:5000/lmsysorg/sglang"]),
       as_string=st.booleans())
def test_generated_runs_find_the_image_and_the_command(
        opts: list[list[str]], cli: str, sub: list[str], dashdash: bool, image: str,
        as_string: bool) -> None:
    inner = ["python3", "-m", "sglang.launch_server", "--model-path", "/m x", "--port", "9"]
    head = [cli, *sub, *(w for o in opts for w in o), *(["--"] if dashdash else []), image]
    words = [*head, *inner]
    run = parse_run(join(words) if as_string else words)
    assert run.image == image and run.command == tuple(inner) and run.head == tuple(head)
    assert image_repository(run.image) == "lmsysorg/sglang"
    assert all(p.kind == "value" for p in run.problems)  # (``-p python3``: a value, not a port)
    cc = engine_command(run, TABLES)
    assert cc.cmd.get("port") == "9" and cc.cmd.get("model_path") == "/m x"
    assert rebuild(cc, [*cc.cmd.prefix, *cc.cmd.args]) == words


@pytest.mark.parametrize("words,image,command", [
    ("docker run -it --rm -p8000:8000 img a", "img", ("a",)),
    ("docker run -itp 8000:8000 img a", "img", ("a",)),
    ("docker run -e=A=1 --env B=2 --name=run img", "img", ()),
    ("sudo -E -u root DOCKER_HOST=x docker run img", "img", ()),  # sudo's options, env words
    ("FOO=1 /usr/bin/podman --remote --url unix:///x run -d img cmd", "img", ("cmd",)),
    ("docker -H ssh://gpu --context c run img", "img", ()),
    ("docker --log-level=debug container run img -x", "img", ("-x",)),
    ("docker run --rm=false --sig-proxy=false img", "img", ()),
    ("docker run -- img --rm", "img", ("--rm",)),
    ("podman run --tls-verify img false", "img", ("false",)),  # a switch: no value after it
])
def test_hand_picked_spellings(words: str, image: str, command: tuple[str, ...]) -> None:
    run = parse_run(words)
    assert (run.image, run.command) == (image, command)


def test_options_read_into_the_run() -> None:
    run = parse_run(["docker", "run", "--gpus", '"device=0,2"', "--shm-size=16g", "--ipc", "host",
                     "--net=host", "-p", "127.0.0.1:8001:8000/tcp", "-v", "/srv/m:/models:ro",
                     "--mount", "type=bind,source=/a,target=/b,readonly", "-e", "HF_HOME=/h",
                     "-e", "PASSTHROUGH", "--runtime=nvidia", "--privileged",
                     "--entrypoint", "", "img", "python3"])
    assert run.gpus[0].devices == ("0", "2") and run.gpus[0].count == 2
    assert run.shm_size == "16g" and run.shm_bytes == 16 << 30
    assert (run.ipc, run.network, run.runtime, run.privileged) == ("host", "host", "nvidia", True)
    assert run.publish[0].host_ip == "127.0.0.1" and run.publish[0].host_port_of(8000) == 8001
    assert [(m.kind, m.source, m.target, m.readonly) for m in run.mounts] == [
        ("bind", "/srv/m", "/models", True), ("bind", "/a", "/b", True)]
    assert run.env == (("HF_HOME", "/h"),)  # a name alone takes its value from the CLI's env
    assert run.entrypoint == ()  # ``--entrypoint ""`` clears the image's
    assert parse_run("docker run img").shm_bytes == DEFAULT_SHM


def test_unknown_options_are_problems_read_the_likely_way() -> None:
    run = parse_run("docker run --future-opt v img cmd")
    assert run.image == "img" and run.problems[0].kind == "unknown"
    run = parse_run("docker run --future-switch --rm img cmd")
    assert run.image == "img" and "switch" in run.problems[0].message
    assert parse_run("docker run -Z img").problems[0].token == "-Z"
    assert parse_run("docker run img --name").problems == ()  # after the image: its command


@pytest.mark.parametrize("text", ["docker ps", "docker run", "docker run -p", "python3 -m x",
                                  "docker build ."])
def test_not_a_run(text: str) -> None:
    with pytest.raises(CommandError):
        parse_run(text)


def test_is_container_command() -> None:
    assert is_container_command(["sudo", "docker", "run", "x"])
    assert is_container_command(["A=1", "/usr/local/bin/nerdctl", "run", "x"])
    assert not is_container_command(["python3", "-m", "sglang.launch_server"])


@pytest.mark.parametrize("value,count,devices,problem", [
    ("all", None, (), ""), ("2", 2, (), ""), ("count=3", 3, (), ""),
    ('"device=0,1"', 2, ("0", "1"), ""), ("device=GPU-abc", 1, ("GPU-abc",), ""),
    ("driver=nvidia,capabilities=compute", 1, (), ""),  # neither a count nor devices: one
    ("device=0,1", 1, ("0",), "cannot set both Count and DeviceIDs"),  # the unquoted list
    ("many", 0, (), "invalid count"), ("all,count=2", 2, (), "only once"),
    ("bogus=1", 1, (), "unexpected key"),
])
def test_gpus_values_as_docker_reads_them(value: str, count: int | None,
                                          devices: tuple[str, ...], problem: str) -> None:
    got = parse_gpus(value, f"--gpus {value}")
    assert got.devices == devices and (problem in got.problem if problem else not got.problem)
    if not problem or devices:
        assert got.count == count


def test_cdi_and_device_gpus() -> None:
    assert cdi_gpus("nvidia.com/gpu=all", "d") is not None
    assert cdi_gpus("nvidia.com/gpu=all", "d").count is None  # type: ignore[union-attr]
    assert cdi_gpus("nvidia.com/gpu=1", "d").devices == ("1",)  # type: ignore[union-attr]
    assert cdi_gpus("/dev/nvidia3:/dev/nvidia3", "d").devices == ("3",)  # type: ignore[union-attr]
    assert cdi_gpus("/dev/nvidiactl", "d") is None and cdi_gpus("/dev/fuse", "d") is None


@pytest.mark.parametrize("value,port,host", [
    ("8000:8000", 8000, 8000), ("9000:8000", 8000, 9000), ("8000", 8000, None),
    ("0.0.0.0:80:8000/tcp", 8000, 80), ("[::1]:81:8000", 8000, 81),
    ("9000-9001:8000-8001", 8001, 9001), ("8000:8000/udp", 8000, False),
    ("8000:8001", 8000, False),
])
def test_publish(value: str, port: int, host: int | bool | None) -> None:
    pub = parse_publish(value)
    assert pub is not None and pub.host_port_of(port) == host


@pytest.mark.parametrize("bad", ["x:y", "1:2:3:4", "[::1", "80:"])
def test_publish_refused(bad: str) -> None:
    assert parse_publish(bad) is None


@pytest.mark.parametrize("text,n", [("64m", 64 << 20), ("16g", 16 << 30), ("1GiB", 1 << 30),
                                    ("2gb", 2 << 30), ("1024", 1024), ("1.5g", 3 << 29),
                                    ("lots", None)])
def test_sizes(text: str, n: int | None) -> None:
    assert size_bytes(text) == n


@pytest.mark.parametrize("ref,repo", [
    ("vllm/vllm-openai", "vllm/vllm-openai"), ("vllm/vllm-openai:v0.9.1", "vllm/vllm-openai"),
    ("docker.io/vllm/vllm-openai:latest", "vllm/vllm-openai"),
    ("registry:5000/vllm/vllm-openai@sha256:00", "vllm/vllm-openai"),
    ("docker.io/library/ubuntu:22.04", "ubuntu"), ("LMSYSORG/SGLANG", "lmsysorg/sglang"),
])
def test_image_repository(ref: str, repo: str) -> None:
    assert image_repository(ref) == repo


def test_entrypoint_words() -> None:
    assert entrypoint_words("python3") == ("python3",)
    assert entrypoint_words('["python3", "-m", "x"]') == ("python3", "-m", "x")
    assert entrypoint_words("") == ()
    assert entrypoint_words("[not json") == ("[not json",)


@pytest.mark.parametrize("cli", ["docker", "podman"])
def test_the_option_tables_are_the_real_clis(cli: str) -> None:
    """Every option the installed CLI's ``run --help`` lists takes a value exactly when the
    tables say so, and its one-letter form is the tables' (pflag's help: a type word after
    the option is a value; none is a switch)."""
    import re
    import shutil
    import subprocess

    from eagle_tui.model.launching.container import BOOL_OPTIONS, SHORT, VALUE_OPTIONS

    exe = shutil.which(cli)
    if exe is None:
        pytest.skip(f"no {cli} CLI here (tests/install.sh installs it)")
    out = subprocess.run([exe, "run", "--help"], capture_output=True, text=True, timeout=30,
                         check=False).stdout
    line = re.compile(r"^\s+(?:-(\w), )?--([\w-]+)(?: (\S+))?(?:\s{2,}|$)")
    seen = 0
    for text in out.splitlines():
        m = line.match(text)
        if m is None:
            continue
        short, name, typ = m.groups()
        seen += 1
        assert name in (VALUE_OPTIONS if typ else BOOL_OPTIONS), (cli, name, typ)
        assert short is None or SHORT[short] == name, (cli, short, name)
    assert seen > 80, out[:400]
