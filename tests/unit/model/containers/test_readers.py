"""The inspect and ps readers on real and recorded output of both CLIs (tests/fixtures/
containers/README.md says where each came from), and on hostile text: bounded, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eagle_tui.model.containers.inspect import (
    MAX_CONTAINERS,
    MAX_TEXT,
    MAX_WORDS,
    ContainerFacts,
    InspectError,
    PortMap,
    read_inspect,
)
from eagle_tui.model.containers.listing import read_ps

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "containers"
SETTINGS = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def facts(name: str) -> ContainerFacts:
    [one] = read_inspect((FIX / name).read_text())
    return one


def test_podman_running() -> None:
    f = facts("podman-inspect-running.json")
    assert f.id.startswith("5d0579a05a22") and f.name == "eagletest-capture-14018-1"
    assert (f.status, f.pid, f.exit_code, f.oom_killed) == ("running", 14092, 0, False)
    assert f.memory_limit == 256 << 20 and f.restart_policy == "on-failure:2"
    assert f.network_mode == "host" and f.ports == () and f.finished_at == ""
    assert f.command[:3] == ("/work/main/.venv/bin/python", "-m", "eagle_tui.sim")
    assert f.label("com.docker.compose.service") == "sglang"
    assert f.started_at == "2026-12-02T08:25:38.757291725Z"


def test_podman_killed_and_docker_cli_agree() -> None:
    killed = facts("podman-inspect-killed.json")
    assert (killed.status, killed.exit_code, killed.pid, killed.oom_killed) == \
        ("exited", 137, 0, False)
    via_docker = facts("docker-cli-inspect-running.json")
    podman = facts("podman-inspect-running.json")
    # the docker CLI's shape (a "/" before the name, Entrypoint a list, Image an id) reads the same
    for field in ("id", "name", "status", "pid", "memory_limit", "restart_policy", "command",
                  "network_mode", "labels", "started_at"):
        assert getattr(via_docker, field) == getattr(podman, field), field


def test_dockerd_oomkilled_and_published() -> None:
    f = facts("dockerd-inspect-oomkilled.json")
    assert (f.name, f.image, f.status, f.exit_code, f.oom_killed) == \
        ("sglang-eagle3", "lmsysorg/sglang:latest", "exited", 137, True)
    assert (f.memory_limit, f.restart_count, f.restart_policy) == (16 << 30, 2, "on-failure:5")
    # an exited container's NetworkSettings.Ports is empty: the binding is HostConfig's
    assert f.ports == (PortMap(30000, "tcp", "", 30000),)
    v = facts("dockerd-inspect-vllm-published.json")
    assert v.command[:3] == ("vllm", "serve", "Qwen/Qwen3-8B") and v.auto_remove
    assert v.ports == (PortMap(8000, "tcp", "127.0.0.1", 8001),)
    assert v.ip_address == "172.17.0.3" and v.image == "vllm/vllm-openai:v0.11.0"


def test_entrypoint_and_cmd_when_no_path() -> None:
    obj = json.loads((FIX / "dockerd-inspect-vllm-published.json").read_text())[0]
    del obj["Path"], obj["Args"]
    [f] = read_inspect(json.dumps(obj))
    assert f.command[:3] == ("vllm", "serve", "Qwen/Qwen3-8B")
    obj["Config"]["Entrypoint"] = ""  # podman prints an empty entrypoint as a string
    [f] = read_inspect(json.dumps(obj))
    assert f.command[0] == "Qwen/Qwen3-8B"


def test_ps_both_shapes() -> None:
    [p] = read_ps((FIX / "podman-ps.json").read_text())
    [d] = read_ps((FIX / "docker-cli-ps.jsonl").read_text())
    assert p.id == d.id and p.name == d.name == "eagletest-capture-14018-1"
    assert p.state == d.state == "running"
    assert p.command == d.command and p.command[2] == "eagle_tui.sim"
    assert p.labels == d.labels
    rows = read_ps((FIX / "dockerd-ps.jsonl").read_text())
    assert [r.name for r in rows] == ["vllm-qwen", "sglang-eagle3", "cache"]
    assert rows[0].command[:2] == ("vllm", "serve")
    assert rows[0].command[3:5] == ("--speculative-config", '{"method":')
    assert rows[1].status.startswith("Exited (137)")
    assert read_ps("") == [] and read_ps("[]") == []


@pytest.mark.parametrize("text", ["", "not json", "{", "[1, 2, \"x\"]", "{\"Id\": 5}",
                                  "[" * 5000 + "]" * 5000, "\"" + "a" * (5 << 20) + "\""])
def test_inspect_refuses_what_is_not_inspect(text: str) -> None:
    with pytest.raises(InspectError):
        read_inspect(text)


def test_inspect_bounds() -> None:
    huge = {"Id": "x" * 10_000, "Name": "n" * 10_000, "Path": "p", "Args": ["a"] * 50_000,
            "Config": {"Labels": {f"k{i}": "v" for i in range(5000)}},
            "NetworkSettings": {"Ports": {f"{p}/tcp": [{"HostPort": str(p)}]
                                          for p in range(1, 2000)}},
            "State": {"Pid": 1 << 70, "ExitCode": "137", "OOMKilled": "true"},
            "RestartCount": -5, "HostConfig": {"Memory": -1}}
    f, *more = read_inspect(json.dumps([huge] * 3))
    assert len(more) == 2
    assert len(f.id) == 128 and len(f.name) == MAX_TEXT and len(f.command) == MAX_WORDS
    assert len(f.labels) == 256 and len(f.ports) <= 256
    assert (f.pid, f.exit_code, f.oom_killed, f.restart_count, f.memory_limit) == \
        (0, None, False, 0, 0)
    many = json.dumps([{"Id": str(i)} for i in range(MAX_CONTAINERS + 50)])
    assert len(read_inspect(many)) == MAX_CONTAINERS


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(
        st.sampled_from(["Id", "ID", "Name", "Names", "State", "Status", "Pid", "ExitCode",
                         "Config", "HostConfig", "NetworkSettings", "Ports", "Args", "Path",
                         "Labels", "Cmd", "Entrypoint", "Memory", "RestartCount", "HostPort",
                         "30000/tcp", "Image", "ImageName", "Command", "x"]),
        inner, max_size=8),
    max_leaves=60)


@given(_JSON)
@SETTINGS
def test_any_json_reads_or_refuses(doc: object) -> None:
    text = json.dumps(doc)
    try:
        found = read_inspect(text)
    except InspectError:
        found = []
    for f in found:
        assert isinstance(f, ContainerFacts) and f.id and isinstance(f.command, tuple)
    rows = []
    try:
        rows = read_ps(text)
    except InspectError:
        pass
    assert all(r.id for r in rows)


@given(st.text(max_size=300))
@SETTINGS
def test_any_text_reads_or_refuses(text: str) -> None:
    try:
        read_inspect(text)
    except InspectError:
        pass
    try:
        read_ps(text)
    except InspectError:
        pass
