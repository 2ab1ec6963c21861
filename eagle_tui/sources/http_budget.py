"""Every HTTP request with a total deadline and a body cap: one slow or huge answer costs little.

httpx's ``timeout`` is *per read*: a server that sends its headers and then one byte a second
never trips it, and ``/health`` would stay "ready 200" past ``wait --timeout``. ``client.get``
also reads the whole body into memory, however large or endless. :func:`get_bounded` is the
one way the sources (``/health``, ``/metrics``, ``/server_info``, ``/v1/models``) and ``bench``
read an answer.

More in docs/architecture.md, "Module notes", ``sources/http_budget``.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eagle_tui.model.boundary.loaders import load_json
from eagle_tui.transport.base import TransportError

if TYPE_CHECKING:
    import httpx

# the caps the sources use: well above the real answers (tests/fixtures/*-cpu hold recorded ones)
HEALTH_MAX_BYTES = 64 << 10
METRICS_MAX_BYTES = 4 << 20
INFO_MAX_BYTES = 1 << 20


class HttpBudgetError(TransportError):
    """An answer over its budget (time or bytes); ``status_code`` when its headers came."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class DeadlineExceeded(HttpBudgetError):
    """The whole request (connect, headers and body) did not finish within its deadline."""


class BodyTooLarge(HttpBudgetError):
    """The body is (or declares itself) longer than the cap; the read stopped at the cap."""


@dataclass(frozen=True, slots=True)
class BoundedResponse:
    """A complete answer read within its budget."""

    status_code: int
    content: bytes
    elapsed_s: float
    headers: dict[str, str]

    @property
    def text(self) -> str:
        """The body as text (UTF-8; a wrong byte becomes U+FFFD, never an error)."""
        return self.content.decode("utf-8", "replace")

    def json(self, source: str) -> Any:
        """The body as JSON (the bounded loader; the body is already within its cap);
        :class:`~eagle_tui.model.boundary.loaders.LoadError` naming ``source`` when it is not."""
        return load_json(self.content, source, max_bytes=len(self.content))


def _size(n: int) -> str:
    return f"{n / (1 << 20):.0f} MB" if n >= 1 << 20 else f"{n >> 10} KB"


class _Inflater:
    """A gzip/deflate body decoded at most ``cap + 1`` bytes at a time (never a bomb)."""

    def __init__(self, encoding: str) -> None:
        wbits = zlib.MAX_WBITS | 32 if encoding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._d = zlib.decompressobj(wbits)
        self.pending = False

    def feed(self, data: bytes, room: int) -> bytes:
        try:
            out = self._d.decompress(data, room + 1)
        except zlib.error as exc:
            raise TransportError(f"a compressed body that cannot be decoded: {exc}") from None
        self.pending = bool(self._d.unconsumed_tail)
        return out

    def finish(self) -> bytes:
        """What the decompressor still holds at the end of the body (usually nothing)."""
        try:
            return self._d.flush()
        except zlib.error as exc:
            raise TransportError(f"a compressed body that cannot be decoded: {exc}") from None


async def _read_body(resp: httpx.Response, url: str, max_bytes: int) -> bytes:
    if resp.is_stream_consumed:  # (a transport that answered with the body already in memory)
        if len(resp.content) > max_bytes:
            raise BodyTooLarge(f"{url}: the answer is larger than {_size(max_bytes)}; skipped",
                               resp.status_code)
        return resp.content
    encoding = resp.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
        raise TransportError(f"{url}: a body encoded as {encoding!r} (identity was asked for)")
    inflater = _Inflater(encoding) if encoding not in ("", "identity") else None
    body = bytearray()
    async for raw in resp.aiter_raw():
        part = raw if inflater is None else inflater.feed(raw, max_bytes - len(body))
        body += part
        if len(body) > max_bytes or (inflater is not None and inflater.pending):
            raise BodyTooLarge(f"{url}: the answer is larger than {_size(max_bytes)}; skipped",
                               resp.status_code)
    if inflater is not None:
        body += inflater.finish()
        if len(body) > max_bytes:
            raise BodyTooLarge(f"{url}: the answer is larger than {_size(max_bytes)}; skipped",
                               resp.status_code)
    return bytes(body)


async def get_bounded(client: httpx.AsyncClient, url: str, *, deadline_s: float,
                      max_bytes: int, method: str = "GET",
                      json_body: Any = None) -> BoundedResponse:
    """``method url`` read completely within ``deadline_s`` seconds and ``max_bytes`` bytes.

    Raises :class:`DeadlineExceeded`, :class:`BodyTooLarge`, or httpx's errors as they are.
    The per-read ``timeout`` of the client still applies inside (a connect that is refused or a
    server that says nothing fails as fast as before).
    """
    import httpx

    if deadline_s <= 0 or max_bytes < 0:
        raise ValueError("deadline_s must be positive and max_bytes >= 0")
    t0 = time.perf_counter()
    status: int | None = None
    headers = {"accept-encoding": "identity"}

    async def once() -> BoundedResponse:
        nonlocal status
        async with client.stream(method, url, headers=headers, json=json_body) as resp:
            status = resp.status_code
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and len(declared) < 20 and int(declared) > max_bytes:
                raise BodyTooLarge(f"{url}: the answer declares {_size(int(declared))}, "
                                   f"more than {_size(max_bytes)}; skipped", status)
            body = await _read_body(resp, url, max_bytes)
            return BoundedResponse(status, body, time.perf_counter() - t0,
                                   {k.lower(): v for k, v in resp.headers.items()})

    try:
        async with asyncio.timeout(deadline_s):
            try:
                return await once()
            except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError):
                # a kept-alive connection the server closed as the request went out (the
                # engines' uvicorn closes one idle for 5 s) fails before any answer: a GET is
                # asked once more, on a new connection
                if status is not None or method != "GET":
                    raise
            return await once()
    except TimeoutError:
        what = "complete answer" if status is not None else "answer"
        raise DeadlineExceeded(f"{url}: no {what} within {deadline_s:g} s", status) from None


__all__ = [
    "HEALTH_MAX_BYTES",
    "INFO_MAX_BYTES",
    "METRICS_MAX_BYTES",
    "BodyTooLarge",
    "BoundedResponse",
    "DeadlineExceeded",
    "HttpBudgetError",
    "get_bounded",
]
