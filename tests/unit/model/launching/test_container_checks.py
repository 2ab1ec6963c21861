"""The engine command inside a container run, the container's checks, and a fix that keeps the
container's words.

The checkpoints are ``tests/fixtures/lint`` (bind-mounted in the runs as ``/models``); the host's
GPUs and ports are given as facts here, and gathered for real (files, a listening socket) in
the last tests.
"""

from __future__ import annotations

import asyncio
import json
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.model.boundary.shellwords import join
from eagle_tui.model.launching.cmdline import CommandError
from eagle_tui.model.launching.container import parse_run
from eagle_tui.model.launching.container_checks import (
    ContainerCommand,
    ContainerFacts,
    container_gpus,
    engine_command,
    findings,
    grammar,
    host_path,
    host_port,
    rebuild,
)
from eagle_tui.model.launching.lint import ConfigFact, GpuFact, LintFacts, fix, lint
from eagle_tui.probe.container_facts import gather_container
from eagle_tui.probe.tables import load_tables
from eagle_tui.transport.local import LocalTransport
from tests.support.paths import TESTS

FIX = TESTS / "fixtures" / "lint"
TABLES = load_tables()
SG = ("python3 -m sglang.launch_server --model-path /models/target --host 0.0.0.0 "
      "--speculative-draft-model-path /models/eagle3-sglang --speculative-algorithm EAGLE")
H200 = tuple(GpuFact(i, "H200", 143771, 140000) for i in range(4))


def cfg(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIX / name / "config.json").read_text())
    return data


def read(text: str) -> ContainerCommand:
    return engine_command(parse_run(text), TABLES)


def codes(text: str, facts: LintFacts | None = None,
          cf: ContainerFacts | None = None) -> list[str]:
    cc = read(text)
    return [f.code for f in (*grammar(cc), *findings(cc, facts or LintFacts(),
                                                       cf or ContainerFacts()))]


def test_the_command_after_an_image_that_runs_it() -> None:
    cc = read(f"docker run --gpus all -p 30000:30000 lmsysorg/sglang:latest {SG} --port 30000")
    assert cc.cmd.engine == "sglang" and cc.lead == () and cc.cmd.get("port") == "30000"
    assert codes(f"docker run --gpus all -p 30000:30000 -v /srv:/models lmsysorg/sglang {SG}") \
        == []


def test_an_image_whose_entrypoint_is_the_server_takes_flags_only() -> None:
    cc = read("docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.9 --model M -tp 1")
    assert cc.cmd.engine == "vllm" and cc.lead == ("vllm", "serve")
    assert cc.cmd.get("model") == "M" and not cc.doubled
    cc = read("docker run --gpus all -p 8000:8000 docker.io/vllm/vllm-openai Qwen/Qwen3-0.6B")
    assert cc.cmd.positionals == ("Qwen/Qwen3-0.6B",)


def test_the_entrypoint_repeated_is_an_error() -> None:
    for cmd in ("vllm serve M", "python3 -m vllm.entrypoints.openai.api_server --model M"):
        assert "container-entrypoint-doubled" in codes(
            f"docker run --gpus all -p 8000:8000 vllm/vllm-openai {cmd}")


def test_entrypoint_override() -> None:
    cc = read("docker run --entrypoint python3 --gpus all vllm/vllm-openai "
              "-m vllm.entrypoints.openai.api_server --model M")
    assert cc.lead == ("python3",) and cc.cmd.engine == "vllm" and cc.via == "--entrypoint"
    cc = read('docker run --entrypoint "" --gpus all vllm/vllm-openai vllm serve M')
    assert cc.lead == () and cc.cmd.positionals == ("M",) and not cc.doubled
    cc = read("podman run --entrypoint '[\"vllm\",\"serve\"]' --gpus all img M")
    assert cc.lead == ("vllm", "serve") and cc.cmd.positionals == ("M",)


@pytest.mark.parametrize("text", ["docker run ubuntu", "docker run ubuntu bash",
                                  "docker run lmsysorg/sglang python3 train.py"])
def test_a_run_of_no_server(text: str) -> None:
    with pytest.raises(CommandError):
        read(text)


def test_gpus_against_the_parallel_sizes() -> None:
    base = ("docker run -p 30000:30000 {gpus} --ipc=host -v /s:/models lmsysorg/sglang {SG} "
            "--tp 2 {more}")

    def c(gpus: str, more: str = "") -> list[str]:
        return codes(base.format(gpus=gpus, SG=SG, more=more))
    assert "container-no-gpus" in c("")
    assert "container-gpus-too-few" in c("--gpus 1")
    assert "container-gpus-too-few" in c("--gpus '\"device=0\"'")
    assert "container-gpus-too-few" in c("--gpus 2", "--dp-size 2")  # 2 × 2 replicas
    assert "container-gpus-too-few" not in c("--gpus 2", "--dp-size 2 --enable-dp-attention")
    assert "container-gpus-too-few" not in c("--gpus 2", "--pp-size 2 --nnodes 2")
    assert c("--gpus all") == c("--gpus 2") == c("--device nvidia.com/gpu=all") == []
    assert c("--runtime nvidia -e NVIDIA_VISIBLE_DEVICES=0,1") == []
    assert "container-gpus-invalid" in c("--gpus device=0,1")
    assert "container-no-gpus" not in c("--privileged")
    assert "container-no-gpus" not in c("--device /dev/kfd --device=/dev/dri")  # ROCm's
    cc = read(base.format(gpus="--gpus '\"device=5\"'", SG=SG, more=""))
    assert "container-gpu-missing" in [f.code for f in findings(cc, LintFacts(gpus=H200),
                                                                 ContainerFacts())]


def test_vllm_multiplies_its_sizes_too() -> None:
    text = "docker run --gpus 2 --ipc=host -p 8000:8000 vllm/vllm-openai M -tp 2 {more}"
    assert "container-gpus-too-few" in codes(text.format(more="-pp 2"))
    assert "container-gpus-too-few" in codes(text.format(more="-dp 2"))
    assert "container-gpus-too-few" not in codes(text.format(more="-dp 4 -dpl 1"))


def test_cpu_builds_need_no_gpu() -> None:
    text = f"podman run -p 30000:30000 -e SGLANG_USE_CPU_ENGINE=1 lmsysorg/sglang {SG}"
    cc = read(text)
    facts = LintFacts(cpu_build=True)
    assert "container-no-gpus" not in [f.code for f in findings(cc, facts, ContainerFacts())]


def test_the_container_sees_the_gpus_it_is_given_numbered_from_zero() -> None:
    assert [g.index for g in container_gpus(parse_run("docker run --gpus all i"), H200)] == \
        [0, 1, 2, 3]
    seen = container_gpus(parse_run("docker run --gpus '\"device=2,3\"' i"), H200)
    assert [g.index for g in seen] == [0, 1] and len(seen) == 2
    assert len(container_gpus(parse_run("docker run --gpus 3 i"), H200)) == 3
    assert container_gpus(parse_run("docker run i"), H200) == ()


def test_tensor_parallel_against_the_gpus_the_container_sees() -> None:
    cc = read(f"docker run --gpus 1 --ipc=host -p 30000:30000 lmsysorg/sglang {SG} --tp 2")
    gpus = container_gpus(cc.run, H200)
    res = lint(cc.cmd, LintFacts(gpus=gpus))
    assert "tp-too-large" in [f.code for f in res.findings]


def test_shared_memory_for_nccl() -> None:
    base = f"docker run --gpus all -p 30000:30000 {{opt}} lmsysorg/sglang {SG} --tp {{tp}}"
    assert "container-shm-small" in codes(base.format(opt="", tp=2))
    assert "container-shm-small" in codes(base.format(opt="--shm-size 256m", tp=2))
    assert "container-shm-small" not in codes(base.format(opt="--shm-size=32g", tp=2))
    assert "container-shm-small" not in codes(base.format(opt="--ipc host", tp=2))
    assert "container-shm-small" not in codes(base.format(opt="", tp=1))


def test_published_port_and_listen_address() -> None:
    sg = SG.replace("--host 0.0.0.0 ", "")
    assert "container-host-loopback" in codes(f"docker run --gpus 1 -p 30000:30000 "
                                               f"lmsysorg/sglang {sg}")
    assert "container-host-loopback" not in codes(f"docker run --gpus 1 --network host "
                                                   f"lmsysorg/sglang {sg}")
    assert "container-port-mismatch" in codes(f"docker run --gpus 1 -p 8000:8000 "
                                               f"lmsysorg/sglang {SG}")
    assert "container-port-mismatch" not in codes(f"docker run --gpus 1 -p 8000:30000 "
                                                   f"lmsysorg/sglang {SG}")
    assert "container-port-unpublished" in codes(f"docker run --gpus 1 lmsysorg/sglang {SG}")
    assert "container-port-unchecked" in codes(f"docker run --gpus 1 -P lmsysorg/sglang {SG}")
    assert "container-publish-ignored" in codes(f"docker run --gpus 1 --net=host -p 1:1 "
                                                 f"lmsysorg/sglang {SG}")
    # vLLM listens on every interface unless told otherwise
    assert "container-host-loopback" not in codes("docker run --gpus 1 -p 8000:8000 "
                                                   "vllm/vllm-openai M")
    cc = read(f"docker run --gpus 1 -p 9000:30000 lmsysorg/sglang {SG}")
    assert host_port(cc) == 9000
    assert host_port(read(f"docker run --gpus 1 --network=host lmsysorg/sglang {SG}")) == 30000
    assert "container-port-in-use" in codes(f"docker run --gpus 1 -p 9000:30000 lmsysorg/sglang "
                                            f"{SG}", cf=ContainerFacts(9000, True))


def test_paths_under_mounts() -> None:
    run = parse_run("docker run -v /srv/models:/models -v hf:/root/.cache/huggingface "
                    "--mount type=bind,src=/deep,dst=/models/deep i")
    assert host_path(run, "/models/x/") == ("/srv/models/x", run.mounts[0])
    assert host_path(run, "/models/deep/y")[0] == "/deep/y"  # the deepest mount wins
    assert host_path(run, "/root/.cache/huggingface/hub")[0] is None
    assert host_path(run, "/opt/m") == (None, None)
    text = "docker run --gpus 1 -p 8000:8000 {v} vllm/vllm-openai {m}"
    assert "container-model-unchecked" in codes(text.format(v="", m="/opt/m"))
    assert "container-model-unchecked" in codes(text.format(v="", m="org/model"))
    assert "container-model-unchecked" not in codes(
        text.format(v="-v /hf:/root/.cache/huggingface", m="org/model"))
    assert "container-model-unchecked" not in codes(text.format(v="-v /m:/opt", m="/opt/m"))


@pytest.mark.parametrize("container", [
    "docker run --gpus all -p 8000:8000 -v {F}:/models -it --rm --name=s --ipc=host",
    "sudo podman --remote run -dt --device nvidia.com/gpu=all -p=8000:8000 -v={F}:/models",
])
def test_fix_rewrites_the_engine_words_only(container: str) -> None:
    """EAGLE → EAGLE3, --port and --host: the container's words stay word for word."""
    head = container.format(F=FIX) + " lmsysorg/sglang:v0.5"
    text = f"{head} {SG.replace('--host 0.0.0.0 ', '')}"
    cc = read(text)
    facts = LintFacts(model=ConfigFact("/models/target", "ok", cfg("target")),
                      draft=ConfigFact("/models/eagle3-sglang", "ok", cfg("eagle3-sglang")))
    res = lint(cc.cmd, facts)
    res_all = [*res.findings, *findings(cc, facts, ContainerFacts())]
    done = fix(cc.cmd, replace(res, findings=tuple(res_all)), TABLES["sglang"])
    whole = rebuild(cc, done.words)
    assert join(whole).startswith(join(list(cc.run.head)) + " ")
    again = read(join(whole))
    assert again.run.head == cc.run.head
    assert again.cmd.get("speculative_algorithm") == "EAGLE3"
    assert again.cmd.get("port") == "8000" and again.cmd.get("host") == "0.0.0.0"
    assert [f.code for f in findings(again, facts, ContainerFacts())] == []


async def test_gather_reads_the_bind_mounted_checkpoints_and_the_published_port() -> None:
    tr = LocalTransport()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        cc = read(f"docker run -p {port}:30000 -v {FIX}:/models -e SGLANG_USE_CPU_ENGINE=1 "
                  f"lmsysorg/sglang {SG}")
        facts, cf = await asyncio.wait_for(gather_container(cc, tr), 20)
    assert cf == ContainerFacts(port, True) and facts.port_in_use is None
    assert facts.cpu_build and facts.model is not None and facts.model.status == "ok"
    assert facts.model.given == "/models/target"
    res = lint(cc.cmd, facts)
    assert "spec-eagle3-draft-as-eagle" in [f.code for f in res.findings]
    assert "container-port-in-use" in [f.code for f in findings(cc, facts, cf)]


async def test_gather_a_missing_model_names_the_host_path(tmp_path: Path) -> None:
    cc = read(f"docker run -p 1:30000 -v {tmp_path}:/models -e SGLANG_USE_CPU_ENGINE=1 "
              f"lmsysorg/sglang {SG}")
    facts, _cf = await asyncio.wait_for(gather_container(cc, LocalTransport()), 20)
    assert facts.model is not None and facts.model.status == "missing"
    missing = [f for f in lint(cc.cmd, facts).findings if f.code == "model-missing"]
    assert missing and f"{tmp_path}/target" in missing[0].message
    assert f"mounted by {tmp_path}:/models" in missing[0].message


@pytest.mark.parametrize("script", [
    "pip install x && exec python3 -m sglang.launch_server --model-path /models/m --tp 2",
    "python3 -m sglang.launch_server --model-path /models/m --tp 2; sleep infinity",
    "python3 -m sglang.launch_server --model-path /models/m --tp 2 > /log 2>&1",
])
def test_a_shell_scripts_step_is_the_engine_command(script: str) -> None:
    text = join(["docker", "run", "--gpus", "2", "--ipc=host", "-p", "8000:8000",
                 "lmsysorg/sglang", "bash", "-lc", script])
    cc = read(text)
    assert cc.script is not None and cc.cmd.get("tp_size") == "2"
    assert cc.cmd.get("model_path") == "/models/m" and "bash -lc" in cc.via
    assert "container-port-mismatch" in [f.code for f in findings(cc, LintFacts(),
                                                                   ContainerFacts())]
    fixed = rebuild(cc, [*cc.cmd.prefix, *cc.cmd.args, "--port", "8000"])
    assert fixed[:-1] == [*cc.run.head, "bash", "-lc"] and len(fixed) == len(cc.run.head) + 3
    again = read(join(fixed))
    assert again.cmd.get("port") == "8000" and again.run.head == cc.run.head
    assert again.script is not None
    rest = cc.script.words[cc.script.end:]
    assert again.script.words[again.script.end:] == rest  # the steps after it kept
    assert again.script.words[:again.script.start] == cc.script.words[:cc.script.start]
