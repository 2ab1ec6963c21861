"""SSE lines and /metrics exposition text: bounded memory per line, linear work per scrape.

An endless SSE line grew ``bench`` to 2 GB; a ``# HELP`` line of a million blanks took 17 s a
scrape (prometheus-client's reading of blanks is quadratic). Cost checks compare work at n and
8n (CPU time ratio, never an absolute time).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.commands.bench import one_request
from eagle_tui.model.boundary.sse import SseLines
from eagle_tui.sources.metrics import parse_metrics

# ------------------------------------------------------------------------------------- SSE


@given(st.lists(st.text(alphabet="ab:é \r", max_size=30), max_size=20), st.data())
@settings(max_examples=300, deadline=None)
def test_sse_lines_in_any_chunking_are_the_lines(lines: list[str], data: st.DataObject) -> None:
    raw = "".join(f"{line}\n" for line in lines).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=8)))
    splitter = SseLines(max_line=1000)
    got: list[str | None] = []
    for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True):
        got += splitter.feed(raw[a:b])
    got += splitter.finish()
    # a lone CR ends a line too (the SSE grammar: CRLF, LF or CR)
    assert got == re.split(r"\r\n|\r|\n", raw.decode())[:-1]


@given(st.integers(13, 5000), st.integers(1, 97))
@settings(max_examples=100, deadline=None)
def test_an_over_long_line_is_one_none_and_the_stream_goes_on(n: int, chunk: int) -> None:
    raw = b"data: ok\n" + b"x" * n + b"\ndata: after\n"
    splitter = SseLines(max_line=12)
    got: list[str | None] = []
    for i in range(0, len(raw), chunk):
        got += splitter.feed(raw[i:i + chunk])
        assert len(splitter._part) <= 12  # memory: the cap, never the line
    assert got == ["data: ok", None, "data: after"]


def test_an_endless_sse_line_refuses_the_request_with_memory_bounded() -> None:
    sent = 0

    async def endless() -> object:
        nonlocal sent
        yield b"data: "
        while sent < 64 << 20:  # 64 MB of one line: the cap stops the read long before
            sent += 1 << 16
            yield b"x" * (1 << 16)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=endless())

    async def go() -> object:
        transport = httpx.MockTransport(handler)
        async with httpx.AsyncClient(base_url="http://s", transport=transport) as client:
            return await one_request(client, "/v1/completions", {"prompt": "x"}, 10.0)

    res = asyncio.run(go())
    assert not res.ok and "a line longer than 1 MB (refused)" in res.error  # type: ignore[attr-defined]
    assert sent < 4 << 20


# ------------------------------------------------------------------------------ exposition

def _cpu(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return max(best, 1e-4)


SHAPES: dict[str, Callable[[int], str]] = {
    "help_blanks": lambda n: "# HELP vllm:num_requests_running " + " " * n + "x\n",
    "help_leading": lambda n: "#" + " " * n + "HELP vllm:num_requests_running x\n",
    "type_blanks": lambda n: "# TYPE vllm:num_requests_running" + " " * n + "gauge\n",
    "label_blanks": lambda n: 'vllm:num_requests_running{a="1"' + " " * n + "} 2\n",
    "many_labels": lambda n: "vllm:num_requests_running{"
    + ",".join(f'a{i}="1"' for i in range(n // 8)) + "} 2\n",
    "many_lines": lambda n: "".join(f'vllm:num_requests_running{{a="{i}"}} 1\n'
                                    for i in range(n // 40)),
}


def test_exposition_cost_grows_linearly_with_hostile_lines() -> None:
    for name, shape in SHAPES.items():
        def scrape(n: int, shape: Callable[[int], str] = shape) -> Callable[[], object]:
            text = ("# TYPE vllm:num_requests_running gauge\n" + shape(n)
                    + "vllm:num_requests_running 1\n")
            return lambda: parse_metrics(text, 0.0)
        small, big = _cpu(scrape(50_000)), _cpu(scrape(400_000))
        assert big / small < 20, (name, small, big)


def test_a_million_blank_help_line_and_a_long_sample_line_cost_their_line_only() -> None:
    text = ("# HELP vllm:num_requests_running " + " " * 1_000_000 + "x\n"
            "# TYPE vllm:num_requests_running   gauge\n"
            'vllm:num_requests_waiting{a="' + "x" * 100_000 + '"} 3\n'
            "vllm:num_requests_running 2\n")
    snap = parse_metrics(text, 0.0)
    assert snap.gauges["vllm:num_requests_running"] == 2.0
    assert "vllm:num_requests_waiting" in snap.skipped
