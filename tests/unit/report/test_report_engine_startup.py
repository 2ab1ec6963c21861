"""``report`` with the engine's own startup figures: the JSON names them and their source, the
text says them, and the fast path reads them exactly as the line-by-line one."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.cli import main
from eagle_tui.report import build_report, close
from eagle_tui.report import write_json as dump

FIX = Path(__file__).resolve().parents[2] / "fixtures"
CPU_LOG = FIX / "sglang-cpu" / "eagle3.log"  # a real SGLang 0.5.23 CPU server's log

GPU_LOG = "\n".join([
    "[2026-12-01 10:00:00] server_args=ServerArgs(model_path='/m', "
    "speculative_algorithm='EAGLE3', speculative_num_steps=3)",
    "[2026-12-01 10:00:05 TP0] Load weight begin. avail mem=78.00 GB",
    "[2026-12-01 10:00:40 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, "
    "avail mem=62.00 GB, mem usage=16.00 GB.",
    "[2026-12-01 10:00:41 TP0] KV Cache is allocated. #tokens: 400000, K size: 20.00 GB",
    "[2026-12-01 10:00:42 TP0] Running FlashInfer autotune with cache: /c/fi.json",
    "[2026-12-01 10:00:50 TP0] FlashInfer autotune completed.",
    "[2026-12-01 10:00:50 TP0] Capture cuda graph begin. This can take up to several minutes.",
    "[2026-12-01 10:01:30 TP0] Capture cuda graph end. Time elapsed: 40.00 s.",
    "[2026-12-01 10:01:31] Engine startup timings (s): load_weight=35.12, "
    "kv_cache_allocation=1.50, scheduler_e2e=88.00, cuda_graph={prefill=0.00, decode=38.40, "
    "target_verify=0.00, draft_prefill=0.00, draft_decode=1.10, draft_extend=0.50}, "
    "tokenizer_e2e=91.00",
    "[2026-12-01 10:01:32] INFO:     Uvicorn running on http://0.0.0.0:30000",
    "[2026-12-01 10:01:40] The server is fired up and ready to roll!",
]).encode() + b"\n"


def report(data: bytes, *, fast: bool = True) -> dict[str, Any]:
    r = build_report(io.BytesIO(data), "x.log", fast=fast)
    out = io.BytesIO()
    try:
        dump(r, out)
    finally:
        close(r)
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def test_report_json_names_the_engine_figures_and_their_source() -> None:
    r = report(GPU_LOG)
    assert r["engine_startup"]["source"] == "log"
    assert r["engine_startup"]["figures"]["cuda_graph.decode"] == 38.4
    assert r["phase_times"]["loading_weights"] == 35.12  # not the stamps' 35 s
    assert r["phase_times"]["cuda_graph"] == 40.0
    assert r["phase_sources"]["cuda_graph"] == "engine (log)"
    assert r["phase_sources"]["init"] == "log timestamps"
    assert r == report(GPU_LOG, fast=False)


def test_report_of_a_real_cpu_server_log() -> None:
    data = CPU_LOG.read_bytes()
    r = report(data)
    assert r["engine_startup"]["figures"]["kv_cache_allocation"] == 1.22
    assert "cuda_graph" not in r["phase_times"]  # CPU: no graphs, every family 0.00
    assert r == report(data, fast=False)


def test_report_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "gpu.log"
    log.write_bytes(GPU_LOG)
    assert main(["report", str(log)]) == 0
    out = capsys.readouterr().out
    assert ("startup as the engine measured it (log): load_weight 35.12 s, "
            "kv_cache_allocation 1.50 s, scheduler_e2e 88.00 s, cuda_graph.decode 38.40 s") in out


def test_a_log_without_them_has_no_such_keys() -> None:
    r = report(GPU_LOG.replace(b"Engine startup timings", b"Engine startup"))
    assert "engine_startup" not in r and "phase_times" not in r
