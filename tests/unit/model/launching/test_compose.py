"""A compose service read as a container run (both command forms, ports, GPUs, volumes), and
the YAML reader's bounds against hostile documents (size, depth, alias expansion)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from eagle_tui.model.boundary.loaders import LoadError
from eagle_tui.model.launching.cmdline import CommandError
from eagle_tui.model.launching.compose import service_run
from eagle_tui.model.launching.container_checks import engine_command
from eagle_tui.probe.compose_file import MAX_BYTES, load_compose, read_compose
from eagle_tui.probe.tables import load_tables

TABLES = load_tables()
STRING_FORM = """
services:
  sglang:
    image: lmsysorg/sglang:latest
    command: python3 -m sglang.launch_server --model-path /models/m --host 0.0.0.0 --port 30000
    ports: ["30000:30000"]
    shm_size: 32gb
    ipc: host
    environment:
      HF_TOKEN: x
      CUDA_VISIBLE_DEVICES: "0,1"
    volumes:
      - ./models:/models:ro
      - type: bind
        source: /hf
        target: /root/.cache/huggingface
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["0", "1"]
              capabilities: [gpu]
"""
LIST_FORM = """
x-gpu: &gpu
  resources:
    reservations:
      devices: [{driver: nvidia, count: all, capabilities: [gpu]}]
services:
  webui:
    image: ghcr.io/open-webui/open-webui
    ports: ["3000:8080"]
  vllm:
    image: vllm/vllm-openai:latest
    command: ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", 2]
    network_mode: host
    environment: ["VLLM_LOGGING_LEVEL=DEBUG"]
    ports:
      - target: 8000
        published: 8001
    deploy: *gpu
"""


def test_the_string_form() -> None:
    name, run = service_run(load_compose(STRING_FORM, "c.yml"), None, "/proj")
    assert name == "sglang" and run.cli == "compose" and run.head == ()
    assert run.command[:3] == ("python3", "-m", "sglang.launch_server")
    assert run.shm_bytes == 32 << 30 and run.ipc == "host"
    assert run.publish[0].host_port_of(30000) == 30000
    assert ("CUDA_VISIBLE_DEVICES", "0,1") in run.env
    assert [(m.kind, m.source, m.target, m.readonly) for m in run.mounts] == [
        ("bind", "/proj/models", "/models", True),
        ("bind", "/hf", "/root/.cache/huggingface", False)]
    assert run.gpus[0].count == 2 and run.gpus[0].devices == ("0", "1")
    cc = engine_command(run, TABLES)
    assert cc.cmd.engine == "sglang" and cc.cmd.get("port") == "30000"


def test_the_list_form_with_an_entrypoint_image_and_an_anchor() -> None:
    doc = load_compose(LIST_FORM, "c.yml")
    _, run = service_run(doc, "vllm")
    assert run.command == ("--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2")
    assert run.network == "host" and run.gpus[0].count is None
    assert run.publish[0].host_port_of(8000) == 8001
    cc = engine_command(run, TABLES)
    assert cc.lead == ("vllm", "serve") and cc.cmd.get("tensor_parallel_size") == "2"
    with pytest.raises(CommandError, match="choose one with --service"):
        service_run(doc, None)
    with pytest.raises(CommandError, match="no service 'nope'"):
        service_run(doc, "nope")
    with pytest.raises(CommandError):  # a service that starts no server
        engine_command(service_run(doc, "webui")[1], TABLES)


@pytest.mark.parametrize("doc", ["", "services: []", "services: {}", "- a", "x: 1"])
def test_not_a_compose_file(doc: str) -> None:
    with pytest.raises(CommandError, match="no services"):
        service_run(load_compose(doc, "c.yml"), None)


def test_count_and_gpus_keys() -> None:
    doc = load_compose("services:\n  s:\n    image: i\n    gpus: all\n"
                       "    devices: [nvidia.com/gpu=0]\n", "c")
    gpus = service_run(doc, None)[1].gpus
    assert gpus[0].count is None and gpus[1].devices == ("0",)
    doc = load_compose("services:\n  s:\n    image: i\n    deploy: {resources: {reservations: "
                       "{devices: [{driver: nvidia, count: 1, device_ids: ['0']}]}}}\n", "c")
    assert "exclusive" in service_run(doc, None)[1].gpus[0].problem


def _laughs(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        refs = ",".join(f"*a{i - 1}" for _ in range(10))
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + f"\nservices: {{s: {{image: i, command: *a{levels - 1}}}}}\n"


@pytest.mark.parametrize("text,reason", [
    (_laughs(9), "aliases expand"),
    ("[" * 200 + "]" * 200, "nested deeper"),
    ("services:\n  s: {image: [unclosed\n", "not valid YAML at line"),
    ("services: !!python/object:os.system {}\n", "not valid YAML"),
    ("a: " + "x" * (MAX_BYTES + 10), "larger than"),
])
def test_hostile_yaml_is_one_clear_error_and_quick(text: str, reason: str) -> None:
    start = time.process_time()
    with pytest.raises(LoadError, match=reason) as info:
        load_compose(text, "evil.yml")
    assert time.process_time() - start < 2.0
    assert str(info.value).startswith("evil.yml: ") and "\n" not in str(info.value)


def test_a_few_levels_of_aliases_are_fine() -> None:
    assert load_compose(_laughs(3), "ok.yml")["services"]["s"]["image"] == "i"


def test_read_compose_refuses_what_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no such file"):
        read_compose(str(tmp_path / "nope.yml"))
    with pytest.raises(LoadError, match="directory"):
        read_compose(str(tmp_path))
    (tmp_path / "bin.yml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(LoadError):
        read_compose(str(tmp_path / "bin.yml"))
