"""The load endpoint's source: quiet where the server has none, once per server, bounded."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from eagle_tui.assembly.build import build_sources
from eagle_tui.assembly.spec import DashboardSpec
from eagle_tui.model.events import RankLoads
from eagle_tui.sources.http_budget import INFO_MAX_BYTES
from eagle_tui.sources.loads import LoadsSource, load_paths
from eagle_tui.sources.metrics import DEFAULT_INTERVAL_S
from eagle_tui.transport.base import Transport
from eagle_tui.transport.local import LocalTransport

PATH = "/v1/loads?eagle-tui&include=spec"
ANSWER = {"timestamp": "2026-12-02T08:00:00+00:00", "version": "0.5.23", "accelerator": None,
          "num_accelerators": 1,
          "loads": [{"dp_rank": 0, "num_running_reqs": 1,
                     "speculative": {"accept_length": 3.2, "accept_rate": 0.7}},
                    {"dp_rank": 1, "num_running_reqs": 0,
                     "speculative": {"accept_length": 1.0, "accept_rate": 0.0}}]}


class _Mock(LocalTransport):
    def __init__(self, handler: httpx.MockTransport) -> None:
        super().__init__()
        self._handler = handler

    @asynccontextmanager
    async def http_client(self, base_url: str, timeout: float) -> AsyncIterator[httpx.AsyncClient]:
        async with httpx.AsyncClient(base_url=base_url, transport=self._handler) as client:
            yield client


def test_the_path_carries_our_mark_first_and_only_known_engines_are_asked() -> None:
    assert [p for p, _ in load_paths()] == [PATH]
    assert [p for p, _ in load_paths("sglang")] == [PATH]
    assert load_paths("vllm") == ()  # an engine known to have none is not asked


async def test_a_404_is_remembered_quietly_and_an_answer_read() -> None:
    seen: list[str] = []
    codes = [404, 200, 200, 200]
    body = [ANSWER]

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.url.path}?{request.url.query.decode()}")
        code = codes.pop(0)
        return httpx.Response(code, json=body[0]) if code == 200 else httpx.Response(code)

    transport: Transport = _Mock(httpx.MockTransport(handler))
    src = LoadsSource(transport, "http://h", clock=lambda: 7.0)
    assert src.interval == DEFAULT_INTERVAL_S  # the /metrics cadence
    async with transport.http_client("http://h", 1.0) as client:
        assert await src.fetch(client) is None  # 404: no event, no failure
        assert await src.fetch(client) is None  # remembered: not asked again
        assert seen == [PATH]
        src.missing.clear()  # (forget_after passed)
        got = await src.fetch(client)
        assert got == RankLoads(7.0, ((0, 3.2), (1, 1.0)), ((0, 1), (1, 0)))
        body[0] = {"loads": "not a list"}
        assert await src.fetch(client) is None  # an unreadable answer is quiet too


async def test_an_oversized_answer_is_not_read() -> None:
    big = json.dumps({"loads": [], "pad": "x" * (INFO_MAX_BYTES + 10)})

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=big.encode())

    transport: Transport = _Mock(httpx.MockTransport(handler))
    src = LoadsSource(transport, "http://h")
    async with transport.http_client("http://h", 1.0) as client:
        assert await src.fetch(client) is None


async def test_the_same_answer_is_not_repeated() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=ANSWER)

    transport: Transport = _Mock(httpx.MockTransport(handler))
    src = LoadsSource(transport, "http://h", interval=0.001, max_polls=4)
    got = [ev async for ev in src.events()]
    assert len(got) == 1 and isinstance(got[0], RankLoads)
    # an answer that stands still is asked less often: 2, 4, then 5 intervals apart
    assert src.every == pytest.approx(0.005)


async def test_an_engine_without_the_endpoint_is_never_asked() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(404)

    transport: Transport = _Mock(httpx.MockTransport(handler))
    src = LoadsSource(transport, "http://h", interval=0.001, max_polls=3, engine=lambda: "vllm")
    assert [ev async for ev in src.events()] == [] and seen == []


def test_the_dashboard_asks_it_for_a_url() -> None:
    spec = DashboardSpec(url="http://127.0.0.1:1", gpu="none")
    assert any(isinstance(s, LoadsSource) for s in build_sources(spec, LocalTransport(),
                                                                 lambda: None))
