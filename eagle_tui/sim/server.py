"""The simulated server's HTTP/1.1 endpoint on 127.0.0.1 (asyncio, keep-alive, chunked SSE).

What a watcher sees over a launch is what the engines really do: SGLang refuses connections until
uvicorn starts, then ``/health`` is 503 until warmup finished; vLLM binds its socket before the
engine exists, so connections are accepted early but nothing answers until startup completes.
Every request is logged as a uvicorn access line in the engine's format. The handful of endpoints
that dashboards and clients use are implemented; everything else is a real-looking 404.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import metrics, sglang_log, vllm_log
from .engine import Request, ServingEngine
from .hold import SimHold
from .openai_api import ApiError, ChatOrCompletion, parse_request, sglang_server_info

MAX_BODY = 1 << 20
MAX_HEAD = 64 * 1024
HEALTH_GENERATE_S = 1.0  # SGLang's /health waits in 1 s steps for its generation to answer
HEALTH_CHECK_TIMEOUT_S = 20  # SGLang's HEALTH_CHECK_TIMEOUT (SGLANG_HEALTH_CHECK_TIMEOUT)
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           413: "Payload Too Large", 503: "Service Unavailable"}


class HttpServer:
    def __init__(self, engine: ServingEngine, log: Callable[[list[str]], None],
                 epoch: Callable[[], float], speed: float = 1.0) -> None:
        self.engine = engine
        self.speed = speed
        self.cfg = engine.cfg
        self._log = log
        self._epoch = epoch
        self.ready = False
        self.unhealthy = False  # SGLang: a /health that timed out (while paused) says so
        self.hold = SimHold(engine, log, epoch)  # sleep and pause (.hold)
        self._sock: socket.socket | None = None
        self._server: asyncio.base_events.Server | None = None

    # ------------------------------------------------------------------ lifecycle
    def bind(self) -> None:
        """Bind and listen without answering (connections wait in the backlog)."""
        if self._sock is None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((self.cfg.host, self.cfg.port))
                sock.listen(128)
                sock.setblocking(False)
            except OSError:
                sock.close()
                raise
            self._sock = sock

    @property
    def port(self) -> int:
        """The bound port (differs from the configured one when that was 0)."""
        return int(self._sock.getsockname()[1]) if self._sock is not None else self.cfg.port

    async def serve(self) -> None:
        self.bind()
        self._server = await asyncio.start_server(self._handle, sock=self._sock,
                                                  limit=MAX_HEAD)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        elif self._sock is not None:
            self._sock.close()
        self._sock = None

    # ------------------------------------------------------------------ one connection
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        client_port = int(peer[1]) if isinstance(peer, tuple) else 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method, path, keep_alive, length = _parse_head(head)
                if length > MAX_BODY:
                    await self._send(writer, 413, {"detail": "Request body too large"}, False)
                    self._access(client_port, method, path, 413)
                    return
                body = await reader.readexactly(length) if length else b""
                status = await self._dispatch(method, path, body, writer, keep_alive,
                                              _accept_header(head))
                self._access(client_port, method, path, status)
                if not keep_alive:
                    return
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError,
                ValueError):
            return
        except asyncio.CancelledError:
            # the server is stopping: the connection ends with it (a cancelled handler is
            # printed as a CancelledError traceback by asyncio's streams, which no engine does)
            return
        finally:
            writer.close()

    def _access(self, client_port: int, method: str, path: str, status: int) -> None:
        if self.cfg.engine == "sglang":
            line = sglang_log.access_line(self._epoch(), client_port, method, path, status)
        else:
            line = vllm_log.access_line(client_port, method, path, status)
        self._log([line])

    async def _dispatch(self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter,
                        keep_alive: bool, accept: str = "") -> int:
        sglang = self.cfg.engine == "sglang"
        path, _, query = path.partition("?")  # routed without its query, logged with it
        gets: dict[str, Callable[[], tuple[int, Any]]] = {
            "/health": self._health, "/v1/models": self._models,
            "/metrics": lambda: self._metrics(accept),
        }
        if sglang:
            gets |= {"/health_generate": self._health, "/ready": self._ready,
                     "/ping": self._health, "/model_info": self._model_info,
                     "/get_model_info": self._model_info, "/server_info": self._server_info,
                     "/get_server_info": self._server_info, "/v1/loads": self._loads}
        else:
            gets |= {"/version": lambda: (200, {"version": vllm_log.VERSION}),
                     "/ping": self._health}
        posts = {"/v1/completions", "/v1/chat/completions"}
        hold_gets, hold_posts = self.hold.routes()
        if (method, path) in {("GET", p) for p in hold_gets} | {("POST", p) for p in hold_posts}:
            status, payload = (hold_gets if method == "GET" else hold_posts)[path](query)
            await self._send(writer, status, payload, keep_alive)
            return status
        if method == "GET" and sglang and path in ("/health", "/health_generate") and self.ready:
            if self.engine.paused:  # its generation waits for the pause: SGLang gives up
                await self._health_while_paused()
                await self._send(writer, 503, b"", keep_alive)
                return 503
            await self._health_generate()
            self.unhealthy = False
        if method == "GET" and path in gets:
            status, payload = gets[path]()
            if sglang and path == "/get_server_info":
                self._log([sglang_log.prefix(self._epoch(), None, 1) + "Endpoint "
                           "'/get_server_info' is deprecated and will be removed in a future "
                           "version. Please use '/server_info' instead."])
            await self._send(writer, status, payload, keep_alive)
            return status
        if method == "POST" and path in posts:
            return await self._generate(path, body, writer, keep_alive)
        if path in gets or path in posts or path in hold_gets or path in hold_posts:
            await self._send(writer, 405, {"detail": "Method Not Allowed"}, keep_alive)
            return 405
        await self._send(writer, 404, {"detail": "Not Found"}, keep_alive)
        return 404

    # ------------------------------------------------------------------ endpoints
    async def _health_generate(self) -> None:
        """SGLang's /health once it is up: a one-token generation (its prefill line, not in
        the metrics), answered when the scheduler replied, at its next 1 s check."""
        e = self.engine
        self._log([sglang_log.prefill_line(self.cfg, self._epoch(), 1, 1, 0, e.token_usage,
                                           len(e.running), len(e.waiting), 1.0)])
        await asyncio.sleep(HEALTH_GENERATE_S / self.speed)

    async def _health_while_paused(self) -> None:
        """SGLang 0.5.23's ``/health`` on a paused server: no answer within its
        ``HEALTH_CHECK_TIMEOUT`` (20 s), an error line, and the server marked unhealthy."""
        started = self._epoch()
        await asyncio.sleep(HEALTH_CHECK_TIMEOUT_S / self.speed)
        clock = time.strftime("%H:%M:%S", time.localtime(started))
        self._log([sglang_log.prefix(self._epoch(), None, 1) + "Health check failed. Server "
                   f"couldn't get a response from detokenizer for last "
                   f"{HEALTH_CHECK_TIMEOUT_S} seconds. tic start time: {clock}. "
                   f"last_heartbeat time: {clock}"])
        self.unhealthy = True

    def _health(self) -> tuple[int, Any]:
        return (200, b"") if self.ready and not self.unhealthy else (503, b"")

    def _ready(self) -> tuple[int, Any]:
        """SGLang's ``/ready``: up (healthy) and not paused."""
        return (503, b"") if self.engine.paused else self._health()

    def _models(self) -> tuple[int, Any]:
        owner = self.cfg.engine
        return 200, {"object": "list", "data": [{
            "id": self.cfg.served_name, "object": "model", "created": int(self.engine.created),
            "owned_by": owner, "root": self.cfg.model.path,
            "max_model_len": self.cfg.model.context_len}]}

    def _metrics(self, accept: str) -> tuple[int, Any]:
        if self.cfg.engine == "sglang" and "application/openmetrics-text" in accept:
            # the real SGLang (prometheus_client 0.26) answers Prometheus' OpenMetrics Accept
            # header with escaped names: sglang:x is sent as sglang_x (see fleet_queries)
            return 200, OpenMetricsBody(metrics.render_openmetrics(self.engine))
        return 200, metrics.render(self.engine)

    def _model_info(self) -> tuple[int, Any]:
        m = self.cfg.model
        return 200, {"model_path": m.path, "tokenizer_path": m.path, "is_generation": True,
                     "preferred_sampling_params": None, "weight_version": "default",
                     "has_image_understanding": False, "has_audio_understanding": False,
                     "architectures": [m.architecture]}

    def _server_info(self) -> tuple[int, Any]:
        return 200, sglang_server_info(self.engine)

    def _loads(self) -> tuple[int, Any]:
        e = self.engine
        return 200, e.modes.loads(len(e.running), len(e.waiting), e.used_tokens, e.token_usage,
                                  e.last_gen_throughput)

    async def _generate(self, path: str, body: bytes, writer: asyncio.StreamWriter,
                        keep_alive: bool) -> int:
        try:
            call = parse_request(self.cfg, path, body)
        except ApiError as e:
            await self._send(writer, e.status, e.payload(self.cfg.engine), keep_alive)
            return e.status
        req = self.engine.submit(call.prompt_tokens, call.max_tokens)
        try:
            if call.stream:
                await self._stream(call, req, writer)
            else:
                text = []
                while (chunk := await req.out.get()) is not None:
                    text.extend(chunk)
                await self._send(writer, 200, call.final(req, "".join(text)), keep_alive)
        except (ConnectionError, asyncio.CancelledError):
            self.engine.cancel(req)
            raise
        return 200

    async def _stream(self, call: ChatOrCompletion, req: Request,
                      writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
                     b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n")
        for event in call.opening():
            await _chunk(writer, event)
        while (tokens := await req.out.get()) is not None:
            await _chunk(writer, call.delta("".join(tokens)))
        for event in call.closing(req):
            await _chunk(writer, event)
        await _chunk(writer, "[DONE]")
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async def _send(self, writer: asyncio.StreamWriter, status: int, payload: Any,
                    keep_alive: bool) -> None:
        if isinstance(payload, OpenMetricsBody):
            body = payload.body
            ctype = metrics.OPENMETRICS_TYPE
        elif isinstance(payload, bytes):
            body = payload
            ctype = "text/plain; version=0.0.4; charset=utf-8" if payload else "text/plain"
        else:
            body = json.dumps(payload).encode()
            ctype = "application/json"
        head = (f"HTTP/1.1 {status} {REASONS.get(status, '')}\r\ndate: "
                f"{time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime())}\r\nserver: uvicorn"
                f"\r\ncontent-type: {ctype}\r\ncontent-length: {len(body)}\r\n"
                f"{'' if keep_alive else 'connection: close' + chr(13) + chr(10)}\r\n")
        writer.write(head.encode() + body)
        await writer.drain()


async def _chunk(writer: asyncio.StreamWriter, data: str) -> None:
    payload = f"data: {data}\n\n".encode()
    writer.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
    await writer.drain()


@dataclass(frozen=True)
class OpenMetricsBody:
    """A ``/metrics`` answer in the OpenMetrics format (its own content type)."""

    body: bytes


def _accept_header(head: bytes) -> str:
    for raw in head.decode("latin-1").split("\r\n")[1:]:
        k, _, v = raw.partition(":")
        if k.strip().lower() == "accept":
            return v.strip()
    return ""


def _parse_head(head: bytes) -> tuple[str, str, bool, int]:
    """(method, target with its query, keep-alive, content-length) of a request head;
    ValueError if malformed. The query is logged, as uvicorn logs it, and routed without."""
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ", 2)
    headers = {}
    for raw in lines[1:]:
        if ":" in raw:
            k, v = raw.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        raise ValueError("chunked request bodies are not supported")
    keep_alive = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
    return method.upper(), target, keep_alive, int(headers.get("content-length",
                                                                                "0"))
