"""The simulator's SGLang lines have the shapes the real 0.5.23 server prints.

Compared with the recorded real server (tests/fixtures/sglang-cpu/eagle3.log): the ``server_args``
dict, ``Init parallel``, the ``Engine startup timings`` summary, and the decode and prefill lines
(same fields in the same order; a GPU says ``cuda graph`` where the CPU recording says ``cpu``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

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


def _fstring_pattern(fmt: str) -> re.Pattern[str]:
    """An engine's f-string as a pattern: each ``{...}`` a number or a list of numbers."""
    parts = re.split(r"\{[^}]*\}", fmt)
    return re.compile(r"[\d.\[\], ]+?".join(map(re.escape, parts)))


# SGLang 0.5.23 model_runner_components/cuda_graph_setup.py:684-698 (logger.info f-strings)
PREFILL_BEGIN_0523 = ("Capture {capture_name} CUDA graph begin. backend={prefill_backend}, "
                      "num_tokens={capture_num_tokens}, avail mem={before_mem:.2f} GB")
PREFILL_END_0523 = ("Capture {capture_name} CUDA graph end. elapsed={capture_time:.2f} s, "
                    "mem usage={mem_usage:.2f} GB, avail mem={after_mem:.2f} GB.")
# ... runner/prefill_cuda_graph_runner.py:1734 (the tqdm description)
PREFILL_SHAPE_0523 = "Capturing prefill shape ({num_tokens=} {avail_mem=:.2f} GB)"
# Before 0.5.23: piecewise_cuda_graph_runner.py (commit 00381c0) and the model runner's
# "Capture piecewise CUDA graph begin/end" lines
PIECEWISE_BEGIN = "Capture piecewise CUDA graph begin. avail mem={before_mem:.2f} GB"
PIECEWISE_END = ("Capture piecewise CUDA graph end. Time elapsed: {elapsed:.2f} s. "
                 "mem usage={mem_usage:.2f} GB. avail mem={after_mem:.2f} GB.")
COMPILE = "Compiling num tokens ({num_tokens=})"
CAPTURE_OLD = "Capturing num tokens ({num_tokens=} {avail_mem=:.2f} GB)"


def _descs(lines: list[str], head: str) -> list[str]:
    return [ln.lstrip("\r").split(": ", 1)[0] for ln in lines if ln.lstrip("\r").startswith(head)]


def _shape(fmt: str) -> re.Pattern[str]:
    return _fstring_pattern(fmt.replace("{num_tokens=}", "num_tokens={n}").replace(
        "{avail_mem=:.2f}", "avail_mem={m}"))


def test_the_prefill_graphs_in_each_versions_words() -> None:
    new = [_PREFIX.sub("", ln) for ln in sglang_log.timeline(make_config(
        "sglang", "healthy", gpus=1, engine_version="0.5.23")).lines()]
    assert new == sim_lines()  # (the installed release's wording is the default)
    for role in ("target", "draft"):
        begin = first(new, f"Capture {role} prefill CUDA graph begin.")
        assert _fstring_pattern(PREFILL_BEGIN_0523.replace(
            "{capture_name}", f"{role} prefill").replace("{prefill_backend}", "breakable")
        ).fullmatch(begin), begin
        end = first(new, f"Capture {role} prefill CUDA graph end.")
        assert _fstring_pattern(PREFILL_END_0523.replace(
            "{capture_name}", f"{role} prefill")).fullmatch(end), end
    shapes = _descs(new, "Capturing prefill shape")
    assert shapes and all(_shape(PREFILL_SHAPE_0523).fullmatch(d) for d in shapes)
    assert not _descs(new, "Capturing num tokens") and not _descs(new, "Compiling")
    old = [_PREFIX.sub("", ln) for ln in sglang_log.timeline(make_config(
        "sglang", "healthy", gpus=1, engine_version="pre-0.5.23")).lines()]
    assert _fstring_pattern(PIECEWISE_BEGIN).fullmatch(first(old, "Capture piecewise CUDA graph b"))
    assert _fstring_pattern(PIECEWISE_END).fullmatch(first(old, "Capture piecewise CUDA graph e"))
    assert _descs(old, "Compiling num tokens") and _descs(old, "Capturing num tokens")
    assert all(_shape(COMPILE).fullmatch(d) for d in _descs(old, "Compiling num tokens"))
    assert all(_shape(CAPTURE_OLD).fullmatch(d) for d in _descs(old, "Capturing num tokens"))
    assert not _descs(old, "Capturing prefill shape")


def test_an_unknown_engine_version_is_refused() -> None:
    with pytest.raises(ValueError, match=r"choose one of 0\.5\.23, pre-0\.5\.23"):
        make_config("sglang", "healthy", engine_version="0.4.0")
