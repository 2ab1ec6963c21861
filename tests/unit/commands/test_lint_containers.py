"""``eagle-tui lint -- docker run …`` and ``lint --compose FILE``: the same result shape (text and
``--json``) with the container's findings marked, and ``--fix`` keeping the container's words."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from eagle_tui.cli import main
from eagle_tui.model.boundary.shellwords import join, split
from tests.support.paths import TESTS

FIX = TESTS / "fixtures" / "lint"
HEAD = ["docker", "run", "--rm", "-it", "-p", "8000:8000", "-v", f"{FIX}:/models",
        "-e", "SGLANG_USE_CPU_ENGINE=1", "--name=eagle", "lmsysorg/sglang:v0.5"]
ENGINE = ["python3", "-m", "sglang.launch_server", "--model-path", "/models/target",
          "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path",
          "/models/eagle3-sglang"]


def lint(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["lint", *args])
    got = capsys.readouterr()
    return code, got.out, got.err


def test_text_marks_the_container_findings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = lint(capsys, "--", *HEAD, *ENGINE)
    assert code == 1
    assert "container: docker run, image lmsysorg/sglang:v0.5" in out
    assert "use EAGLE3" in out  # the engine's finding, its draft read through the bind mount
    assert "[container] -p 8000:8000 publishes container port 8000" in out
    assert "[container] the server listens on 127.0.0.1" in out


def test_json_has_the_container_and_each_findings_part(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = lint(capsys, "--json", "--", join([*HEAD, *ENGINE]))  # one quoted string too
    assert code == 1
    res = json.loads(out)
    assert res["engine"] == "sglang" and res["container"]["image"] == "lmsysorg/sglang:v0.5"
    assert res["container"]["publish"] == [{"host_ip": "", "host": "8000", "container": "8000",
                                            "proto": "tcp"}]
    assert res["container"]["env"] == ["SGLANG_USE_CPU_ENGINE"]  # names only: values may be keys
    parts = {f["code"]: f["part"] for f in res["findings"]}
    assert parts["spec-eagle3-draft-as-eagle"] == "engine"
    assert parts["container-port-mismatch"] == parts["container-host-loopback"] == "container"


def test_fix_keeps_the_container_part(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = lint(capsys, "--fix", "--", *HEAD, *ENGINE)
    assert code == 0, err
    line = out.strip()
    assert line.startswith(join(HEAD) + " ")
    words = split(line)
    assert words[:len(HEAD)] == HEAD
    assert words[len(HEAD):] == [*ENGINE[:6], "EAGLE3", *ENGINE[7:], "--port", "8000",
                                 "--host", "0.0.0.0"]
    assert "fixed container-port-mismatch" in err and "fixed spec-eagle3-draft-as-eagle" in err
    code, out, _ = lint(capsys, "--", *words)
    assert code == 0 and "0 errors" in out


def test_fix_json_of_an_entrypoint_image(capsys: pytest.CaptureFixture[str]) -> None:
    head = ["podman", "run", "--device", "nvidia.com/gpu=all", "-p", "9000:8000",
            "vllm/vllm-openai:latest"]
    code, out, _ = lint(capsys, "--fix", "--json", "--", *head, "/m",
                        "--speculative-config", '{"method": "eagle3", "model": "/d"}')
    res = json.loads(out)
    assert res["argv"][:len(head)] == head
    assert res["argv"][len(head):] == ["/m", "--speculative-config",
                                       '{"method": "eagle3", "model": "/d", '
                                       '"num_speculative_tokens": 3}']
    assert res["container"]["lead"] == ["vllm", "serve"] and code in (0, 1)


def _compose(tmp_path: Path, command: str) -> Path:
    (tmp_path / "models").symlink_to(FIX)
    path = tmp_path / "compose.yml"
    path.write_text(f"""
services:
  web:
    image: nginx
  sglang:
    image: lmsysorg/sglang
    command: {command}
    environment: [SGLANG_USE_CPU_ENGINE=1]
    ports: ["30000:30000"]
    volumes: ["./models:/models"]
""")
    return path


@pytest.mark.parametrize("form", ["string", "list"])
def test_compose_service(tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str) -> None:
    words = [*ENGINE, "--host", "0.0.0.0"]
    path = _compose(tmp_path, join(words) if form == "string" else json.dumps(words))
    code, out, _ = lint(capsys, "--compose", str(path))  # the one service that starts a server
    assert code == 1 and "container: compose service sglang" in out and "use EAGLE3" in out
    assert "[container]" not in out
    code, out, _ = lint(capsys, "--compose", str(path), "--service", "sglang", "--fix")
    assert code == 0
    assert out.startswith("command: ") and json.loads(out.removeprefix("command: ")) == [
        *ENGINE[:6], "EAGLE3", *ENGINE[7:], "--host", "0.0.0.0"]


@pytest.mark.parametrize("args,message", [
    (["--compose", "c.yml", "--", "python3"], "not both"),
    (["--service", "s", "--", "python3"], "--service needs --compose"),
    (["--", "docker", "run", "ubuntu", "bash"], "not an SGLang or vLLM"),
    (["--", "docker", "ps"], "not a `docker run` command"),
    (["--compose", "/nonexistent/c.yml"], "no such file"),
])
def test_usage_errors(capsys: pytest.CaptureFixture[str], args: list[str],
                      message: str) -> None:
    code, _, err = lint(capsys, *args)
    assert code == 2 and message in err and err.count("\n") == 1


def test_hostile_compose_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "evil.yml"
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    path.write_text("\n".join(lines) + "\nservices: {s: {image: i, command: *a8}}\n")
    code, _, err = lint(capsys, "--compose", str(path))
    assert code == 2 and "aliases expand" in err and err.count("\n") == 1


def test_the_console_script_reads_a_docker_run() -> None:
    argv = [sys.executable, "-m", "eagle_tui", "lint", "--json", "--", *HEAD, *ENGINE]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 1, p.stderr
    assert json.loads(p.stdout)["container"]["cli"] == "docker"


@pytest.mark.parametrize("hostile", ["\x1b]0;pwned\x07", "\x9b31m"])
def test_hostile_container_words_are_printed_safely(capsys: pytest.CaptureFixture[str],
                                                    hostile: str) -> None:
    code, out, err = lint(capsys, "--", "docker", "run", f"--name=x{hostile}", "-p",
                          f"8000:8000{hostile}", "-v", f"/a{hostile}:/models",
                          f"lmsysorg/sglang{hostile}", *ENGINE[:4], f"/models/m{hostile}")
    assert code in (0, 1), err
    for text in (out, err):
        assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
