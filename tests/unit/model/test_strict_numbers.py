"""Numbers are read whole and finite (issue 17, item 6): ``1e999`` → 1.0, ``0x10`` → 0.0 and
``1_0`` → 1.0 (or 10) were read by prefix before; now every parser says "not a number"."""

from __future__ import annotations

import io

import pytest

from eagle_tui.model.bench.benchfiles import counter_totals
from eagle_tui.model.events import DecodeStats, SpecStats
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.model.numbers import display_clamp, finite, strict_float, strict_int
from eagle_tui.report import build_report

BAD = ["1e999", "0x10", "1_0", "1.2.3", "nan", "inf", "9" * 400, "", "+", "1e", "١٢"]


@pytest.mark.parametrize("token", BAD)
def test_strict_float_refuses(token: str) -> None:
    assert strict_float(token) is None


def test_strict_float_and_int_accept_plain_numbers() -> None:
    assert strict_float("2.5") == 2.5 and strict_float(" -3 ") == -3.0
    assert strict_float("1e3") == 1000.0 and strict_float(b".5") == 0.5
    assert strict_int("42") == 42 and strict_int("1_0") is None and strict_int("9" * 19) is None
    assert finite(1e308) is None and finite(10**400) is None and finite(True) is None
    assert finite(2) == 2.0 and display_clamp(5.0, 0, 1) is None


def _sglang(v: str) -> str:
    return (f"[2025-11-20 10:15:00 TP0] Decode batch, #running-req: 1, #token: 100, token usage: "
            f"0.1, accept len: {v}, gen throughput (token/s): {v}, #queue-req: 0, ")


def _vllm(v: str) -> list[str]:
    return [
        f"(APIServer pid=1) INFO 11-30 01:17:12 [loggers.py:1] Engine 000: Avg prompt throughput: "
        f"{v} tokens/s, Avg generation throughput: {v} tokens/s, Running: 1 reqs, Waiting: 0 "
        f"reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%",
        f"(APIServer pid=1) INFO 11-30 01:17:12 [metrics.py:1] SpecDecoding metrics: Mean "
        f"acceptance length: {v}, Accepted throughput: 1.0 tokens/s, Drafted throughput: 2.0 "
        f"tokens/s, Accepted: 10 tokens, Drafted: 20 tokens, Per-position acceptance rate: 0.5, "
        f"0.4, Avg Draft acceptance rate: 50.0%",
    ]


def _values(line: str) -> list[float | None]:
    out: list[float | None] = []
    for ev in LogParser().feed_line(line):
        if isinstance(ev, DecodeStats):
            out += [ev.gen_tps, ev.accept_len]
        elif isinstance(ev, SpecStats):
            out.append(ev.mean_accept_len)
    return out


@pytest.mark.parametrize("token", ["1e999", "0x10", "1_0"])
def test_log_numbers_are_not_read_by_prefix(token: str) -> None:
    assert _values(_sglang(token)) == [None, None]
    vllm_gen, vllm_spec = (_values(line) for line in _vllm(token))
    assert vllm_gen[0] is None and vllm_spec == [None]
    assert _values(_sglang("2.5")) == [2.5, 2.5]


@pytest.mark.parametrize("token", ["1e999", "0x10", "1_0"])
def test_report_fast_path_agrees(token: str) -> None:
    """The report's chunk path reads the same (nothing) from such a token as the line path."""
    lines = [_sglang("2.0")] * 50 + [_sglang(token)] * 50
    report = build_report(io.BytesIO(("\n".join(lines) + "\n").encode()), "x")
    assert report["lines"] == 100
    assert report["accept_len"].count == 50  # the 50 good lines, none of the others


def test_counter_totals_skip_unrepresentable_values() -> None:
    text = ('vllm:generation_tokens_total{engine="0"} 1e999\n'
            'vllm:generation_tokens_total{engine="1"} 5\n')
    assert counter_totals(text) == {"vllm:generation_tokens": 5.0}
