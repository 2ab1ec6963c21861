"""The simulator's SGLang lines have the shapes the real 0.5.23 server prints.

Compared with the recorded real server (tests/fixtures/sglang-cpu/eagle3.log): the ``server_args``
dict, ``Init parallel``, the ``Engine startup timings`` summary, and the decode and prefill lines
(same fields in the same order; a GPU says ``cuda graph`` where the CPU recording says ``cpu``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from eagle_tui.sim import sglang_log
from eagle_tui.sim.scenario import make_config

REAL = (Path(__file__).resolve().parents[1] / "fixtures" / "sglang-cpu" / "eagle3.log")
_PREFIX = re.compile(r"^\[[\d\- :]+(?: TP\d+)?\] ")


def real_lines() -> list[str]:
    return [_PREFIX.sub("", ln) for ln in REAL.read_text().splitlines()]


def sim_lines(scenario: str = "healthy") -> list[str]:
    tl = sglang_log.timeline(make_config("sglang", scenario, gpus=1))
    return [_PREFIX.sub("", ln) for step in tl.steps for ln in step.lines]


def keys(line: str) -> list[str]:
    """The field names of a ``key: value, ...`` line, the graph field's device left out."""
    body = line.split(", ", 1)[1]
    return [re.sub(r"^(cuda|cpu|npu) graph$", "graph", part.split(": ")[0])
            for part in body.split(", ") if ": " in part]


def first(lines: list[str], head: str) -> str:
    return next(ln for ln in lines if ln.startswith(head))


def test_server_args_is_a_dict_repr_like_the_real_one() -> None:
    sim = ast.literal_eval(first(sim_lines(), "server_args=").removeprefix("server_args="))
    real = ast.literal_eval(first(real_lines(), "server_args=").removeprefix("server_args="))
    assert isinstance(sim, dict) and isinstance(real, dict)
    assert set(sim) <= set(real), set(sim) - set(real)  # a subset of the real keys
    assert sim["speculative_algorithm"] == "EAGLE3"
    misconf = sim_lines("misconfigured")
    assert "'speculative_algorithm': 'EAGLE'," in first(misconf, "server_args=")


def test_init_parallel_and_the_startup_timings_line() -> None:
    sim, real = sim_lines(), real_lines()
    for head in ("Init parallel begin.", "Init parallel ends. elapsed="):
        assert any(ln.startswith(head) for ln in real) and any(ln.startswith(head) for ln in sim)
    pattern = re.compile(
        r"Engine startup timings \(s\): load_weight=\d+\.\d\d, kv_cache_allocation=\d+\.\d\d, "
        r"scheduler_e2e=\d+\.\d\d, cuda_graph=\{prefill=\d+\.\d\d, decode=\d+\.\d\d, "
        r"target_verify=\d+\.\d\d, draft_prefill=\d+\.\d\d, draft_decode=\d+\.\d\d, "
        r"draft_extend=\d+\.\d\d\}, tokenizer_e2e=\d+\.\d\d")
    assert pattern.fullmatch(first(real, "Engine startup timings"))
    assert pattern.fullmatch(first(sim, "Engine startup timings"))
    heads = ("max_total_num_tokens=", "Engine startup timings", "INFO:     Started server")
    for lines in (sim, real):  # the summary comes between the KV sizing and the HTTP server
        assert [h for ln in lines for h in heads if ln.startswith(h)] == list(heads)


def test_decode_and_prefill_lines_have_the_real_fields_in_order() -> None:
    cfg = make_config("sglang", "healthy", gpus=1)
    sim_decode = sglang_log.decode_line(cfg, 0.0, 4, 508, 0.06, 3.65, 273.2, 0)
    sim_prefill = sglang_log.prefill_line(cfg, 0.0, 2, 28, 0, 0.0, 0, 0, 34.48)
    real = real_lines()
    assert keys(_PREFIX.sub("", sim_decode)) == keys(first(real, "Decode batch"))
    assert keys(_PREFIX.sub("", sim_prefill)) == keys(first(real, "Prefill batch"))
