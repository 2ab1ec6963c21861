"""The run control's fix for ``F``: the running command with the remedies applied, shown with
its secrets masked, and the relaunch puts the real values back (never the masks)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from eagle_tui.assembly.control import LaunchControl, restore_secrets
from eagle_tui.model.boundary.shellwords import split
from eagle_tui.model.engines import profile_of
from eagle_tui.model.launching.cmdline import parse_command
from eagle_tui.model.launching.lint import ConfigFact, LintFacts, lint
from eagle_tui.model.launching.remedy import set_flag
from eagle_tui.probe.tables import load_tables

TABLES = load_tables()
ARGV = ["HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz", "python", "-m", "sglang.launch_server",
        "--model-path", "/m", "--api-key", "sk-secret-123456", "--speculative-algo", "EAGLE",
        "--speculative-draft-model-path", "/d", "--port", "30000"]


def control(facts: LintFacts) -> LaunchControl:
    cmd = parse_command(ARGV, TABLES)
    prep = SimpleNamespace(argv=ARGV, cmd=cmd, result=lint(cmd, facts), port=30000, cwd=".",
                           env={})
    run = SimpleNamespace(label="#1", id=1)
    return LaunchControl(store=cast(Any, None), spec=cast(Any, None), prep=cast(Any, prep),
                         run=cast(Any, run), launched=cast(Any, None))


def test_the_fix_is_shown_masked_and_relaunched_with_the_real_secrets() -> None:
    draft = {"architectures": ["LlamaForCausalLMEagle3"], "hidden_size": 128}
    c = control(LintFacts(draft=ConfigFact("/d", "ok", draft), port_in_use=True,
                          free_port=30001))
    # the lint's remedies, less the busy port: the run's own port is freed before a relaunch
    assert [r.title for r in c.remedies] == ["run the draft as EAGLE3"]
    profile = profile_of("sglang")
    assert profile is not None and profile.launch.eagle3_remedy is not None
    shown = c.fixed([profile.launch.eagle3_remedy, *c.remedies])
    assert shown is not None
    assert "sk-secret" not in shown and "hf_abc" not in shown and "***" in shown
    assert "--speculative-algo EAGLE3" in shown and shown.count("EAGLE3") == 1
    words = restore_secrets(split(shown), ARGV)
    assert words == [w if w != "EAGLE" else "EAGLE3" for w in ARGV]
    assert c.fixed([]) is None  # nothing to change
    assert c.fixed([set_flag("--no-such-flag", "1")]) is None  # not this engine's flag
