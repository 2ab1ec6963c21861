"""One benchmark window on the REAL SGLang CPU server (EAGLE3 draft, ``--decode-log-interval 10``).

The server is the session fixture ``sglang_eagle3`` of tests/integration/conftest.py, shared with
test_realserver_sglang.py (asked for by name, so the fixture keeps the server up until this, its
last user, is done); it skips with the reason where the SGLang environment is not installed.

Agreement over the window (``eagle-tui bench --endpoint generate``, idle before and after):
the log's acceptance length (decode lines weighted by running requests) and ``/metrics``
(Δgeneration_tokens / Δspec_verify_calls) within 2 %; the client's (``meta_info``:
completion tokens / ``spec_verify_ct``) within 5 %; the log's tok/s (tokens estimated from the
decode lines: interval × running × accept len) within 5 % of the client's.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytestmark = [pytest.mark.realserver, pytest.mark.slow]


async def test_sglang_bench_window_log_metrics_and_client_agree(sglang_eagle3: Any) -> None:
    from eagle_tui.commands.bench import run_bench

    await asyncio.to_thread(sglang_eagle3.ready)
    await asyncio.sleep(2.0)  # idle before
    res = await run_bench(sglang_eagle3.url, concurrency=4, requests=24, max_tokens=96,
                          endpoint="generate", timeout=240, log_path=str(sglang_eagle3.log))
    assert res.ok == 24 and res.failed == 0, res.errors
    assert res.window is not None
    fig = {f["source"]: f for f in res.window["figures"]}
    log, metrics, client = fig["log"], fig["/metrics"], fig["client"]
    print(f"SGLang window {res.window['duration_s']:.1f} s, {log.get('intervals')} log "
          f"intervals: accept log {log['accept_len']:.3f} /metrics {metrics['accept_len']:.3f} "
          f"client {client['accept_len']:.3f}; tok/s log {log['tok_s']:.1f} "
          f"/metrics {metrics['tok_s']:.1f} client {client['tok_s']:.1f}")
    assert log["intervals"] >= 3
    assert log["accept_len"] == pytest.approx(metrics["accept_len"], rel=0.02)
    assert client["accept_len"] == pytest.approx(metrics["accept_len"], rel=0.05)
    assert log["tok_s"] == pytest.approx(client["tok_s"], rel=0.05)
