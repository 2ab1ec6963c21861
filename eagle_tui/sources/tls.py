"""What went wrong in TLS, in words: a failed handshake must not read as ``no_listener``.

httpx raises the same ``ConnectError`` for a refused connection and for a certificate that
fails verification; only the ``ssl`` error in its cause chain tells them apart. Three cases are
named: a certificate that fails verification (self-signed, expired, another host's), TLS sent to
a port that answers in plain HTTP (the handshake's first record is not TLS), and plain HTTP sent
to a port that speaks TLS (the server answers with a TLS record or hangs up; a follow-up
``https://`` request to the same port, made once, tells which: see :func:`speaks_tls`).
"""

from __future__ import annotations

import ssl
from urllib.parse import urlsplit, urlunsplit

import httpx

from eagle_tui.transport.base import Transport

# OpenSSL's reasons when the peer's first bytes are not a TLS record (plain HTTP, say)
_NOT_TLS = frozenset({"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG",
                      "UNKNOWN_PROTOCOL", "HTTP_REQUEST", "UNEXPECTED_RECORD"})
# the first bytes of a TLS record: an alert (0x15) or a handshake (0x16), version 3.x
_TLS_RECORD = ("\\x15\\x03", "\\x16\\x03")
PLAIN_TO_TLS = "tls: the port speaks TLS and was sent plain HTTP (use https://)"
TLS_TO_PLAIN = "tls: the port answers in plain HTTP, not TLS (use http://)"


def _ssl_error(exc: BaseException) -> ssl.SSLError | None:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:  # (a chain can loop)
        if isinstance(cur, ssl.SSLError):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def tls_reason(exc: BaseException) -> str:
    """``"tls: …"`` naming why the handshake failed, ``""`` when ``exc`` is not TLS's."""
    err = _ssl_error(exc)
    if err is None:
        # h11 quoting the bytes it could not parse: a TLS record where a status line belongs
        text = str(exc)
        return PLAIN_TO_TLS if any(mark in text for mark in _TLS_RECORD) else ""
    if isinstance(err, ssl.SSLCertVerificationError):
        why = err.verify_message or err.reason or "unknown reason"
        return f"tls: certificate verify failed: {why}"
    reason = str(err.reason or "")
    if reason in _NOT_TLS:
        return TLS_TO_PLAIN
    if reason:
        return f"tls: {reason.lower().replace('_', ' ')}"
    return f"tls: {str(err).strip() or type(err).__name__}"


def https_twin(base_url: str) -> str | None:
    """The same host and port with ``https://`` (``None`` unless ``base_url`` is ``http://``:
    an http URL without a port keeps 80, the port that was tried)."""
    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname:
        return None
    netloc = parts.netloc if parts.port is not None else f"{parts.netloc}:80"
    return urlunsplit(("https", netloc, parts.path, "", ""))


async def speaks_tls(transport: Transport, base_url: str, path: str, timeout: float) -> bool:
    """Whether the port behind the ``http://`` URL ``base_url`` completes a TLS handshake (an
    answer over ``https://``, or a certificate that fails verification: both need a TLS peer)."""
    twin = https_twin(base_url)
    if twin is None:
        return False
    try:
        async with transport.http_client(twin, timeout) as client:
            await client.get(path)
    except httpx.HTTPError as exc:
        err = _ssl_error(exc)
        return isinstance(err, ssl.SSLCertVerificationError)
    except Exception:  # a probe for a better message only: any other failure means "unknown"
        return False
    return True


__all__ = ["PLAIN_TO_TLS", "TLS_TO_PLAIN", "https_twin", "speaks_tls", "tls_reason"]
