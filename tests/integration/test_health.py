"""HealthPoller against real TCP servers on 127.0.0.1: 503→200, refused, hanging, garbage."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from eagle_tui.model.events import HealthSample
from eagle_tui.sources.health import HealthPoller
from eagle_tui.transport.local import LocalTransport

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], "asyncio.Future[None] | None"]


@asynccontextmanager
async def serve(handler: Callable[[asyncio.StreamReader, asyncio.StreamWriter], object]
                ) -> AsyncIterator[str]:
    async def wrapped(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await handler(reader, writer)  # type: ignore[misc]
        finally:
            writer.close()

    server = await asyncio.start_server(wrapped, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await asyncio.wait_for(server.wait_closed(), 5)


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def poll(url: str, n: int, *, interval: float = 0.05, timeout: float = 1.0
               ) -> list[HealthSample]:
    poller = HealthPoller(LocalTransport(), url, interval=interval, timeout=timeout, max_polls=n)
    out = []
    async for ev in poller.events():
        assert isinstance(ev, HealthSample)
        out.append(ev)
    return out


async def test_503_while_starting_then_200_when_ready() -> None:
    statuses = iter([503, 503, 200, 200])
    requests: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                requests.append(await read_request(reader))
            except asyncio.IncompleteReadError:
                return
            code = next(statuses)
            reason = b"OK" if code == 200 else b"Service Unavailable"
            writer.write(b"HTTP/1.1 %d %s\r\ncontent-length: 0\r\n\r\n" % (code, reason))
            await writer.drain()

    async with serve(handler) as url:
        samples = await poll(url, 4)
    assert [s.state for s in samples] == ["starting", "starting", "ready", "ready"]
    assert [s.status_code for s in samples] == [503, 503, 200, 200]
    assert all(r == b"GET /health HTTP/1.1" for r in requests)
    assert all(s.latency_s is not None and 0 <= s.latency_s < 1 for s in samples)
    assert samples[0].error == "" and samples[-1].error == ""
    ts = [s.t for s in samples]
    assert ts == sorted(ts) and ts[-1] - ts[0] >= 0.1  # paced by the interval, not a busy loop


async def test_other_status_codes_are_errors() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 2\r\n\r\nno")
        await writer.drain()

    async with serve(handler) as url:
        (sample,) = await poll(url, 1)
    assert sample.state == "error" and sample.status_code == 500 and sample.error == "HTTP 500"


async def test_connection_refused_is_no_listener() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    samples = await poll(url, 2)
    assert [s.state for s in samples] == ["no_listener", "no_listener"]
    assert samples[0].status_code is None and samples[0].error


async def test_a_hanging_server_is_a_timeout_and_does_not_block_the_loop() -> None:
    release = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await release.wait()  # accept, read, never answer

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async with serve(handler) as url:
        tick_task = asyncio.create_task(ticker())
        t0 = time.monotonic()
        samples = await poll(url, 2, timeout=0.3)
        elapsed = time.monotonic() - t0
        tick_task.cancel()
        release.set()
    assert [s.state for s in samples] == ["timeout", "timeout"]
    assert "0.3" in samples[0].error
    assert 0.5 <= elapsed < 3.0
    assert ticks >= 20  # the event loop kept running while the requests hung


async def test_garbage_instead_of_http_is_an_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"SSH-2.0-OpenSSH_9.2 definitely not http\r\n\r\n")
        await writer.drain()

    async with serve(handler) as url:
        (sample,) = await poll(url, 1)
    assert sample.state == "error"
    assert sample.status_code is None
    assert "not an HTTP answer" in sample.error


async def test_a_server_that_closes_without_answering_is_an_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)  # then close: "server disconnected without response"

    async with serve(handler) as url:
        (sample,) = await poll(url, 1)
    assert sample.state == "error" and sample.error


async def test_ready_server_goes_away() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        await writer.drain()

    server_cm = serve(handler)
    url = await server_cm.__aenter__()
    poller = HealthPoller(LocalTransport(), url, interval=0.05, timeout=0.5, max_polls=4)
    states = []
    async for ev in poller.events():
        assert isinstance(ev, HealthSample)
        states.append(ev.state)
        if len(states) == 2:
            await server_cm.__aexit__(None, None, None)
    assert states[:2] == ["ready", "ready"]
    assert states[2:] == ["no_listener", "no_listener"]
