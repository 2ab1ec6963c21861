"""``eagle-tui bench`` against the simulator's real HTTP server (in-process, 127.0.0.1).

The server is the simulator's own ``HttpServer`` + ``ServingEngine`` running in the test's event
loop, ready at once, so each test costs only the requests it makes (real sockets, real SSE).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import pytest

from eagle_tui import cli
from eagle_tui.commands.bench import BenchError, format_summary, run_bench
from eagle_tui.sim.engine import ServingEngine
from eagle_tui.sim.scenario import make_config
from eagle_tui.sim.server import HttpServer


async def _serve(engine_name: str, scenario: str) -> AsyncIterator[tuple[str, list[str]]]:
    cfg = make_config(engine_name, scenario, gpus=2, port=0)
    lines: list[str] = []
    engine = ServingEngine(cfg, lines.extend, time.time)
    server = HttpServer(engine, lines.extend, time.time)
    server.ready = True
    engine.start_serving()
    await server.serve()
    task = asyncio.create_task(engine.run())
    try:
        yield f"http://127.0.0.1:{server.port}", lines
    finally:
        task.cancel()
        await server.close()


@pytest.fixture
async def sglang_server() -> AsyncIterator[tuple[str, list[str]]]:
    async for value in _serve("sglang", "healthy"):
        yield value


@pytest.fixture
async def slow_server() -> AsyncIterator[tuple[str, list[str]]]:
    async for value in _serve("vllm", "misconfigured"):
        yield value


async def test_bench_measures_bursts_and_rates(sglang_server: tuple[str, list[str]]) -> None:
    url, lines = sglang_server
    res = await run_bench(url, concurrency=2, requests=4, max_tokens=60, timeout=30)
    assert (res.ok, res.failed, res.tokens) == (4, 0, 240)
    assert not res.timed_out and not res.tokens_estimated
    assert res.tokens_per_event is not None and 2.6 < res.tokens_per_event < 3.9
    assert res.ttft_p50_s is not None and 0 < res.ttft_p50_s < 2
    assert res.itl_p50_s is not None and 0.001 < res.itl_p50_s < 0.05
    assert res.per_request_tok_s_p50 is not None and 60 < res.per_request_tok_s_p50 < 400
    assert res.model == "meta-llama/Llama-3.3-70B-Instruct"  # read from /v1/models
    assert sum('"POST /v1/chat/completions HTTP/1.1" 200' in line for line in lines) == 4
    text = "\n".join(format_summary(res))
    assert "4/4 requests ok" in text and "tokens/event" in text


async def test_bench_sees_rejected_drafts(slow_server: tuple[str, list[str]]) -> None:
    url, _ = slow_server
    res = await run_bench(url, concurrency=1, requests=1, max_tokens=40, timeout=30,
                          endpoint="completions")
    assert res.ok == 1
    assert res.tokens_per_event is not None and res.tokens_per_event < 1.3  # ~1.05


async def test_bench_is_bounded_in_time(sglang_server: tuple[str, list[str]]) -> None:
    url, _ = sglang_server
    start = time.monotonic()
    res = await run_bench(url, concurrency=2, requests=10_000, max_tokens=200, timeout=1.0)
    assert time.monotonic() - start < 5
    assert res.timed_out and res.ok < 10_000


async def test_bench_counts_http_errors(slow_server: tuple[str, list[str]]) -> None:
    url, _ = slow_server
    res = await run_bench(url, concurrency=1, requests=2, max_tokens=8, model="no-such-model",
                          timeout=10)
    assert (res.ok, res.failed) == (0, 2)
    assert res.errors[0].startswith("HTTP 404") and "does not exist" in res.errors[0]


async def test_bench_unreachable_server() -> None:
    with pytest.raises(BenchError, match="pass --model") as err:
        await run_bench("http://127.0.0.1:9", requests=1, timeout=5)
    assert "from http://127.0.0.1:9/v1/models " in str(err.value)  # (the slash was missing)


def test_cli_bench_json_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    async def main() -> int:
        async for url, _ in _serve("sglang", "healthy"):
            return await asyncio.to_thread(
                cli.main, ["bench", "--url", url, "--requests", "2", "--concurrency", "1",
                           "--max-tokens", "16", "--json"])
        raise AssertionError("server did not start")

    assert asyncio.run(main()) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] == 2 and out["tokens"] == 32
    assert cli.main(["bench", "--url", "http://127.0.0.1:9", "--requests", "1"]) == 1
    assert "could not read the model name" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "--url", "http://127.0.0.1:9", "--concurrency", "0"])
    assert exc.value.code == 2
    assert cli.main(["bench", "--url", "ftp://x", "--requests", "1"]) == 2
