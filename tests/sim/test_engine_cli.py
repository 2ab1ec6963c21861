"""The simulator behind the engines' own command lines: flags and draft decide its behaviour.

``python -m sglang.launch_server`` (with the stand-in package on PYTHONPATH) must behave as the
real SGLang does for the flags given: EAGLE with an EAGLE-3 draft gives the final hidden
states and accept len ~1.0; EAGLE3 gives 3 × hidden and a healthy length; an ambiguous prefix
is argparse's error and exit 2.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from eagle_tui.sim.engine_cli import ENGINES_DIR, options

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "lint"
DRAFT3 = str(FIX / "eagle3-sglang")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_flags_choose_the_story(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EAGLE_TUI_SIM_SCENARIO", raising=False)
    base = ["--model-path", "/m", "--speculative-draft-model-path", DRAFT3, "--port", "31000"]
    bad, err = options("sglang", [*base, "--speculative-algo", "EAGLE", "--tp", "2"])
    assert bad is not None and not err
    assert bad.scenario == "misconfigured" and bad.port == 31000 and bad.gpus == 2
    assert bad.model_path == "/m" and str(bad.draft_path) == DRAFT3 and bad.log_append
    good, _ = options("sglang", [*base, "--speculative-algorithm", "EAGLE3"])
    assert good is not None and good.scenario == "healthy"
    monkeypatch.setenv("EAGLE_TUI_SIM_SCENARIO", "oom")
    assert options("sglang", [*base, "--speculative-algorithm", "EAGLE3"])[0].scenario == "oom"


def test_engine_errors_are_the_engines() -> None:
    opts, err = options("sglang", ["--model-path", "/m", "--speculative-draft", DRAFT3])
    assert opts is None and err.startswith("launch_server.py: error: ambiguous option")
    opts, err = options("sglang", ["--model-path", "/m", "--speculative-algorithm", "EAGLE3",
                                   "--speculative-draft-model-path", "/no/such/draft"])
    assert opts is None and "does not appear to have a file named config.json" in err
    opts, err = options("vllm", ["/m", "--gpu-memory-utilisation", "0.5"])
    assert opts is None and "unrecognized argument" in err


def _serve(tmp_path: Path, algo: str) -> tuple[str, str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ENGINES_DIR), *filter(None, [
        os.environ.get("PYTHONPATH")])]), "EAGLE_TUI_SIM_SPEED": "40",
        "EAGLE_TUI_SIM_WORKDIR": str(tmp_path / f"work-{algo}")}
    env.pop("EAGLE_TUI_SIM_SCENARIO", None)
    log = tmp_path / f"{algo}.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "sglang.launch_server", "--model-path", "my/model",
             "--speculative-algorithm", algo, "--speculative-draft-model-path", DRAFT3,
             "--port", str(port)], stdout=out, stderr=subprocess.STDOUT, env=env,
            start_new_session=True, cwd=tmp_path)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            time.sleep(0.2)
        for _ in range(3):
            httpx.post(f"{url}/v1/completions", json={"prompt": "hi", "max_tokens": 64},
                       timeout=30)
        deadline = time.monotonic() + 30
        while "accept len" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        return log.read_text(), url
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(10)


@pytest.mark.slow
def test_eagle_vs_eagle3_from_the_command_line(tmp_path: Path) -> None:
    bad, _ = _serve(tmp_path, "EAGLE")
    assert "model_path='my/model'" in bad or "'model_path': 'my/model'" in bad
    dims = {int(d) for d in re.findall(r"hidden_states shape=torch.Size\(\[\d+, (\d+)\]\)", bad)}
    assert dims == {4096}
    accept = [float(a) for a in re.findall(r"accept len: ([\d.]+)", bad)]
    assert accept and max(accept) < 1.2
    good, _ = _serve(tmp_path, "EAGLE3")
    dims = {int(d) for d in re.findall(r"hidden_states shape=torch.Size\(\[\d+, (\d+)\]\)", good)}
    assert dims == {3 * 4096}
    accept = [float(a) for a in re.findall(r"accept len: ([\d.]+)", good)]
    assert accept and min(accept) > 2.5
