"""Launch knowledge is the engines' own: a third engine registered from one profile is read,
linted and discovered by the generic code with no other change; the built-in profiles name
dests their flag tables have."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eagle_tui.model.engines import EngineProfile, profiles
from eagle_tui.model.launching.checks import LintFacts
from eagle_tui.model.launching.cmdline import CommandError, find_engine, parse_command
from eagle_tui.model.launching.discovery import ProcRow, find_servers
from eagle_tui.model.launching.lint import lint
from eagle_tui.probe.discover import scan_script, scan_words
from eagle_tui.probe.facts import model_path
from eagle_tui.probe.tables import available, load_table, load_tables
from tests.support.toy_engine import PROFILE as TOY
from tests.support.toy_engine import TABLE as TOY_TABLE
from tests.support.toy_engine import registered


@pytest.fixture
def toy() -> Iterator[EngineProfile]:
    with registered(TOY) as profile:
        yield profile


def test_a_third_engine_is_read_by_its_entry_points_and_inline_table(toy: EngineProfile) -> None:
    assert find_engine(["python3", "-m", "toyllm.server", "--tp", "2"])[:3] == (
        "toyllm", "python -m toyllm.server", 3)
    assert find_engine(["/venv/bin/python", "/venv/bin/toyllm", "serve"])[:2] == (
        "toyllm", "toyllm serve")
    assert available("toyllm") == ["1.0"] and load_table("toyllm") is TOY_TABLE
    cmd = parse_command("nohup toyllm serve --model /m --por 9200 --tpp 2", load_tables())
    assert cmd.engine == "toyllm" and cmd.table_version == "1.0" and cmd.get("port") == "9200"
    assert [p.kind for p in cmd.problems] == ["unknown"]  # --tpp: an unknown option
    assert model_path(cmd) == "/m"
    with pytest.raises(CommandError, match="ToyLLM") as err:
        find_engine(["ruby", "x"])
    assert "`toyllm serve ...`" in str(err.value) and "`vllm serve ...`" in str(err.value)


def test_a_third_engine_is_linted_by_its_rule_and_the_generic_ones(toy: EngineProfile) -> None:
    from eagle_tui.model.launching.checks import GpuFact

    cmd = parse_command(["toyllm", "serve", "--model", "/m", "--draft", "/d"], load_tables())
    res = lint(cmd, LintFacts(port_in_use=True, gpus=(GpuFact(0, "G", 100.0, 40.0),)))
    assert res.plan.algorithm == "toy" and res.plan.draft == "/d"
    assert [f.code for f in res.findings] == ["toy-tp", "port-in-use", "gpu-memory"]
    assert "port 9123 is already in use" in res.findings[1].message  # its default port
    assert res.findings[2].flag == "--mem"  # its memory dest, default 0.5 > 40% free


def test_a_third_engine_is_discovered(toy: EngineProfile) -> None:
    row = ProcRow(10, 1, 10, "5", "/log", "/log", "/", ("toyllm", "serve", "--draft", "/d",
                                                          "--tp", "2"))
    (found,) = find_servers([row], load_tables())
    assert (found.engine, found.port, found.tp, found.draft, found.algorithm) == (
        "toyllm", 9123, 2, "/d", "toy")
    assert "toyllm" in scan_words() and "*toyllm*" in scan_script()


def test_the_scan_pattern_is_the_engines_words_then_python() -> None:
    assert "case $c in *sglang*|*vllm*|*VLLM*|*python*)" in scan_script()


@pytest.mark.parametrize("profile", list(profiles()), ids=lambda p: p.name)
def test_the_dests_a_profile_names_are_in_its_flag_table(profile: EngineProfile) -> None:
    table = load_table(profile.name)
    dests = {spec.dest for spec in table.flags}
    launch = profile.launch
    for dest in (launch.model_dest, launch.port_dest, launch.host_dest, launch.tp_dest,
                 launch.mem_dest):
        assert dest in dests, dest
    for flag in (launch.tp_flag, launch.mem_flag):
        assert flag in table.by_opt, flag
