"""Connecting over SSH to a real loopback sshd: host keys, config aliases, auth, HTTP, states."""

from __future__ import annotations

import asyncio
import http.server
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eagle_tui.model.events import GpuSample, HealthSample
from eagle_tui.sources.connection import ConnectionSource
from eagle_tui.sources.gpu import SmiStream
from eagle_tui.sources.health import HealthPoller
from eagle_tui.transport.base import (
    CommandNotFound,
    ConnectionLost,
    HostKeyError,
    Transport,
    TransportError,
)
from eagle_tui.transport.ssh import SshTransport, backoff_delay
from eagle_tui.transport.ssh.config import DestinationError, parse_dest, resolve
from eagle_tui.transport.ssh.link import AuthError

pytestmark = pytest.mark.sshd


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def host_fingerprint(srv: Any) -> str:
    out = subprocess.run(
        ["ssh-keygen", "-lf", str(srv.dir / "host_ed25519.pub")],
        check=True, capture_output=True, text=True,
    ).stdout
    return out.split()[1]  # "256 SHA256:... comment (ED25519)"


# --------------------------------------------------------------------------- basics


async def test_connects_runs_and_implements_the_protocol(sshd: Any) -> None:
    async with sshd.transport() as t:
        proto: object = t
        assert isinstance(proto, Transport)  # structurally a Transport, like the local one
        assert t.host == f"root@127.0.0.1:{sshd.port}"
        res = await t.run(["printf", "%s|", "a b", "c"])
        assert (res.exit_code, res.stdout) == (0, b"a b|c|")
        res = await t.run(["sh", "-c", "echo oops >&2; exit 3"])
        assert (res.exit_code, res.stderr) == (3, b"oops\n")
        assert t.state.state == "connected"


async def test_missing_command_and_nvidia_smi_give_command_not_found(sshd: Any) -> None:
    async with sshd.transport() as t:
        with pytest.raises(CommandNotFound, match="no-such-tool-xyz"):
            await t.run(["no-such-tool-xyz"])
        with pytest.raises(CommandNotFound):
            async for _ in t.stream_lines(["no-such-tool-xyz", "-lms", "100"]):
                pass
        # the GPU source turns that into the no-driver state, tagged with the host
        sample = await anext(aiter(SmiStream(t, interval=0.1).events()))
        assert isinstance(sample, GpuSample)
        assert sample.state == "no_driver"
        assert sample.host == t.host


async def test_stream_lines_yields_lines_and_reports_failures(sshd: Any) -> None:
    async with sshd.transport() as t:
        got = [line async for line in t.stream_lines(["sh", "-c", "printf 'a\\r\\nb\\nlast'"])]
        assert got == [b"a", b"b", b"last"]
        with pytest.raises(TransportError, match="exited with 4: bad"):
            async for _ in t.stream_lines(["sh", "-c", "echo x; echo bad >&2; exit 4"]):
                pass


async def test_run_timeout_is_a_clear_error(sshd: Any) -> None:
    async with sshd.transport() as t:
        t0 = time.monotonic()
        with pytest.raises(TransportError, match=r"timed out after 0\.3 s"):
            await t.run(["sleep", "5"], timeout=0.3)
        assert time.monotonic() - t0 < 2


async def test_read_file_bounds_and_errors(sshd: Any, tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text('{"architectures": ["LlamaForCausalLMEagle3"]}')
    async with sshd.transport() as t:
        assert await t.read_file(str(cfg)) == cfg.read_bytes()
        with pytest.raises(TransportError, match="larger than 10 bytes"):
            await t.read_file(str(cfg), max_bytes=10)
        with pytest.raises(TransportError, match="No such file"):
            await t.read_file(str(tmp_path / "missing.json"))


# --------------------------------------------------------------------------- host keys


async def test_unknown_host_key_is_refused_with_fingerprint_and_advice(
    sshd: Any, tmp_path: Path
) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    t = SshTransport(sshd.target().dest, sshd.options(known_hosts_files=(empty,)),
                     target=sshd.target())
    with pytest.raises(HostKeyError) as info:
        await t.connect()
    msg = str(info.value)
    assert "host key" in msg
    assert host_fingerprint(sshd) in msg
    assert "--accept-new-host-key" in msg
    assert f"[127.0.0.1]:{sshd.port}" in msg
    assert empty.read_text() == ""  # nothing was written
    assert t.state.state == "failed"
    with pytest.raises(HostKeyError):  # never retried: every later call gets the same refusal
        await t.run(["true"])
    await t.close()


async def test_changed_host_key_is_refused_even_with_accept_new(sshd: Any, tmp_path: Path) -> None:
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    kh = tmp_path / "known_hosts"
    key_type, key_b64 = other.with_suffix(".pub").read_text().split()[:2]
    kh.write_text(f"[127.0.0.1]:{sshd.port} {key_type} {key_b64}\n")
    before = kh.read_text()
    for accept_new in (False, True):
        t = SshTransport(sshd.target().dest,
                         sshd.options(known_hosts_files=(kh,), accept_new_host_key=accept_new),
                         target=sshd.target())
        with pytest.raises(HostKeyError, match="HOST KEY CHANGED") as info:
            await t.connect()
        assert host_fingerprint(sshd) in str(info.value)
        assert "ssh-keygen -R" in str(info.value)
        await t.close()
    assert kh.read_text() == before


async def test_accept_new_adds_the_key_once_then_strict_checking_passes(
    sshd: Any, tmp_path: Path
) -> None:
    kh = tmp_path / "sub" / "known_hosts"  # does not exist yet, nor its directory
    t = SshTransport(sshd.target().dest,
                     sshd.options(known_hosts_files=(kh,), accept_new_host_key=True),
                     target=sshd.target())
    async with t:
        assert (await t.run(["echo", "ok"])).stdout == b"ok\n"
    lines = kh.read_text().splitlines()
    assert lines == [f"[127.0.0.1]:{sshd.port} ssh-ed25519 {sshd.host_pub}"]
    # OpenSSH itself accepts the file we wrote
    out = subprocess.run(["ssh-keygen", "-F", f"[127.0.0.1]:{sshd.port}", "-f", str(kh)],
                         capture_output=True, text=True)
    assert out.returncode == 0 and sshd.host_pub in out.stdout
    strict = SshTransport(sshd.target().dest, sshd.options(known_hosts_files=(kh,)),
                          target=sshd.target())
    async with strict:
        assert (await strict.run(["true"])).exit_code == 0
    assert len(kh.read_text().splitlines()) == 1


async def test_accept_new_into_a_fifo_is_refused_at_once(sshd: Any, tmp_path: Path) -> None:
    """Opening a FIFO to write the new key waited for a reader for ever (no timeout applied)."""
    kh = tmp_path / "known_hosts"
    os.mkfifo(kh)
    t = SshTransport(sshd.target().dest,
                     sshd.options(known_hosts_files=(kh,), accept_new_host_key=True),
                     target=sshd.target())
    t0 = time.monotonic()
    with pytest.raises(TransportError, match=r"not a regular file|No such device"):
        async with asyncio.timeout(20):
            async with t:
                await t.run(["true"])
    assert time.monotonic() - t0 < 15


async def test_hashed_known_hosts_entries_work(sshd: Any, tmp_path: Path) -> None:
    kh = tmp_path / "known_hosts"
    kh.write_text(sshd.known_hosts.read_text())
    subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(kh)], check=True, capture_output=True)
    assert kh.read_text().startswith("|1|")
    async with SshTransport(sshd.target().dest, sshd.options(known_hosts_files=(kh,)),
                            target=sshd.target()) as t:
        assert (await t.run(["true"])).exit_code == 0


# --------------------------------------------------------------------------- config, auth


def test_parse_dest_forms_and_errors() -> None:
    assert parse_dest("gpu-box") == parse_dest("gpu-box")
    assert parse_dest("alice@gpu-box:2222") == type(parse_dest("x"))("gpu-box", "alice", 2222)
    assert parse_dest("ssh://bob@h:23").port == 23
    assert parse_dest("[::1]:2200").host == "::1"
    assert parse_dest("fe80::1").port is None
    assert parse_dest("u@h").user == "u"
    for bad in ("", "@h", "h:0", "h:99999", "h:abc", "[::1", "a b", "u@"):
        with pytest.raises(DestinationError):
            parse_dest(bad)


def write_config(path: Path, sshd: Any) -> None:
    path.write_text(
        "Host gpu-box\n"
        "    HostName 127.0.0.1\n"
        f"    Port {sshd.port}\n"
        "    User root\n"
        f"    IdentityFile {sshd.client_key}\n"
        "Host inner\n"
        "    HostName 127.0.0.1\n"
        f"    Port {sshd.port}\n"
        "    User root\n"
        f"    IdentityFile {sshd.client_key}\n"
        "    ProxyJump gpu-box\n"
        "Host *\n"
        "    User nobody-default\n"
    )


def test_config_alias_resolution(sshd: Any, tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    write_config(cfg, sshd)
    target = resolve("gpu-box", cfg)
    assert (target.hostname, target.port, target.user) == ("127.0.0.1", sshd.port, "root")
    assert target.identity_files == (str(sshd.client_key),)
    assert target.known_hosts_name == f"[127.0.0.1]:{sshd.port}"
    # user and port written in DEST win over the file, as with ssh
    over = resolve("alice@gpu-box:2200", cfg)
    assert (over.user, over.port, over.hostname) == ("alice", 2200, "127.0.0.1")
    # an unknown name keeps its host and falls to the catch-all section
    plain = resolve("other.example", cfg)
    assert (plain.hostname, plain.port, plain.user) == ("other.example", 22, "nobody-default")
    inner = resolve("inner", cfg)
    assert [j.dest for j in inner.jumps] == ["gpu-box"]
    assert inner.jumps[0].port == sshd.port


async def test_connect_by_alias_and_through_proxyjump(sshd: Any, tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    write_config(cfg, sshd)
    opts = sshd.options(use_config=True, config_path=cfg, identity_files=())
    async with SshTransport("gpu-box", opts) as t:
        assert t.host == "gpu-box"
        assert (await t.run(["echo", "alias"])).stdout == b"alias\n"
    async with SshTransport("inner", opts) as t:
        assert (await t.run(["echo", "jumped"])).stdout == b"jumped\n"


async def test_wrong_key_is_an_auth_error_and_closed_port_a_connect_error(
    sshd: Any, tmp_path: Path
) -> None:
    stranger = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)],
                   check=True)
    t = SshTransport(sshd.target().dest, sshd.options(identity_files=(str(stranger),)),
                     target=sshd.target())
    with pytest.raises(AuthError, match="authentication as 'root'"):
        await t.connect()
    await t.close()
    # nothing listening where sshd should be: a connect error naming the address
    nobody = free_port()
    t = SshTransport(f"root@127.0.0.1:{nobody}", sshd.options(),
                     target=sshd.target().__class__("x", "127.0.0.1", nobody, "root"))
    with pytest.raises(TransportError, match=f"cannot connect to 127.0.0.1:{nobody}"):
        await t.connect()
    assert t.state.state == "failed"
    await t.close()


# --------------------------------------------------------------------------- HTTP


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"path={self.path}".encode()
        self.send_response(200 if self.path == "/health" else 503)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[int]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(srv.server_address[1])
    finally:
        srv.shutdown()
        srv.server_close()


async def test_http_through_a_direct_tcpip_channel(sshd: Any, http_server: int) -> None:
    async with sshd.transport() as t:
        async with t.http_client(f"http://127.0.0.1:{http_server}", 5.0) as client:
            resp = await client.get("/health")
            assert (resp.status_code, resp.text) == (200, "path=/health")
            t0 = time.perf_counter()
            for _ in range(20):
                assert (await client.get("/x")).status_code == 503
            per_request = (time.perf_counter() - t0) / 20
        # the warm-up exec removes the Nagle stall (docs/reliability.md): far below it here
        assert per_request < 0.035, per_request
        async with t.http_client(f"http://localhost:{http_server}", 5.0) as client:
            assert (await client.get("/health")).status_code == 200  # "localhost" of the host


async def test_closed_remote_port_is_a_clean_connect_error(sshd: Any) -> None:
    port = free_port()
    async with sshd.transport() as t:
        async with t.http_client(f"http://localhost:{port}", 2.0) as client:
            with pytest.raises(httpx.ConnectError, match=f"localhost:{port}"):
                await client.get("/health")
        poller = HealthPoller(t, f"http://localhost:{port}", interval=0.05, max_polls=2)
        samples = [ev async for ev in poller.events()]
        assert samples and all(isinstance(s, HealthSample) for s in samples)
        assert {s.state for s in samples if isinstance(s, HealthSample)} == {"no_listener"}
        assert (await t.run(["true"])).exit_code == 0  # the connection itself is fine


# --------------------------------------------------------------------------- states


async def test_connection_events_report_loss_and_reconnect(make_sshd: Any) -> None:
    srv = make_sshd()
    t = srv.transport()
    await t.connect()
    source = ConnectionSource(t)
    seen: list[tuple[str, int]] = []
    errors: list[str] = []

    async def collect() -> None:
        async for ev in source.events():
            seen.append((ev.state, ev.attempt))  # type: ignore[union-attr]
            errors.append(ev.error)  # type: ignore[union-attr]

    task = asyncio.create_task(collect())
    await asyncio.sleep(0.05)
    srv.stop()  # sshd gone: reconnects are refused until it is back
    await asyncio.sleep(0.6)
    assert t.state.state == "reconnecting"
    assert t.state.attempt >= 2
    assert "Connection refused" in t.state.error
    with pytest.raises(TransportError, match="reconnecting"):
        await t.run(["true"], timeout=0.2)
    srv.start()
    deadline = time.monotonic() + 8
    while t.state.state != "connected" and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert (await t.run(["echo", "back"])).stdout == b"back\n"
    await t.close()
    await asyncio.wait_for(task, 2)  # the source ends when the transport closes
    states = [s for s, _ in seen]
    assert states[0] == "connected"
    assert states[1] == "reconnecting"
    assert "connected" in states[2:]
    assert states[-1] == "closed"
    attempts = [a for s, a in seen if s == "reconnecting"]
    assert attempts == list(range(1, len(attempts) + 1))


def test_backoff_grows_and_is_capped() -> None:
    delays = [backoff_delay(n) for n in range(1, 12)]
    assert delays[0] == 0.0
    assert delays[1:5] == [0.1, 0.2, 0.4, 0.8]
    assert max(delays) == 5.0
    assert delays == sorted(delays)


def test_proxyjump_chains_none_and_loops(tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    cfg.write_text(
        "Host a\n    HostName 10.0.0.1\n    ProxyJump none\n"
        "Host b\n    HostName 10.0.0.2\n    Port 2200\n    ProxyJump a\n"
        "Host target\n    HostName 10.0.0.9\n    ProxyJump jumper@a:2022,b\n"
        "Host loop\n    ProxyJump loop\n"
    )
    assert resolve("a", cfg).jumps == ()
    target = resolve("target", cfg)
    assert len(target.jumps) == 2
    assert (target.jumps[0].user, target.jumps[0].hostname, target.jumps[0].port) == (
        "jumper", "10.0.0.1", 2022)
    assert (target.jumps[1].hostname, target.jumps[1].port) == ("10.0.0.2", 2200)
    with pytest.raises(DestinationError, match="ProxyJump chain"):
        resolve("loop", cfg)
    assert resolve("a", cfg, use_config=False).hostname == "a"


def test_accept_new_appends_on_a_new_line(tmp_path: Path) -> None:
    import paramiko

    from eagle_tui.transport.ssh.hostkeys import KnownHosts, fingerprint

    kh = tmp_path / "known_hosts"
    # a malformed line and a marker line are skipped, as OpenSSH does; no newline at the end
    kh.write_text("bad.example ssh-ed25519 AAAAnot-base64\n@cert-authority * ssh-ed25519 AAAA")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "k")],
                   check=True)
    key = paramiko.PKey.from_path(str(tmp_path / "k"))
    known = KnownHosts([kh], kh)
    assert known.skipped == 2
    with pytest.raises(HostKeyError, match=fingerprint(key).replace("+", r"\+")):
        known.check("[h]:2", key, accept_new=False)
    assert known.check("[h]:2", key, accept_new=True) is True
    assert known.check("[h]:2", key, accept_new=False) is False
    lines = kh.read_text().splitlines()
    assert len(lines) == 3 and lines[2].startswith("[h]:2 ssh-ed25519 ")
    assert KnownHosts([kh], kh).check("[h]:2", key, accept_new=False) is False


async def test_http_while_the_ssh_link_is_down_is_a_transport_error(
    make_sshd: Any, http_server: int
) -> None:
    """A dead SSH link is not "nothing listening": the health source fails (and is retried)
    instead of reporting the server gone, and the same client works again after the reconnect."""
    srv = make_sshd()
    t = srv.transport()
    async with t, t.http_client(f"http://127.0.0.1:{http_server}", 0.5) as client:
        assert (await client.get("/health")).status_code == 200
        srv.stop()
        with pytest.raises(ConnectionLost):  # "reconnecting (attempt n ...)" or "lost opening"
            await client.get("/health")
        poller = HealthPoller(t, f"http://127.0.0.1:{http_server}", timeout=0.5, max_polls=1)
        with pytest.raises(ConnectionLost):
            async for _ in poller.events():
                pass
        srv.start()
        deadline = time.monotonic() + 8
        while t.state.state != "connected" and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert (await client.get("/health")).status_code == 200
