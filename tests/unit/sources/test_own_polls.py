"""eagle-tui's own polls: marked in the access log, and no endpoint asked again after a 404."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from eagle_tui.assembly.build import build_sources
from eagle_tui.assembly.spec import DashboardSpec
from eagle_tui.sources.health import HealthPoller
from eagle_tui.sources.metrics import MetricsScraper
from eagle_tui.sources.serverinfo import ServerInfoSource
from eagle_tui.transport.base import Transport
from eagle_tui.transport.local import LocalTransport


class _Mock(LocalTransport):
    def __init__(self, handler: httpx.MockTransport) -> None:
        super().__init__()
        self._handler = handler

    @asynccontextmanager
    async def http_client(self, base_url: str, timeout: float) -> AsyncIterator[httpx.AsyncClient]:
        async with httpx.AsyncClient(base_url=base_url, transport=self._handler) as client:
            yield client


async def test_server_info_asks_a_404_endpoint_once_until_the_server_goes_away() -> None:
    seen: list[str] = []
    answers = {"/v1/models": [503, 503, 200]}
    down = [False]

    def handler(request: httpx.Request) -> httpx.Response:
        if down[0]:
            raise httpx.ConnectError("refused")
        seen.append(f"{request.url.path}?{request.url.query.decode()}")
        codes = answers.get(request.url.path)
        code = codes.pop(0) if codes else 404
        if code == 200:
            return httpx.Response(200, json={"object": "list", "data": [{"id": "tiny"}]})
        return httpx.Response(code)

    transport: Transport = _Mock(httpx.MockTransport(handler))
    src = ServerInfoSource(transport, "http://h")
    async with transport.http_client("http://h", 1.0) as client:
        for _ in range(3):
            await src.fetch(client)
        assert seen == ["/server_info?eagle-tui", "/get_server_info?eagle-tui",
                        "/v1/models?eagle-tui", "/v1/models?eagle-tui", "/v1/models?eagle-tui"]
        assert src.path == "/v1/models"
        down[0] = True
        src.path = None  # (a restart: the next answer decides the endpoint again)
        assert await src.fetch(client) is None
        assert src.missing == {}  # not answering: a restarted server is asked everything again


def test_the_commands_mark_their_polls_and_slow_health_once_ready() -> None:
    spec = DashboardSpec(url="http://127.0.0.1:1", gpu="none", health_interval=0.5)
    sources = build_sources(spec, LocalTransport(), lambda: None)
    health = next(s for s in sources if isinstance(s, HealthPoller))
    metrics = next(s for s in sources if isinstance(s, MetricsScraper))
    # the engine is not known yet: the no-work readiness path first, every path marked
    assert health.mark(health.path) == "/ready?eagle-tui" and metrics.path == "/metrics?eagle-tui"
    assert health.mark("/health") == "/health?eagle-tui"
    assert (health.interval, health.ready_interval) == (0.5, 5.0)
