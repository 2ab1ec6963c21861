"""The launch-command parser reads flags exactly as the engines' argparse does.

The flag tables come from the real engines (``tests/realserver/dump_flags.py``); the cases
here are the ways people really type commands: prefixes, ``=``, ``_``, dotted JSON keys, a
leading ``ENV=… nohup``, a pasted ``> log 2>&1 &``.
"""

from __future__ import annotations

import pytest

from eagle_tui.model.launching.cmdline import CommandError, parse_command, split_command
from eagle_tui.probe.tables import available, load_table, load_tables

TABLES = load_tables()


def parse(cmd: str | list[str]):  # type: ignore[no-untyped-def]
    return parse_command(cmd, TABLES)


def test_tables_are_the_real_engines() -> None:
    assert "0.5.23" in available("sglang") and "0.32" in available("vllm")
    sg = load_table("sglang")
    assert sg.by_opt["--speculative-algorithm"].dest == "speculative_algorithm"
    assert sg.by_opt["--tensor-parallel-size"] is sg.by_opt["--tp-size"]
    vl = load_table("vllm")
    assert vl.by_opt["-tp"].dest == "tensor_parallel_size"
    assert vl.underscores and vl.dotted and not sg.underscores


@pytest.mark.parametrize("entry", [
    "python -m sglang.launch_server", "python3 -m sglang.launch_server",
    "/opt/venv/bin/python3.11 -u -m sglang.launch_server", "sglang serve",
    "CUDA_VISIBLE_DEVICES=0,1 nohup python -m sglang.launch_server",
    "env HF_HOME=/x setsid nohup python -m sglang.launch_server",
])
def test_sglang_entries(entry: str) -> None:
    cmd = parse(f"{entry} --model-path /m --speculative-algorithm EAGLE3")
    assert cmd.engine == "sglang"
    assert cmd.get("speculative_algorithm") == "EAGLE3"
    assert cmd.get("model_path") == "/m"


def test_leading_env_is_kept_apart() -> None:
    cmd = parse("CUDA_VISIBLE_DEVICES=0,1 HF_TOKEN=hf_x nohup python -m sglang.launch_server "
                "--model-path /m")
    assert dict(cmd.env) == {"CUDA_VISIBLE_DEVICES": "0,1", "HF_TOKEN": "hf_x"}


@pytest.mark.parametrize("entry,model_from", [
    ("vllm serve /m", "positional"),
    ("python -m vllm.entrypoints.openai.api_server --model /m", "flag"),
])
def test_vllm_entries(entry: str, model_from: str) -> None:
    cmd = parse(f"{entry} --port 8011")
    assert cmd.engine == "vllm"
    assert cmd.get("port") == "8011"
    if model_from == "positional":
        assert cmd.positionals == ("/m",)
    else:
        assert cmd.get("model") == "/m"


def test_unambiguous_prefix_equals_and_space_forms() -> None:
    a = parse("python -m sglang.launch_server --model-path /m --speculative-algo EAGLE")
    b = parse("python -m sglang.launch_server --model-path=/m --speculative-algorithm=EAGLE")
    assert a.get("speculative_algorithm") == b.get("speculative_algorithm") == "EAGLE"
    assert a.typed("speculative_algorithm") == "--speculative-algo"
    assert not a.problems and not b.problems


def test_ambiguous_prefix_is_an_error_like_argparse() -> None:
    cmd = parse("python -m sglang.launch_server --model-path /m --speculative-draft /d")
    assert [p.kind for p in cmd.problems] == ["ambiguous"]
    assert "--speculative-draft-model-path" in cmd.problems[0].message


def test_alias_of_a_flag_is_the_same_flag() -> None:
    cmd = parse("python -m sglang.launch_server --model /m --speculative-draft-model /d "
                "--tensor-parallel-size 2")
    assert cmd.get("model_path") == "/m"
    assert cmd.get("speculative_draft_model_path") == "/d"
    assert cmd.get("tp_size") == "2"


def test_vllm_underscores_and_short_options() -> None:
    cmd = parse("vllm serve /m --tensor_parallel_size 2 --gpu_memory_utilization=0.8")
    assert cmd.get("tensor_parallel_size") == "2"
    assert cmd.get("gpu_memory_utilization") == "0.8"
    assert parse("vllm serve /m -tp 4").get("tensor_parallel_size") == "4"


def test_sglang_does_not_take_underscores() -> None:
    cmd = parse("python -m sglang.launch_server --model_path /m")
    assert cmd.problems and cmd.problems[0].kind == "unknown"
    assert cmd.problems[0].suggestion == "--model-path"


def test_vllm_speculative_config_json_and_dotted_forms_agree() -> None:
    whole = parse(['vllm', 'serve', '/m', '--speculative-config',
                   '{"method": "eagle3", "model": "/d", "num_speculative_tokens": 3}'])
    dotted = parse("vllm serve /m --speculative-config.method eagle3 "
                   "--speculative-config.model /d --speculative_config.num_speculative_tokens=3")
    assert dotted.get("speculative_config") == {"method": "eagle3", "model": "/d",
                                                "num_speculative_tokens": 3}
    assert whole.get("speculative_config").startswith("{")


def test_vllm_dotted_key_updates_a_json_value() -> None:
    cmd = parse(['vllm', 'serve', '/m', '--speculative-config', '{"method": "eagle", '
                 '"model": "/d"}', '--speculative-config.method', 'eagle3'])
    assert cmd.get("speculative_config") == {"method": "eagle3", "model": "/d"}


def test_switches_and_negations() -> None:
    cmd = parse("vllm serve /m --enforce-eager --no-enable-prefix-caching")
    assert cmd.get("enforce_eager") is True
    assert cmd.get("enable_prefix_caching") is False


def test_missing_value_and_negative_numbers() -> None:
    cmd = parse("python -m sglang.launch_server --model-path /m --port")
    assert [p.kind for p in cmd.problems] == ["missing-value"]
    neg = parse("python -m sglang.launch_server --model-path /m --speculative-eagle-topk -1")
    assert neg.get("speculative_eagle_topk") == "-1" and not neg.problems


def test_choices_are_checked() -> None:
    cmd = parse("python -m sglang.launch_server --model-path /m --speculative-attention-mode "
                "decoder")
    assert cmd.problems[0].kind == "choice" and cmd.problems[0].suggestion == "decode"


def test_pasted_shell_redirections_end_the_arguments() -> None:
    cmd = parse("nohup python -m sglang.launch_server --model-path /m > /tmp/run.log 2>&1 &")
    assert cmd.args == ("--model-path", "/m") and not cmd.problems


def test_unknown_flag_value_is_not_taken_for_the_model() -> None:
    cmd = parse("vllm serve --bogus-flag 3 /m")
    assert cmd.positionals == ("/m",)
    assert cmd.problems[0].kind == "unknown"


def test_not_an_engine_command() -> None:
    with pytest.raises(CommandError):
        parse("python train.py --lr 3")
    with pytest.raises(CommandError):
        parse("ls -l")
    with pytest.raises(CommandError):
        split_command("python -m sglang.launch_server --model-path '/m")


def test_bounded_input() -> None:
    huge = "x" * 100_000
    cmd = parse(["python", "-m", "sglang.launch_server", "--model-path", huge,
                 *(["--port", "1"] * 5_000)])
    assert any(p.kind == "cut" for p in cmd.problems)
    assert len(cmd.args) <= 2_000
