"""A launch command as editor lines and back: one argument a line, the same command after.

The property tests generate commands the ways people type them (quoted values with spaces,
``=`` forms, a JSON ``--speculative-config``, env words, control characters) and check that the
lines mean the same command (the same parse) and that lines → argv → lines is stable.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eagle_tui.model.boundary import shellwords
from eagle_tui.model.launching.cmdline import MAX_TOKENS, parse_command
from eagle_tui.model.launching.cmdlines import (
    LineChange,
    command_lines,
    diff_lines,
    first_difference,
    line_key,
    lines_argv,
)
from eagle_tui.model.launching.flags import as_json
from eagle_tui.probe.tables import load_tables

TABLES = load_tables()
SG = "python -m sglang.launch_server"


def lines(cmd: str | list[str]) -> list[str]:
    return command_lines(cmd, TABLES)


def back(ls: list[str]) -> list[str]:
    return lines_argv("\n".join(ls), TABLES)


def meaning(argv: list[str]) -> tuple[Any, ...]:
    """What the engine would read: engine, entry, env, each flag's stored value, positionals."""
    p = parse_command(argv, TABLES)
    dests = sorted({g.spec.dest for g in p.given})
    values = {d: (as_json(p.get(d)) or p.get(d)) for d in dests}
    return (p.engine, p.entry, p.env, json.dumps(values, sort_keys=True, default=str),
            p.positionals, sorted(x.kind for x in p.problems))


def test_one_argument_a_line_env_first() -> None:
    cmd = (f"HF_TOKEN=*** CUDA_VISIBLE_DEVICES=0,1 {SG} --model-path '/m/my model' "
           "--speculative-algorithm EAGLE3 --tp 2 --port=30000 --enable-torch-compile")
    assert lines(cmd) == ["'HF_TOKEN=***'", "CUDA_VISIBLE_DEVICES=0,1", SG,
                          "--model-path '/m/my model'", "--speculative-algorithm EAGLE3",
                          "--tp 2", "--port=30000", "--enable-torch-compile"]
    assert back(lines(cmd)) == shellwords.split(cmd)


def test_serve_keeps_its_model_on_the_entry_line() -> None:
    assert lines("vllm serve meta/llama --port 8000")[:2] == ["vllm serve meta/llama",
                                                               "--port 8000"]


def test_speculative_config_as_fields_and_joined_back() -> None:
    spec = {"method": "eagle3", "model": "a b", "num_speculative_tokens": 3,
            "draft": {"tp": 1, "quant": "3"}, "flag": True, "none": None}
    cmd = ["vllm", "serve", "m", "--speculative-config", json.dumps(spec), "--port", "8000"]
    ls = lines(cmd)
    assert ls == ["vllm serve m", "--speculative-config.method eagle3",
                  "--speculative-config.model 'a b'",
                  "--speculative-config.num_speculative_tokens 3",
                  "--speculative-config.draft.tp 1", "--speculative-config.draft.quant '\"3\"'",
                  "--speculative-config.flag true", "--speculative-config.none null",
                  "--port 8000"]
    out = back([x.replace("method eagle3", "method eagle") for x in ls])
    assert out[:4] == ["vllm", "serve", "m", "--speculative-config"]
    assert json.loads(out[4]) == {**spec, "method": "eagle"} and out[5:] == ["--port", "8000"]


def test_json_that_dotted_keys_cannot_spell_stays_one_line() -> None:
    for value in ('{"a.b": 1}', "{}", '{"k": "x"}x', '{"k": [1, {"z": 2}]}'):
        cmd = ["vllm", "serve", "m", "--speculative-config", value]
        assert meaning(back(lines(cmd))) == meaning(cmd)
    assert lines(["vllm", "serve", "m", "--speculative-config", '{"a.b": 1}'])[1] == \
        "--speculative-config '{\"a.b\": 1}'"


def test_a_flag_given_whole_and_dotted_is_left_to_the_parser_to_merge() -> None:
    cmd = ["vllm", "serve", "m", "--speculative-config", '{"method": "eagle"}',
           "--speculative-config.num_speculative_tokens", "3"]
    assert back(lines(cmd)) == cmd  # (whole + dotted: merged by vLLM, kept as typed)
    dotted_only = ["vllm", "serve", "m", "--speculative-config.method", "eagle3",
                   "--speculative-config.num_speculative_tokens", "2"]
    out = back(lines(dotted_only))
    assert out[3] == "--speculative-config" and json.loads(out[4]) == {
        "method": "eagle3", "num_speculative_tokens": 2}
    assert meaning(out) == meaning(dotted_only)
    # fields the editor would not show so (``=``, ``_``, a key set twice) are kept as typed
    for odd in (["--speculative_config.method", "eagle3"], ["--speculative-config.method=x"],
                ["--speculative-config.k", "1", "--speculative-config.k", "2"]):
        cmd = ["vllm", "serve", "m", *odd]
        assert back(lines(cmd)) == cmd and meaning(back(lines(cmd))) == meaning(cmd)


def test_a_command_no_table_reads_is_grouped_by_its_words() -> None:
    assert command_lines("./serve.sh --a 1 -b x y", TABLES) == ["./serve.sh", "--a 1", "-b x y"]
    assert command_lines(f"{SG} --a 1", None) == [SG, "--a 1"]
    assert lines_argv("./serve.sh\n--a 1", TABLES) == ["./serve.sh", "--a", "1"]


def test_an_unclosed_quote_names_its_line() -> None:
    try:
        lines_argv(f"{SG}\n--model-path 'x", TABLES)
    except ValueError as exc:
        assert str(exc).startswith("line 2:")
    else:
        raise AssertionError("an unclosed quote was read")


def test_bounded_to_max_tokens() -> None:
    words = [*shellwords.split(SG), *(["--port", "1"] * MAX_TOKENS)]
    assert len(back(lines(words))) <= MAX_TOKENS
    assert len(lines_argv("\n".join(["--a 1"] * MAX_TOKENS), TABLES)) == MAX_TOKENS


def test_diff_names_added_removed_and_changed_flags() -> None:
    old = [SG, "--model-path m", "--speculative-algorithm EAGLE", "--dtype bf16",
           "HF_TOKEN=x"]
    new = [SG, "--model-path m", "--speculative-algorithm EAGLE3", "--port 1", "", "HF_TOKEN=y"]
    assert diff_lines(old, new) == [
        LineChange("changed", "--speculative-algorithm EAGLE", "--speculative-algorithm EAGLE3"),
        LineChange("added", None, "--port 1"),
        LineChange("changed", "HF_TOKEN=x", "HF_TOKEN=y"),
        LineChange("removed", "--dtype bf16", None)]
    assert diff_lines(old, list(reversed(old))) == []  # moved lines are the same command
    assert line_key("--port=1") == "--port" and line_key("--speculative-config.method x") == \
        "--speculative-config.method"
    assert first_difference(old, new) == 2 and first_difference(old, old) is None


# ------------------------------------------------------------------ generated commands
WORD = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
PLAIN = st.text(st.sampled_from("ab c'\"=$#\\-.,{}\x1b/"), min_size=1, max_size=10)
LEAF = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), PLAIN,
                 st.floats(allow_nan=False, allow_infinity=False, width=32))
KEY = st.text(st.sampled_from("abc_-1"), min_size=1, max_size=6)
JSONOBJ = st.recursive(LEAF, lambda inner: st.dictionaries(KEY, inner, max_size=3),
                       max_leaves=8).filter(lambda v: isinstance(v, dict))
SG_FLAGS = ["--model-path", "--speculative-algorithm", "--tp-size", "--port",
            "--speculative-num-steps", "--api-key", "--host"]
VL_FLAGS = ["--port", "--tensor-parallel-size", "--api-key", "--host", "--dtype",
            "--max-model-len"]


@st.composite
def flag_words(draw: st.DrawFn, flags: list[str]) -> list[str]:
    flag = draw(st.sampled_from(flags))
    value = draw(st.one_of(WORD, PLAIN))
    if draw(st.booleans()) or value.startswith("-"):
        return [f"{flag}={value}"]
    return [flag, value]


@st.composite
def commands(draw: st.DrawFn) -> list[str]:
    env = draw(st.lists(st.builds(lambda k, v: f"{k}={v}", st.sampled_from(["A", "HF_TOKEN"]),
                                  PLAIN), max_size=2))
    if draw(st.booleans()):
        head = shellwords.split(SG)
        flags = SG_FLAGS
    else:
        head = ["vllm", "serve", draw(PLAIN.filter(lambda w: not w.startswith("-")))]
        flags = VL_FLAGS
    body: list[str] = []
    for part in draw(st.lists(st.sampled_from(["flag", "switch", "json", "dotted"]),
                              max_size=6)):
        if part == "flag":
            body += draw(flag_words(flags))
        elif part == "switch":
            body.append("--enable-torch-compile" if flags is SG_FLAGS else "--enforce-eager")
        elif part == "json" and flags is VL_FLAGS:
            body += ["--speculative-config", json.dumps(draw(JSONOBJ))]
        elif part == "dotted" and flags is VL_FLAGS:
            key, value = f"--speculative-config.{draw(KEY)}", draw(PLAIN)
            body += [f"{key}={value}"] if draw(st.booleans()) else [key, value]
    return [*env, *head, *body]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commands())
def test_argv_to_lines_to_argv_is_the_same_command(argv: list[str]) -> None:
    out = back(lines(argv))
    assert meaning(out) == meaning(argv)
    if not any("--speculative-config" in w for w in argv):
        assert out == argv  # nothing to join: the very same words


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commands())
def test_lines_to_argv_to_lines_round_trips(argv: list[str]) -> None:
    ls = lines(argv)
    assert lines(back(ls)) == ls
    assert all("\n" not in x for x in ls)  # one argument, one line


def test_a_dotted_key_takes_the_next_word_whatever_it_is() -> None:
    for odd in (["--speculative-config.k", "--port", "1"], ["--speculative-config.k", "-="],
                ["--speculative-config.k=v", "extra"]):
        cmd = ["vllm", "serve", "m", *odd]
        ls = lines(cmd)
        assert meaning(back(ls)) == meaning(cmd) and lines(back(ls)) == ls
    assert lines(["vllm", "serve", "m", "--speculative-config.k", "--port", "1"])[1:] == [
        "--speculative-config.k --port", "1"]
