"""Pre-launch lint: real-shaped checkpoint configs against real-parsed command lines.

``tests/fixtures/lint/`` holds the EAGLE-3 drafts of both real-server recipes (aux layer ids
made for vLLM and for SGLang), an EAGLE-1 draft and the 4-layer target; the facts about GPUs
and ports are given directly here (the gathering is tested against real files and the
loopback sshd elsewhere).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.model.launching.cmdline import parse_command
from eagle_tui.model.launching.lint import ConfigFact, GpuFact, LintFacts, LintResult, lint
from eagle_tui.probe.facts import gather, port_in_use, read_config
from eagle_tui.probe.tables import load_tables
from eagle_tui.transport.local import LocalTransport
from tests.support.paths import TESTS

FIX = TESTS / "fixtures" / "lint"
TABLES = load_tables()


def cfg(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIX / name / "config.json").read_text())
    return data


def facts(draft: str | None = "eagle3-sglang", **kw: Any) -> LintFacts:
    base: dict[str, Any] = {
        "model": ConfigFact("/m", "ok", cfg("target")),
        "draft": ConfigFact("/d", "ok", cfg(draft)) if draft else None,
        "port_in_use": False,
        "gpus": (GpuFact(0, "H200", 143771, 140000), GpuFact(1, "H200", 143771, 140000)),
    }
    base.update(kw)
    return LintFacts(**base)


def run(cmd: str | list[str], f: LintFacts) -> LintResult:
    return lint(parse_command(cmd, TABLES), f)


def codes(res: LintResult, level: str | None = None) -> list[str]:
    return [x.code for x in res.findings if level is None or x.level == level]


SG = "python -m sglang.launch_server --model-path /m --speculative-draft-model-path /d "


def test_sglang_eagle_with_eagle3_draft_is_an_error_naming_eagle3() -> None:
    res = run(SG + "--speculative-algorithm EAGLE --speculative-num-steps 3 "
              "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4", facts())
    assert codes(res, "error") == ["spec-eagle3-draft-as-eagle"]
    err = res.findings[codes(res).index("spec-eagle3-draft-as-eagle")]
    assert "use EAGLE3" in err.message and "128 dims" in err.message and "384" in err.message
    assert err.fix == "--speculative-algorithm EAGLE3"
    assert not res.ok


def test_nextn_and_prefix_spelling_are_caught_too() -> None:
    for algo in ("NEXTN", "eagle"):
        res = run(SG + f"--speculative-algo {algo}", facts())
        assert "spec-eagle3-draft-as-eagle" in codes(res, "error"), algo


def test_sglang_eagle3_right_draft_passes_and_prints_the_width() -> None:
    res = run(SG + "--speculative-algorithm EAGLE3 --speculative-num-steps 3 "
              "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4", facts())
    assert res.ok, res.findings
    assert res.expected_hidden == 384
    assert "spec-hidden-width" in codes(res, "info")
    assert "spec-aux-layers-ok" in codes(res, "info")


def test_aux_layer_ids_mean_different_things_per_engine() -> None:
    # the vLLM-made draft ([1,2,3]) crashes SGLang on a 4-layer target ...
    res = run(SG + "--speculative-algorithm EAGLE3", facts("eagle3-vllm"))
    assert "spec-aux-layers" in codes(res, "error")
    msg = next(f.message for f in res.findings if f.code == "spec-aux-layers")
    assert "id+1" in msg and "≤ 2" in msg
    # ... and is right for vLLM
    vres = run(['vllm', 'serve', '/m', '--speculative-config',
                '{"method": "eagle3", "model": "/d", "num_speculative_tokens": 3}'],
               facts("eagle3-vllm"))
    assert vres.ok, vres.findings
    assert "spec-aux-layers-ok" in codes(vres, "info")


def test_eagle3_with_an_eagle1_draft_is_an_error() -> None:
    res = run(SG + "--speculative-algorithm EAGLE3", facts("eagle1"))
    assert "spec-eagle3-wrong-draft" in codes(res, "error")
    assert run(SG + "--speculative-algorithm EAGLE", facts("eagle1")).ok


def test_eagle3_without_a_draft_path_is_an_error() -> None:
    res = run("python -m sglang.launch_server --model-path /m --speculative-algorithm EAGLE3",
              facts(None))
    assert "spec-eagle3-no-draft" in codes(res, "error")
    assert "target model as its own draft" in res.findings[0].message


def test_plain_model_without_speculation() -> None:
    res = run("python -m sglang.launch_server --model-path /m", facts(None))
    assert res.ok and res.plan.algorithm is None


def test_vllm_method_eagle_with_eagle3_draft_in_vllm_terms() -> None:
    res = run("vllm serve /m --speculative-config.method eagle --speculative-config.model /d "
              "--speculative-config.num_speculative_tokens 3", facts("eagle3-vllm"))
    err = next(f for f in res.findings if f.code == "spec-eagle3-draft-as-eagle")
    assert err.fix == '"method": "eagle3" in --speculative-config'
    assert "--speculative-algorithm" not in err.message + (err.fix or "")


def test_vllm_inferred_method() -> None:
    res = run(['vllm', 'serve', '/m', '--speculative-config',
               '{"model": "/models/llama-eagle3", "num_speculative_tokens": 3}'],
              facts("eagle3-vllm"))
    assert res.plan.algorithm == "eagle3" and res.plan.inferred
    assert "spec-method-inferred" in codes(res, "info")
    no_tokens = run(['vllm', 'serve', '/m', '--speculative-config', '{"method": "eagle3", '
                     '"model": "/d"}'], facts("eagle3-vllm"))
    assert "spec-num-tokens" in codes(no_tokens, "error")


def test_draft_shape_consistency() -> None:
    adj = run(SG + "--speculative-algorithm EAGLE3 --speculative-num-steps 3 "
              "--speculative-eagle-topk 1 --speculative-num-draft-tokens 8", facts())
    assert "spec-draft-tokens-adjusted" in codes(adj, "warning") and adj.ok
    tree = run(SG + "--speculative-algorithm EAGLE3 --speculative-num-steps 2 "
               "--speculative-eagle-topk 2 --speculative-num-draft-tokens 9", facts())
    assert "spec-draft-tokens-tree" in codes(tree, "error")


def test_unknown_flag_names_the_nearest() -> None:
    res = run("vllm serve /m --gpu-memory-utilisation 0.5", facts(None))
    f = res.findings[0]
    assert f.code == "args-unknown" and f.fix == "did you mean --gpu-memory-utilization?"


def test_host_checks() -> None:
    busy = run(SG + "--speculative-algorithm EAGLE3 --port 30000",
               facts(port_in_use=True, host="gpu-box"))
    assert "port-in-use" in codes(busy, "error")
    assert "gpu-box" in next(f.message for f in busy.findings if f.code == "port-in-use")
    tp = run(SG + "--speculative-algorithm EAGLE3 --tp-size 4", facts())
    assert "tp-too-large" in codes(tp, "error")
    cvd = run("CUDA_VISIBLE_DEVICES=1 " + SG + "--speculative-algorithm EAGLE3 --tp 2", facts())
    assert "tp-too-large" in codes(cvd, "error")
    low = facts(gpus=(GpuFact(0, "H200", 143771, 30000),))
    mem = run(SG + "--speculative-algorithm EAGLE3 --mem-fraction-static 0.88", low)
    assert "gpu-memory" in codes(mem, "error")
    cpu = run(SG + "--speculative-algorithm EAGLE3 --device cpu --tp-size 8", facts())
    assert codes(cpu, "info")[-1] == "gpu-not-applicable" and cpu.ok


def test_paths_missing_and_not_local() -> None:
    f = facts(None, model=ConfigFact("org/model", "not-local"))
    f = LintFacts(model=f.model, gpus=f.gpus, port_in_use=False,
                  draft=ConfigFact("/nope", "missing", detail="/nope/config.json: no such file"))
    res = run("python -m sglang.launch_server --model-path org/model "
              "--speculative-draft-model-path /nope --speculative-algorithm EAGLE3", f)
    assert "draft-missing" in codes(res, "error")
    assert "model-not-local" in codes(res, "info")
    assert "not local: not checked" in " ".join(x.message for x in res.findings)


async def test_gather_reads_real_files_and_ports(tmp_path: Path) -> None:
    import socket

    tr = LocalTransport()
    assert (await read_config(tr, str(FIX / "target"))).status == "ok"
    assert (await read_config(tr, str(tmp_path / "nope"))).status == "missing"
    assert (await read_config(tr, "no-such-org/no-such-model")).status == "not-local"
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{nope")
    bad = await read_config(tr, str(tmp_path / "bad"))
    # the same reader reads the target model's config: its reason names no "draft"
    assert bad.status == "unreadable" and bad.detail.startswith("config.json at ")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert await port_in_use(tr, port) is True
    cmd = parse_command(f"SGLANG_USE_CPU_ENGINE=1 python -m sglang.launch_server --model-path "
                        f"{FIX / 'target'} --speculative-algorithm EAGLE "
                        f"--speculative-draft-model-path {FIX / 'eagle3-sglang'}", TABLES)
    got = await asyncio.wait_for(gather(cmd, tr), 20)
    assert got.cpu_build and got.model and got.model.status == "ok"
    res = lint(cmd, got)
    assert "spec-eagle3-draft-as-eagle" in codes(res, "error")


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    base = [sys.executable, "-m", "eagle_tui", "lint"]
    bad = [*base, "--json", "--", "python", "-m", "sglang.launch_server", "--model-path",
           str(FIX / "target"), "--speculative-algorithm", "EAGLE",
           "--speculative-draft-model-path", str(FIX / "eagle3-sglang"), "--device", "cpu"]
    p = subprocess.run(bad, capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)
    assert out["engine"] == "sglang" and out["errors"] == 1
    assert out["findings"][0]["code"] == "spec-eagle3-draft-as-eagle"
    good = [a if a != "EAGLE" else "EAGLE3" for a in bad if a != "--json"]
    p = subprocess.run(good, capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 errors" in p.stdout and "384" in p.stdout
    p = subprocess.run([*base, "--", "python", "train.py"], capture_output=True, text=True,
                       timeout=60, check=False)
    assert p.returncode == 2 and "not an SGLang or vLLM" in p.stderr


@pytest.mark.parametrize("hostile", ["\x1b]0;pwned\x07", "[red]x[/]", "\x9b31m"])
def test_hostile_paths_are_printed_safely(hostile: str) -> None:
    import io

    from eagle_tui.commands.lint import print_text

    cmd = parse_command(["python", "-m", "sglang.launch_server", "--model-path", "/m",
                         "--speculative-algorithm", "EAGLE3",
                         "--speculative-draft-model-path", f"/d{hostile}"], TABLES)
    out = io.StringIO()
    print_text(cmd, lint(cmd, facts("eagle1")), out)
    assert "\x1b" not in out.getvalue() and "\x07" not in out.getvalue()
    assert "\x9b" not in out.getvalue()
