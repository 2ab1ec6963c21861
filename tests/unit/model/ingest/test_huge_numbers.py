"""A garbage number of thousands of digits where a count or a size is expected never raises.

Python refuses ``int()`` of more than 4,300 digits; a 1 MB line can hold that many. Each shape
below once raised ``ValueError`` out of the parser (and so out of the log tail and ``report``).
"""

from __future__ import annotations

import io

import pytest

from eagle_tui.model.ingest.classify import small_int
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.report import build_report

N = "9" * 5000
SHAPES = [
    f"[2025-11-20 10:14:31] server_args=ServerArgs(model_path='m', speculative_num_steps={N}, "
    f"speculative_eagle_topk={N}, speculative_num_draft_tokens={N}, "
    f"speculative_algorithm='EAGLE3')",
    f"Loading safetensors checkpoint shards:  50% Completed | {N}/{N} [00:00<?, ?it/s]",
    f"Capturing batches (avail_mem=17.96 GB): 100%|##########| {N}/{N} [00:04<00:00,  3.1it/s]",
    f"(APIServer pid=1) INFO 11-30 01:17:12 [api_utils.py:286] non-default args: "
    f"{{'speculative_config': {{'method': 'eagle3', 'num_speculative_tokens': {N}}}}}",
    f"(EngineCore pid=2) INFO 11-30 01:17:12 [gpu_model_runner.py:1] Capturing CUDA graphs "
    f"(decode, FULL): 100%|##########| {N}/{N} [00:01<00:00, 28.40it/s]",
    f"[EAGLE3-DEBUG] hidden_states shape=torch.Size([21, {N}])",
    f"[2025-11-20 10:15:00 TP0] Decode batch, #running-req: {N}, #token: {N}, token usage: 0.1, "
    f"accept len: 2.5, gen throughput (token/s): 100.0, #queue-req: 0, ",
]


@pytest.mark.parametrize("line", SHAPES, ids=range(len(SHAPES)))
def test_huge_numbers_are_ignored_not_raised(line: str) -> None:
    data = line.encode() + b"\n"
    LogParser().feed_line(data[:-1])
    LogParser().feed_lines(data, emit_lines=True)
    LogParser().feed_lines(data, emit_lines=False)
    report = build_report(io.BytesIO(data), "x")
    assert report["lines"] == 1
    assert N not in str(report["hidden_state_dims"])


def test_small_int_bounds() -> None:
    assert small_int("21504") == 21504 and small_int(b"7") == 7
    assert small_int("1" * 18) == int("1" * 18) and small_int("1" * 19) is None
