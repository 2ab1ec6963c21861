"""A hostile HTTP server on 127.0.0.1: the endpoint faults eagle-tui must survive, on demand.

Used by the endpoint-chaos tests and ``benchmarks/bench_chaos.py``. One server answers
``/health``, ``/metrics`` (vLLM names), ``/server_info``, ``/get_server_info`` and ``/v1/models``
in the current :attr:`HostileServer.mode` (switchable while it runs; the modes are listed in
the notes).

More in docs/architecture.md, "Module notes", ``sim/hostile``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time

MODES = ("ok", "refused", "503", "500", "garbage", "hang", "drip", "huge", "endless", "numbers",
         "keepalive-drop")
BIG = "9" * 400

_HEAD = ("HTTP/1.1 {status}\r\ncontent-type: {ctype}\r\n{length}connection: close\r\n\r\n")


def metrics_text(t: float, value: str | None = None) -> bytes:
    """A small vLLM ``/metrics``; ``value`` replaces every sample value (an unrepresentable one)."""
    gen = f"{100.0 * t:.1f}"

    def v(x: str) -> str:
        return value if value is not None else x

    lines = [
        "# TYPE vllm:num_requests_running gauge",
        f'vllm:num_requests_running{{engine="0",model_name="m"}} {v("1.0")}',
        "# TYPE vllm:num_requests_waiting gauge",
        f'vllm:num_requests_waiting{{engine="0",model_name="m"}} {v("0.0")}',
        "# TYPE vllm:kv_cache_usage_perc gauge",
        f'vllm:kv_cache_usage_perc{{engine="0",model_name="m"}} {v("0.25")}',
        "# TYPE vllm:generation_tokens counter",
        f'vllm:generation_tokens_total{{engine="0",model_name="m"}} {v(gen)}',
    ]
    return ("\n".join(lines) + "\n").encode()


def _filler_line(i: int) -> bytes:
    return f'vllm:filler_metric{{i="{i}"}} 1.0\n'.encode()


class HostileServer:
    """The server; use as a context manager or call :meth:`start` / :meth:`stop`."""

    def __init__(self, mode: str = "ok", *, drip_s: float = 1.0, huge_bytes: int = 50 << 20,
                 max_conn_s: float = 60.0, max_conn_bytes: int = 256 << 20,
                 max_conns: int = 32) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; one of {', '.join(MODES)}")
        self.mode = mode
        self.drip_s = drip_s
        self.huge_bytes = huge_bytes
        self.max_conn_s = max_conn_s
        self.max_conn_bytes = max_conn_bytes
        self.health_mode: str | None = None  # /health answers in this mode when set
        self.requests = 0
        self._slots = threading.BoundedSemaphore(max_conns)
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="hostile-http",
                                        daemon=True)
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ life
    def start(self) -> HostileServer:
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(self._listen(), self._loop)
        fut.result(10)
        return self

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    def set_mode(self, mode: str) -> None:
        """Switch the behaviour (``refused`` closes the listener; leaving it opens it again)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        was, self.mode = self.mode, mode
        if mode == "refused" and was != "refused":
            asyncio.run_coroutine_threadsafe(self._close_listener(), self._loop).result(10)
        elif was == "refused" and mode != "refused":
            asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)

    async def _close_listener(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    def stop(self) -> None:
        async def shutdown() -> None:
            await self._close_listener()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self._thread.is_alive():
            with contextlib.suppress(TimeoutError):
                asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> HostileServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ serving
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self._slots.acquire(blocking=False):
            writer.close()
            return
        try:
            async with asyncio.timeout(self.max_conn_s):
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests += 1
                path = head.split(b" ", 2)[1].decode("latin-1") if b" " in head else "/"
                if self.mode == "keepalive-drop":  # kept alive, then closed as the next comes
                    await self._send(writer, _HEAD.replace("close", "keep-alive").format(
                        status="200 OK", ctype="text/plain", length="content-length: 2\r\n")
                        .encode() + b"ok")
                    await reader.readuntil(b"\r\n\r\n")
                    return
                await self._answer(path.split("?", 1)[0], writer)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                IndexError):
            pass  # the client gave up or the budget ran out: both are the point of this server
        except asyncio.CancelledError:
            # stop(): end quietly (asyncio's stream callback reports a cancelled handler as
            # an error); nothing waits on this handler's result
            pass
        finally:
            self._slots.release()
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _body(self, path: str) -> tuple[str, bytes]:
        numbers = self.mode == "numbers"
        if path == "/metrics":
            return "text/plain", metrics_text(time.time(), BIG if numbers else None)
        if path in ("/server_info", "/get_server_info"):
            big = 1e308 if numbers else None
            info = {"speculative_algorithm": "EAGLE3", "speculative_num_steps": 3,
                    "served_model_name": "m", "version": "0.0-hostile",
                    "internal_states": [{"avg_spec_accept_length": big or 2.5,
                                         "memory_usage": {"weight": big or 1.5}}]}
            return "application/json", json.dumps(info).encode()
        if path == "/v1/models":
            return "application/json", b'{"object":"list","data":[{"id":"m"}]}'
        return "text/plain", b""

    async def _send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    async def _answer(self, path: str, writer: asyncio.StreamWriter) -> None:
        # (SGLang's no-work readiness path is asked first: it is "the health" here too)
        mode = (self.health_mode if path in ("/health", "/ready") and self.health_mode
                else self.mode)
        if mode == "hang":
            await asyncio.sleep(self.max_conn_s)
            return
        if mode == "garbage":
            await self._send(writer, b"\x00\xff\xfeNOT HTTP AT ALL\r\n\x1b]0;pwned\x07\r\n\r\n")
            return
        if mode in ("503", "500"):
            body = b"hostile " + mode.encode()
            status = "503 Service Unavailable" if mode == "503" else "500 Internal Server Error"
            await self._send(writer, _HEAD.format(
                status=status, ctype="text/plain",
                length=f"content-length: {len(body)}\r\n").encode() + body)
            return
        ctype, body = self._body(path)
        if mode == "drip":
            body = body or b"x" * 64
            await self._send(writer, _HEAD.format(
                status="200 OK", ctype=ctype, length=f"content-length: {len(body)}\r\n").encode())
            for i in range(len(body)):
                await asyncio.sleep(self.drip_s)
                await self._send(writer, body[i:i + 1])
            return
        if mode == "huge" and path == "/metrics":
            await self._huge(writer, body)
            return
        if mode == "endless" and path == "/metrics":
            await self._endless(writer, body)
            return
        await self._send(writer, _HEAD.format(
            status="200 OK", ctype=ctype, length=f"content-length: {len(body)}\r\n").encode()
            + body)

    async def _huge(self, writer: asyncio.StreamWriter, body: bytes) -> None:
        size = min(self.huge_bytes, self.max_conn_bytes)
        block = b"".join(_filler_line(i) for i in range(2000))
        await self._send(writer, _HEAD.format(
            status="200 OK", ctype="text/plain",
            length=f"content-length: {size}\r\n").encode() + body[:size])
        sent = len(body)
        while sent < size:
            part = block[:size - sent]
            await self._send(writer, part)
            sent += len(part)

    async def _endless(self, writer: asyncio.StreamWriter, body: bytes) -> None:
        await self._send(writer, _HEAD.format(
            status="200 OK", ctype="text/plain",
            length="transfer-encoding: chunked\r\n").encode())
        block = b"".join(_filler_line(i) for i in range(2000))
        part, sent = body, 0
        while sent <= self.max_conn_bytes:
            await self._send(writer, f"{len(part):x}\r\n".encode() + part + b"\r\n")
            sent += len(part)
            part = block


__all__ = ["BIG", "MODES", "HostileServer", "metrics_text"]
