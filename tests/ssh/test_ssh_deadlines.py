"""Every SSH handshake phase has a deadline inside the command's own timeout.

Three loopback servers that are not sshd: one accepts TCP and never sends a banner, one sends a
banner and then stalls (the key exchange never finishes), one (paramiko's server side) completes
the key exchange and then never answers the authentication request. ``wait --timeout T``
answers within about T (exit 3, or 2 with a one-line reason; never 70), ``watch --duration T``
ends on time, ``lint --ssh`` exits 2 naming the phase. Bounds are ratios of T, not fixed timings.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eagle_tui.transport.base import TransportError
from eagle_tui.transport.ssh.link import Attempt

EAGLE_TUI = [sys.executable, "-m", "eagle_tui"]
T = 4.0


@contextlib.contextmanager
def stalling_server(banner: bool) -> Iterator[int]:
    """A TCP server on 127.0.0.1 that holds every connection open and says nothing more than
    (with ``banner``) an SSH identification line."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.1)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            if banner:
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
            held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(srv.getsockname()[1])
    finally:
        stop.set()
        thread.join(2)
        for conn in held:
            conn.close()
        srv.close()


@contextlib.contextmanager
def auth_stalling_server(tmp_path: Path) -> Iterator[int]:
    """A real SSH server (paramiko) that finishes the key exchange, then holds every
    authentication request unanswered; its host key is written to ``known_hosts``."""
    import paramiko

    host_key = tmp_path / "host_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)],
                   check=True, stdin=subprocess.DEVNULL)
    key = paramiko.Ed25519Key.from_private_key_file(str(host_key))
    release = threading.Event()

    class Stall(paramiko.ServerInterface):
        def get_allowed_auths(self, username: str) -> str:
            return "publickey"

        def check_auth_publickey(self, username: str, key: object) -> int:
            release.wait(60)  # the server's auth thread stalls here
            return paramiko.AUTH_FAILED

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.1)
    port = int(srv.getsockname()[1])
    (tmp_path / "known_hosts").write_text(
        f"[127.0.0.1]:{port} {key.get_name()} {key.get_base64()}\n")
    transports: list[paramiko.Transport] = []

    def serve() -> None:
        while not release.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            t = paramiko.Transport(conn)
            t.add_server_key(key)
            t.start_server(server=Stall())
            transports.append(t)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        release.set()
        thread.join(2)
        for t in transports:
            t.close()
        srv.close()


def run_cli(args: list[str], tmp_path: Path, port: int) -> tuple[int, str, float]:
    (tmp_path / "known_hosts").touch()
    key = tmp_path / "id_ed25519"
    if not key.exists():
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                       check=True, stdin=subprocess.DEVNULL)
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    env["HOME"] = str(tmp_path)
    ssh = ["--ssh", f"root@127.0.0.1:{port}", "--identity", str(key),
           "--known-hosts", str(tmp_path / "known_hosts")]
    t0 = time.monotonic()
    p = subprocess.run([*EAGLE_TUI, *args[:1], *ssh, *args[1:]], capture_output=True,
                       text=True, timeout=120, env=env)
    return p.returncode, p.stderr, time.monotonic() - t0


@pytest.mark.sshd
@pytest.mark.parametrize("banner", [False, True], ids=["no-banner", "stalled-kex"])
def test_wait_and_watch_end_within_their_own_timeout(tmp_path: Path, banner: bool) -> None:
    phase = "key exchange did not finish" if banner else "no SSH banner"
    with stalling_server(banner) as port:
        rc, err, took = run_cli(["wait", "--log", "/x.log", "--timeout", str(T)], tmp_path, port)
        assert rc in (2, 3), err
        assert "internal error" not in err and phase in err, err
        assert took < 2 * T, took  # T plus start-up; the old 10 s per phase would be > 2.5 T
        rc, err, took = run_cli(["watch", "--log", "/x.log", "--duration", str(T),
                                 "--headless"], tmp_path, port)
        assert rc == 0 and phase in err, err
        assert took < 2 * T, took


@pytest.mark.sshd
def test_a_server_that_stalls_in_authentication(tmp_path: Path) -> None:
    with auth_stalling_server(tmp_path) as port:
        rc, err, took = run_cli(["wait", "--log", "/x.log", "--timeout", str(T)], tmp_path, port)
    assert rc in (2, 3), err
    assert "internal error" not in err and "SSH authentication as 'root'" in err, err
    assert f"no answer within {T:g} s" in err, err
    assert took < 2 * T, took


@pytest.mark.sshd
def test_lint_names_the_stalled_phase_and_exits_2(tmp_path: Path) -> None:
    with stalling_server(banner=True) as port:
        rc, err, _ = run_cli(["lint", "--", "python", "-m", "sglang.launch_server",
                              "--model-path", "x"], tmp_path, port)
    assert rc == 2, err
    assert err.count("\n") == 1 and "key exchange did not finish within 10 s" in err, err


def test_an_attempt_names_its_phase_and_cancel_closes_what_it_holds() -> None:
    attempt = Attempt(60)
    assert 59 < attempt.left("tcp") <= 60
    closed: list[str] = []

    class Thing:
        def __init__(self, name: str) -> None:
            self.name = name

        def close(self) -> None:
            closed.append(self.name)

    attempt.hold(Thing("socket"))
    attempt.cancel()
    assert closed == ["socket"]
    attempt.hold(Thing("late transport"))  # opened after the cancel: closed at once
    assert closed == ["socket", "late transport"]
    with pytest.raises(TransportError, match="banner: the connection attempt was closed"):
        attempt.left("banner")
    with pytest.raises(TransportError, match="auth: no answer within 0 s"):
        Attempt(0).left("auth")
