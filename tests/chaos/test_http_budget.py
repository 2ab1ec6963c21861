"""The total deadline and body cap of every HTTP request (issue 17, item 3), against the hostile
server of :mod:`eagle_tui.sim.hostile`."""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterator

import httpx
import pytest

from eagle_tui.sim.hostile import HostileServer
from eagle_tui.sources.http_budget import (
    BodyTooLarge,
    DeadlineExceeded,
    get_bounded,
)
from eagle_tui.transport.local import LocalTransport


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    with HostileServer(drip_s=0.2, max_conn_s=20.0) as srv:
        yield srv


def _client(url: str) -> httpx.AsyncClient:
    return LocalTransport().http_client(url, 2.0)


async def test_ok_answer_is_read_whole(hostile: HostileServer) -> None:
    async with _client(hostile.url) as client:
        resp = await get_bounded(client, "/metrics", deadline_s=2.0, max_bytes=1 << 20)
    assert resp.status_code == 200 and b"vllm:generation_tokens_total" in resp.content


async def test_drip_hits_the_total_deadline_not_the_read_timeout(hostile: HostileServer) -> None:
    hostile.set_mode("drip")  # one byte every 0.2 s: never 2 s of silence
    t0 = time.monotonic()
    async with _client(hostile.url) as client:
        with pytest.raises(DeadlineExceeded) as err:
            await get_bounded(client, "/health", deadline_s=1.0, max_bytes=1 << 20)
    assert time.monotonic() - t0 < 1.8
    assert err.value.status_code == 200  # the headers came; the answer never completed


@pytest.mark.parametrize("mode", ["huge", "endless"])
async def test_a_body_over_the_cap_stops_at_the_cap(hostile: HostileServer, mode: str) -> None:
    hostile.set_mode(mode)
    t0 = time.monotonic()
    async with _client(hostile.url) as client:
        with pytest.raises(BodyTooLarge, match=r"larger than|declares"):
            await get_bounded(client, "/metrics", deadline_s=5.0, max_bytes=1 << 20)
    assert time.monotonic() - t0 < 3.0


async def test_a_gzip_bomb_is_decoded_only_up_to_the_cap() -> None:
    bomb = gzip.compress(b"0" * (64 << 20))  # 64 MB → ~64 KB

    def handler(request: httpx.Request) -> httpx.Response:
        body = bomb if request.url.path == "/metrics" else gzip.compress(b"hello")
        return httpx.Response(200, stream=httpx.ByteStream(body),
                              headers={"content-encoding": "gzip"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler),
                                 base_url="http://x") as client:
        with pytest.raises(BodyTooLarge):
            await get_bounded(client, "/metrics", deadline_s=5.0, max_bytes=1 << 20)
        resp = await get_bounded(client, "/x", deadline_s=5.0, max_bytes=1 << 20)
    assert resp.content == b"hello"


async def test_hang_and_refused_fail_within_the_deadline(hostile: HostileServer) -> None:
    hostile.set_mode("hang")
    async with _client(hostile.url) as client:
        t0 = time.monotonic()
        with pytest.raises((DeadlineExceeded, httpx.TimeoutException)):
            await get_bounded(client, "/health", deadline_s=1.0, max_bytes=1024)
        assert time.monotonic() - t0 < 1.8
    hostile.set_mode("refused")
    async with _client(hostile.url) as client:
        with pytest.raises(httpx.ConnectError):
            await get_bounded(client, "/health", deadline_s=1.0, max_bytes=1024)


async def test_a_get_on_a_connection_the_server_closed_is_asked_again_once(
        hostile: HostileServer) -> None:
    """The ready poll of a healthy engine said "error: ReadError" (a critical ``health_lost``
    alert) when its kept-alive connection was closed by the server as the poll went out."""
    from eagle_tui.sources.health import probe

    hostile.set_mode("keepalive-drop")  # each connection's second request: closed unanswered
    async with _client(hostile.url) as client:
        for _ in range(3):
            resp = await get_bounded(client, "/health", deadline_s=2.0, max_bytes=1024)
            assert resp.status_code == 200 and resp.content == b"ok"
        sample = await probe(client, "/health", time.time, 2.0)
        assert sample.state == "ready", sample
        # a POST is not idempotent: it is never sent twice
        with pytest.raises(httpx.HTTPError):
            await get_bounded(client, "/generate", deadline_s=2.0, max_bytes=1024,
                              method="POST", json_body={})
    assert hostile.requests >= 4  # connections: the first request of each is counted
