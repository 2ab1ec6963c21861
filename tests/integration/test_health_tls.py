"""A TLS failure is named in the health state, never read as ``no_listener``.

Before: httpx's ``ConnectError`` for a certificate that fails verification was taken for a
refused connection, so an ``https://`` server with a self-signed certificate read "nothing
listens on the port". Now the three TLS mistakes are named (``error`` with ``tls: …``): a
certificate that fails verification, TLS to a plain HTTP port, plain HTTP to a TLS port.
Servers: loopback asyncio servers with a certificate generated here.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import os
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from eagle_tui.model.events import HealthSample
from eagle_tui.sources.health import HealthPoller
from eagle_tui.sources.tls import PLAIN_TO_TLS, TLS_TO_PLAIN, https_twin, tls_reason
from eagle_tui.transport.local import LocalTransport

ROOT = Path(__file__).resolve().parents[2]


def _certificate(folder: Path, *, days: int = 2) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (``days`` < 0: expired)."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    start, end = (now - datetime.timedelta(days=1), now + datetime.timedelta(days=days))
    if days < 0:
        start, end = now - datetime.timedelta(days=10), now + datetime.timedelta(days=days)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture
def tls_context(tmp_path: Path) -> Iterator[ssl.SSLContext]:
    cert, key = _certificate(tmp_path)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    yield ctx


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """200 to a request, 400 to bytes that are not one (a TLS ClientHello), as HTTP servers do."""
    try:
        head = await reader.read(4096)
        if head.startswith(b"GET "):
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
        else:
            writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
        await writer.drain()
    except (ConnectionError, ssl.SSLError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


@asynccontextmanager
async def serve(ctx: ssl.SSLContext | None) -> AsyncIterator[int]:
    server = await asyncio.start_server(_answer, "127.0.0.1", 0, ssl=ctx)
    try:
        yield int(server.sockets[0].getsockname()[1])
    finally:
        server.close()
        await asyncio.wait_for(server.wait_closed(), 5)


async def _poll(url: str, n: int = 2) -> list[HealthSample]:
    poller = HealthPoller(LocalTransport(), url, interval=0.05, timeout=2.0, max_polls=n)
    return [ev async for ev in poller.events() if isinstance(ev, HealthSample)]


async def test_a_self_signed_certificate_is_named(tls_context: ssl.SSLContext) -> None:
    async with serve(tls_context) as port:
        samples = await _poll(f"https://127.0.0.1:{port}")
    for s in samples:
        assert s.state == "error", s
        assert s.error == "tls: certificate verify failed: self-signed certificate", s.error


async def test_an_expired_certificate_is_named(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path, days=-1)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    async with serve(ctx) as port:
        (s,) = await _poll(f"https://127.0.0.1:{port}", 1)
    assert s.state == "error" and s.error.startswith("tls: certificate verify failed:"), s


async def test_tls_to_a_plain_port_is_named() -> None:
    async with serve(None) as port:
        samples = await _poll(f"https://127.0.0.1:{port}")
    assert [(s.state, s.error) for s in samples] == [("error", TLS_TO_PLAIN)] * 2


async def test_plain_http_to_a_tls_port_is_named(tls_context: ssl.SSLContext) -> None:
    async with serve(tls_context) as port:
        samples = await _poll(f"http://127.0.0.1:{port}", 3)
    assert [(s.state, s.error) for s in samples] == [("error", PLAIN_TO_TLS)] * 3


async def test_nothing_listening_is_still_no_listener() -> None:
    async with serve(None) as port:
        pass
    (s,) = await _poll(f"https://127.0.0.1:{port}", 1)
    assert s.state == "no_listener" and not s.error.startswith("tls:")


async def test_a_plain_server_over_http_is_unchanged() -> None:
    async with serve(None) as port:
        (s,) = await _poll(f"http://127.0.0.1:{port}", 1)
    assert s.state == "ready" and s.error == ""


def test_tls_reason_walks_the_cause_chain_and_ignores_the_rest() -> None:
    inner = ssl.SSLCertVerificationError(1, "certificate verify failed")
    inner.verify_message = "certificate has expired"
    outer = RuntimeError("wrapped")
    outer.__cause__ = inner
    assert tls_reason(outer) == "tls: certificate verify failed: certificate has expired"
    assert tls_reason(ConnectionRefusedError(111, "Connection refused")) == ""
    loop = RuntimeError("a")
    loop.__context__ = RuntimeError("b")
    loop.__context__.__context__ = loop  # a cycle ends the walk
    assert tls_reason(loop) == ""
    assert tls_reason(RuntimeError("illegal status line: bytearray(b'\\x15\\x03\\x03')")) \
        == PLAIN_TO_TLS
    assert https_twin("http://h:8000/x") == "https://h:8000/x"
    assert https_twin("http://h") == "https://h:80"
    assert https_twin("https://h:1") is None


def test_watch_headless_says_tls_in_its_progress_line(tls_context: ssl.SSLContext,
                                                      tmp_path: Path) -> None:
    async def run() -> subprocess.CompletedProcess[str]:
        async with serve(tls_context) as port:
            env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "eagle_tui", "watch", "--headless", "--url",
                f"https://127.0.0.1:{port}", "--duration", "3", cwd=tmp_path, env=env,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            return subprocess.CompletedProcess([], proc.returncode or 0, out.decode(),
                                               err.decode())

    proc = asyncio.run(run())
    assert proc.returncode == 0, proc.stderr
    assert "health: error (tls: certificate verify failed: self-signed certificate)" \
        in proc.stdout, proc.stdout
    assert "no_listener" not in proc.stdout


def test_the_dashboard_startup_panel_shows_the_tls_reason() -> None:
    from eagle_tui.model.state import DashboardState
    from eagle_tui.model.state.live import LiveSources
    from eagle_tui.ui.widgets.startup import _health_parts

    tls = "tls: certificate verify failed: self-signed certificate"
    state = DashboardState(live=LiveSources(health=HealthSample("error", 1.0, None, 0.01, tls)))
    assert tls in "".join(text for text, _ in _health_parts(state))
    plain = DashboardState(live=LiveSources(health=HealthSample("error", 1.0, 500, 0.01,
                                                                "HTTP 500")))
    assert "HTTP 500" not in "".join(text for text, _ in _health_parts(plain))
