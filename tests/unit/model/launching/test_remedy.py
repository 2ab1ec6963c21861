"""Remedies as edits: every lint rule with a known fix, triggered in each spelling the engines'
parsers accept (abbreviations, ``=`` forms, ``_`` for ``-``, JSON and dotted configs), fixed by
its remedy and linted again: the finding is gone and no new warning or error appears.

The facts follow the command: the port in use is the busy one only while the command asks
for it (as the probe would find on the host).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.model.engines import profiles
from eagle_tui.model.launching.cmdline import parse_command
from eagle_tui.model.launching.lint import (
    ConfigFact,
    GpuFact,
    LintFacts,
    LintResult,
    fix,
    lint,
)
from eagle_tui.model.launching.remedy import Edit, Remedy, apply, set_flag, set_key
from eagle_tui.probe.tables import load_tables
from tests.support.paths import REPO, TESTS

FIX = TESTS / "fixtures" / "lint"
TABLES = load_tables()
BUSY = 30000
EAGLE1 = {"architectures": ["LlamaForCausalLMEagle"], "hidden_size": 128,
          "num_hidden_layers": 1}


def cfg(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIX / name / "config.json").read_text())
    return data


def facts(draft: dict[str, Any] | None, **kw: Any) -> LintFacts:
    base: dict[str, Any] = {
        "model": ConfigFact("/m", "ok", cfg("target")),
        "draft": ConfigFact("/d", "ok", draft) if draft else None,
        "port_in_use": False,
        "gpus": (GpuFact(0, "H200", 143771, 140000),),
    }
    base.update(kw)
    return LintFacts(**base)


def host_facts(words: list[str], f: LintFacts) -> LintFacts:
    """The facts of ``words`` on a host where :data:`BUSY` is taken and the next port free."""
    cmd = parse_command(words, TABLES)
    profile = next(p for p in profiles() if p.name == cmd.engine)
    port = int(cmd.get(profile.launch.port_dest) or profile.default_port)
    return replace(f, port_in_use=port == BUSY, free_port=BUSY + 1 if port == BUSY else None)


def linted(words: list[str], f: LintFacts) -> LintResult:
    return lint(parse_command(words, TABLES), host_facts(words, f))


def serious(res: LintResult) -> set[str]:
    return {x.code for x in res.findings if x.level != "info"}


SG = ["python", "-m", "sglang.launch_server", "--model-path", "/m",
      "--speculative-draft-model-path", "/d"]
SG_SHAPE = ["--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", "4"]
VL = ["vllm", "serve", "/m"]
E3 = cfg("eagle3-sglang")
E3V = cfg("eagle3-vllm")
GPU_HALF = {"gpus": (GpuFact(0, "H200", 100000, 50000),)}

# (code, words, draft config, other facts): every rule with a remedy, in each spelling
CASES: list[tuple[str, list[str], dict[str, Any] | None, dict[str, Any]]] = [
    *[("spec-eagle3-draft-as-eagle", SG + algo + SG_SHAPE, E3, {}) for algo in (
        ["--speculative-algorithm", "EAGLE"], ["--speculative-algo", "EAGLE"],
        ["--speculative-algorithm=EAGLE"], ["--speculative-algo=NEXTN"],
        ["--speculative-algorithm", "EAGLE", "--speculative-algorithm", "NEXTN"])],
    *[("spec-eagle3-wrong-draft", SG + algo + SG_SHAPE, EAGLE1, {}) for algo in (
        ["--speculative-algorithm", "EAGLE3"], ["--speculative-algor=EAGLE3"])],
    ("spec-draft-tokens-adjusted", [*SG, "--speculative-algorithm", "EAGLE3",
     "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
     "--speculative-num-draft", "8"], E3, {}),
    ("spec-draft-tokens-tree", [*SG, "--speculative-algorithm", "EAGLE3",
     "--speculative-num-steps", "2", "--speculative-eagle-topk", "2",
     "--speculative-num-draft-tokens=9"], E3, {}),
    *[("spec-eagle3-draft-as-eagle", VL + spec, E3V, {}) for spec in (
        ["--speculative-config", '{"method": "eagle", "model": "/d", '
         '"num_speculative_tokens": 3}'],
        ['--speculative-config={"method":"eagle","model":"/d","num_speculative_tokens":3}'],
        ["-sc", '{"method": "eagle", "model": "/d", "num_speculative_tokens": 3}'],
        ["--speculative_config", '{"method": "eagle", "model": "/d", '
         '"num_speculative_tokens": 3}'],
        ["--speculative-config.method", "eagle", "--speculative-config.model", "/d",
         "--speculative-config.num_speculative_tokens", "3"],
        ["--speculative-config", '{"model": "/d", "num_speculative_tokens": 3}',
         "--speculative-config.method=eagle"],
        ["--speculative-config", '{"model": "/ckpt/llama-eagle-x", '
         '"num_speculative_tokens": 3}'],  # the method inferred from the draft's name
        ["--spec-method", "eagle", "--spec-model", "/d", "--spec-tokens", "3"])],
    *[("spec-eagle3-wrong-draft", VL + spec, EAGLE1, {}) for spec in (
        ["--speculative-config", '{"method": "eagle3", "model": "/d", '
         '"num_speculative_tokens": 3}'],
        ["--spec-method", "eagle3", "--spec-model", "/d", "--spec-tokens", "3"])],
    *[("spec-num-tokens", VL + spec, E3V, {}) for spec in (
        ["--speculative-config", '{"method": "eagle3", "model": "/d"}'],
        ["--speculative-config.method", "eagle3", "--speculative-config.model", "/d"],
        ["--spec-method", "eagle3", "--spec-model", "/d"])],
    *[("port-in-use", base + port, None, {}) for base in (SG, VL) for port in (
        ["--port", str(BUSY)], [f"--port={BUSY}"], ["--por", str(BUSY)])],
    *[("gpu-memory", SG + mem, None, GPU_HALF) for mem in (
        ["--mem-fraction-static", "0.9"], ["--mem-frac=0.9"], ["--mem_fraction_static", "0.9"]
        if TABLES["sglang"].underscores else ["--mem-fraction", "0.9"])],
    *[("gpu-memory", VL + mem, None, GPU_HALF) for mem in (
        ["--gpu-memory-utilization", "0.9"], ["--gpu_memory_utilization=0.9"],
        ["--device-memory-utilization", "0.95"], [])],  # (none given: vLLM's 0.9)
]


@pytest.mark.parametrize(("code", "words", "draft", "extra"), CASES,
                         ids=[f"{c[0]}:{' '.join(c[1][3:])[:60]}" for c in CASES])
def test_each_remedy_fixes_its_finding_and_adds_none(
        code: str, words: list[str], draft: dict[str, Any] | None,
        extra: dict[str, Any]) -> None:
    f = facts(draft, **extra)
    before = linted(words, f)
    hit = [x for x in before.findings if x.code == code]
    assert hit and hit[0].remedy is not None, before.findings
    cmd = parse_command(words, TABLES)
    fixed = fix(cmd, before, TABLES[cmd.engine])
    after = linted(fixed.words, f)
    assert code not in {x.code for x in after.findings}, (fixed.words, after.findings)
    assert serious(after) <= serious(before) - {code}, (fixed.words, after.findings)
    assert not parse_command(fixed.words, TABLES).problems
    # in place: no option given twice that was given once, the user's spelling kept
    assert len(fixed.words) <= len(words) + 2
    assert fixed.words[:len(cmd.prefix)] == list(cmd.prefix)


def test_an_abbreviation_is_edited_where_it_stands() -> None:
    cmd = parse_command([*SG, "--speculative-algo", "EAGLE", "--port", "1"], TABLES)
    out = apply(cmd, set_flag("--speculative-algorithm", "EAGLE3"), TABLES["sglang"])
    assert out == [*SG, "--speculative-algo", "EAGLE3", "--port", "1"]
    eq = parse_command([*SG, "--speculative-algo=EAGLE"], TABLES)
    assert apply(eq, set_flag("--speculative-algorithm", "EAGLE3"), TABLES["sglang"]) \
        == [*SG, "--speculative-algo=EAGLE3"]


def test_a_json_key_is_set_inside_the_json_and_a_dotted_key_where_it_is() -> None:
    table = TABLES["vllm"]
    js = parse_command([*VL, "--speculative-config", '{"method": "eagle", "model": "/d"}'],
                       TABLES)
    out = apply(js, set_key("--speculative-config", "method", "eagle3"), table)
    assert out[:4] == [*VL, "--speculative-config"]
    assert json.loads(out[4]) == {"method": "eagle3", "model": "/d"}
    dotted = parse_command([*VL, "--speculative-config.method", "eagle", "--port", "8"], TABLES)
    assert apply(dotted, set_key("--speculative-config", "method", "eagle3"), table) == \
        [*VL, "--speculative-config.method", "eagle3", "--port", "8"]
    none = parse_command(VL, TABLES)
    assert apply(none, set_key("--speculative-config", "num_speculative_tokens", 3), table) \
        == [*VL, "--speculative-config", '{"num_speculative_tokens": 3}']


def test_add_remove_and_a_repeated_flag() -> None:
    table = TABLES["sglang"]
    twice = parse_command([*SG, "--port", "1", "--port=2"], TABLES)
    assert apply(twice, set_flag("--port", "3"), table) == [*SG, "--port=3"]
    gone = apply(twice, Remedy("no port", (Edit("remove", "--port"),)), table)
    assert gone == SG
    env = parse_command(["HF_TOKEN=x", *SG], TABLES)
    assert apply(env, Remedy("add", (Edit("add", "--port", "5"),)), table) == \
        ["HF_TOKEN=x", *SG, "--port", "5"]
    with pytest.raises(KeyError):
        apply(env, set_flag("--no-such-flag", "1"), table)


def test_no_remedy_where_the_fix_is_not_certain() -> None:
    plain_eagle1 = cfg("eagle1")  # a draft with no EAGLE architecture: another draft is needed
    res = linted([*SG, "--speculative-algorithm", "EAGLE3", *SG_SHAPE], facts(plain_eagle1))
    wrong = next(x for x in res.findings if x.code == "spec-eagle3-wrong-draft")
    assert wrong.remedy is None
    no_draft = lint(parse_command(["python", "-m", "sglang.launch_server", "--model-path",
                                   "/m", "--speculative-algorithm", "EAGLE3"], TABLES),
                    facts(None))
    assert all(x.remedy is None for x in no_draft.findings)
    busy_unknown = lint(parse_command([*SG, "--port", str(BUSY)], TABLES),
                        facts(None, port_in_use=True))  # the probe found no free port
    assert next(x for x in busy_unknown.findings if x.code == "port-in-use").remedy is None


def test_the_fix_is_applied_once_and_reported() -> None:
    two = facts(None, gpus=(GpuFact(0, "H200", 100000, 50000), GpuFact(1, "H200", 100000,
                                                                        40000)))
    words = [*SG, "--tp-size", "2", "--mem-fraction-static", "0.9", "--port", str(BUSY)]
    res = linted(words, two)
    cmd = parse_command(words, TABLES)
    fixed = fix(cmd, res, TABLES["sglang"])
    assert [f.code for f in fixed.applied] == ["port-in-use", "gpu-memory", "gpu-memory"]
    assert fixed.words == [*SG, "--tp-size", "2", "--mem-fraction-static", "0.4", "--port",
                           str(BUSY + 1)]


# ---------------------------------------------------------------- every code decides

#: The lint's codes and whether each carries a remedy (a new rule must be added here).
LINT_REMEDIES = {
    "args-unknown": False, "args-ambiguous": False, "args-missing-value": False,
    "args-choice": False, "args-json": False, "args-cut": False,
    "model-missing": False, "model-not-local": False, "model-unreadable": False,
    "draft-missing": False, "draft-not-local": False, "draft-unreadable": False,
    "port-in-use": True, "gpu-not-applicable": False, "gpu-unknown": False,
    "tp-too-large": False, "gpu-memory": True,
    "spec-unknown-algorithm": False, "spec-eagle3-no-draft": False,
    "spec-eagle3-draft-as-eagle": True, "spec-eagle3-wrong-draft": True,
    "spec-hidden-width": False, "spec-aux-default": False, "spec-aux-layers": False,
    "spec-aux-count": False, "spec-aux-layers-ok": False, "spec-auto-shape": False,
    "spec-shape-range": False, "spec-draft-tokens-adjusted": True,
    "spec-draft-tokens-tree": True, "spec-method-inferred": False, "spec-num-tokens": True,
}
#: The alerts' kinds and whether each carries a remedy.
ALERT_REMEDIES = {
    "drafts_rejected": False, "hidden_dims": True, "eagle3_draft_with_eagle": True,
    "below_baseline": False, "crash": False, "process_exited": False, "health_lost": False,
    "stuck_collective": False, "source_failed": False, "metrics_values_skipped": False,
    "slow-phase": False, "drafts_recovered": False, "no_drafts_verified": False,
}
_CODE = re.compile(r"^(?:args-|model-|draft-|port-|gpu-|tp-|spec-)[a-z0-9-]+$")


def _string_args(path: Path, call: str, pos: int) -> set[str]:
    """The literal (or ``{what}-…`` formatted) code arguments of every ``call(...)``."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == call \
                and len(node.args) > pos:
            arg = node.args[pos]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.add(arg.value)
            elif isinstance(arg, ast.JoinedStr):
                tail = "".join(v.value for v in arg.values if isinstance(v, ast.Constant)
                               and isinstance(v.value, str))
                out.add("*" + tail)
    return out


def test_every_lint_code_and_alert_kind_decides_on_a_remedy() -> None:
    src = REPO / "eagle_tui" / "model"
    files = [src / "launching" / "lint.py", src / "launching" / "checks.py",
             *sorted((src / "engines").glob("*/launch.py"))]
    found = set().union(*(_string_args(f, "Finding", 1) for f in files))
    literal = {c for c in found if not c.startswith("*")}
    assert literal <= set(LINT_REMEDIES), literal - set(LINT_REMEDIES)
    for pattern in found - literal:  # f"{what}-missing", f"args-{p.kind}"
        tail = pattern[1:]
        assert any(c.endswith(tail) or c.startswith(tail) for c in LINT_REMEDIES), pattern
    assert all(_CODE.match(c) for c in LINT_REMEDIES)
    for code, has in LINT_REMEDIES.items():
        case = [c for c in CASES if c[0] == code]
        assert bool(case) == has, code  # each remedied code has generated cases above
    kinds = _string_args(src / "views" / "alerts.py", "Alert", 0)
    assert kinds == set(ALERT_REMEDIES)


def test_the_alerts_with_a_known_fix_carry_the_engines_edit() -> None:
    for name, has in ALERT_REMEDIES.items():
        assert has == (name in {"hidden_dims", "eagle3_draft_with_eagle"})
    for p in profiles():
        r = p.launch.eagle3_remedy
        if p.name in ("sglang", "vllm"):
            assert r is not None, p.name
            words = [*SG, "--speculative-algorithm", "EAGLE"] if p.name == "sglang" else \
                [*VL, "--speculative-config",
                 '{"method": "eagle", "model": "/d", "num_speculative_tokens": 3}']
            cmd = parse_command(words, TABLES)
            fixed = parse_command(apply(cmd, r, TABLES[p.name]), TABLES)
            assert p.launch.read_plan(fixed).algorithm in ("EAGLE3", "eagle3")


def test_cli_lint_fix_prints_the_fixed_command_and_json_argv() -> None:
    import shlex
    import subprocess
    import sys

    base = [sys.executable, "-m", "eagle_tui", "lint", "--fix"]
    cmd = ["python", "-m", "sglang.launch_server", "--model-path", str(FIX / "target"),
           "--speculative-algo=EAGLE", "--speculative-draft-model-path",
           str(FIX / "eagle3-sglang"), "--device", "cpu"]
    p = subprocess.run([*base, "--", *cmd], capture_output=True, text=True, timeout=60,
                       check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert len(p.stdout.splitlines()) == 1
    fixed = shlex.split(p.stdout)
    assert fixed == [w if w != "--speculative-algo=EAGLE" else "--speculative-algo=EAGLE3"
                     for w in cmd]
    assert "fixed spec-eagle3-draft-as-eagle" in p.stderr
    p = subprocess.run([*base, "--json", "--", *cmd], capture_output=True, text=True,
                       timeout=60, check=False)
    out = json.loads(p.stdout)
    assert p.returncode == 0 and out["argv"] == fixed and out["errors"] == 0
    assert [f["code"] for f in out["fixed"]] == ["spec-eagle3-draft-as-eagle"]
    assert out["left"] == []
    # an error with no remedy stays: exit 0 all the same (nothing fixable is left)
    nodraft = ["python", "-m", "sglang.launch_server", "--model-path", str(FIX / "target"),
               "--speculative-algorithm", "EAGLE3", "--device", "cpu"]
    p = subprocess.run([*base, "--", *nodraft], capture_output=True, text=True, timeout=60,
                       check=False)
    assert p.returncode == 0 and shlex.split(p.stdout) == nodraft
    assert "left without a known fix (spec-eagle3-no-draft)" in p.stderr
    p = subprocess.run([*base, "--", "python", "train.py"], capture_output=True, text=True,
                       timeout=60, check=False)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
