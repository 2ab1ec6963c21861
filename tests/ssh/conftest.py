"""A real, private OpenSSH sshd on 127.0.0.1 for the SSH tests.

``sshd`` is one daemon for the whole session (cheap tests share it); ``make_sshd`` starts a fresh
one for a test that kills, restarts or freezes it. Each daemon has its own host key, client key,
``authorized_keys`` and a ``known_hosts`` that trusts it, all in a private temp dir, and listens
on a free port of 127.0.0.1 only.

The tests are skipped only when ``/usr/sbin/sshd`` is missing *and* ``EAGLE_TUI_REQUIRE_SSHD``
is unset (the README's test command sets it, so CI fails instead of skipping).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from eagle_tui.transport.ssh import SshOptions, SshTransport
from eagle_tui.transport.ssh.config import SshTarget

SSHD = os.environ.get("EAGLE_TUI_SSHD", "/usr/sbin/sshd")
SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"



def _require_sshd() -> None:
    if os.path.exists(SSHD) and os.path.exists(SSH_KEYGEN):
        return
    if os.environ.get("EAGLE_TUI_REQUIRE_SSHD"):
        pytest.fail(f"EAGLE_TUI_REQUIRE_SSHD is set but {SSHD} / ssh-keygen is missing")
    pytest.skip(f"{SSHD} not installed (apt-get install openssh-server)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "eagle-tui-test", "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
    )


@dataclass
class Sshd:
    """One private sshd; the helpers inject the faults the reconnect tests need."""

    dir: Path
    port: int
    proc: subprocess.Popen[bytes] | None = None
    frozen: list[int] = field(default_factory=list)
    setenv: dict[str, str] = field(default_factory=dict)

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    @property
    def client_key(self) -> Path:
        return self.dir / "client_ed25519"

    @property
    def host_pub(self) -> str:
        return (self.dir / "host_ed25519.pub").read_text().split()[1]

    def write_config(self) -> None:
        d = self.dir
        (d / "sshd_config").write_text(
            f"Port {self.port}\n"
            "ListenAddress 127.0.0.1\n"
            f"HostKey {d}/host_ed25519\n"
            f"PidFile {d}/sshd.pid\n"
            f"AuthorizedKeysFile {d}/authorized_keys\n"
            "StrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "AllowTcpForwarding yes\nClientAliveInterval 15\n"
            "SetEnv SHLVL=1" + "".join(f" {k}={v}" for k, v in self.setenv.items()) + "\n"
        )

    def start(self) -> None:
        Path("/run/sshd").mkdir(exist_ok=True)  # without it sshd exits 255
        self.proc = subprocess.Popen(
            [SSHD, "-D", "-f", str(self.dir / "sshd_config"), "-E", str(self.dir / "sshd.log")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = (self.dir / "sshd.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"sshd exited with {self.proc.returncode}: {log}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    if s.recv(4).startswith(b"SSH-"):
                        return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("sshd did not start within 10 s")

    def sessions(self) -> list[psutil.Process]:
        """The per-connection sshd processes (children of the listener)."""
        if self.proc is None:
            return []
        try:
            return psutil.Process(self.proc.pid).children()
        except psutil.NoSuchProcess:
            return []

    def _tree(self, proc: psutil.Process) -> list[psutil.Process]:
        try:
            return [proc, *proc.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def kill_sessions(self) -> int:
        """SIGKILL every connection's sshd processes: the client sees EOF at once."""
        n = 0
        for sess in self.sessions():
            for p in self._tree(sess):
                try:
                    if p.name().startswith("sshd"):
                        p.kill()
                        n += 1
                except psutil.NoSuchProcess:
                    pass
        return n

    def freeze_sessions(self) -> int:
        """SIGSTOP every connection (sshd and what runs under it): a hung host."""
        n = 0
        for sess in self.sessions():
            for p in self._tree(sess):
                try:
                    p.send_signal(signal.SIGSTOP)
                    self.frozen.append(p.pid)
                    n += 1
                except psutil.NoSuchProcess:
                    pass
        return n

    def thaw_and_kill_frozen(self) -> None:
        for pid in self.frozen:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.frozen.clear()

    def stop(self) -> None:
        """Stop the listener and every session (like a host's sshd restart that drops sessions)."""
        self.thaw_and_kill_frozen()
        sessions = self.sessions()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        for sess in sessions:
            for p in self._tree(sess):
                try:
                    p.kill()
                except psutil.NoSuchProcess:
                    pass
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def target(self, user: str = "root") -> SshTarget:
        return SshTarget(
            dest=f"{user}@127.0.0.1:{self.port}",
            hostname="127.0.0.1",
            port=self.port,
            user=user,
        )

    def options(self, **kw: object) -> SshOptions:
        """Options that use only this daemon's files (never the real ~/.ssh or an agent)."""
        base: dict[str, object] = {
            "identity_files": (str(self.client_key),),
            "known_hosts_files": (self.known_hosts,),
            "use_config": False,
            "user_known_hosts": False,
            "use_agent": False,
            "default_identities": False,
        }
        base.update(kw)
        return SshOptions(**base)  # type: ignore[arg-type]

    def transport(self, **kw: object) -> SshTransport:
        return SshTransport(f"root@127.0.0.1:{self.port}", self.options(**kw), target=self.target())

    def cli_args(self) -> list[str]:
        return [
            "--ssh",
            f"root@127.0.0.1:{self.port}",
            "--identity",
            str(self.client_key),
            "--known-hosts",
            str(self.known_hosts),
        ]


# What a noisy login shell prints for every exec, the way conda's, module's or a .bashrc's lines
# arrive: bash reads $BASH_ENV for a non-interactive ``bash -c`` (sshd runs every command so),
# on both streams, with text shaped like the framing's markers, and again from an exit trap.
NOISE_RC = r"""echo "conda: (base) environment activated"
echo "Lmod: loaded cuda/12.4 (module noise on stderr)" >&2
printf 'EAGLE-00000000000000000000000000000000-BEGIN\nEAGLE-'
printf 'EAGLE-ffffffffffffffffffffffffffffffff-END 0\n' >&2
printf '\033]0;retitled\007 no newline at the end'
trap 'echo "bye from the exit trap"; echo "bye on stderr" >&2' EXIT
"""


def new_sshd(base: Path, setenv: dict[str, str] | None = None, noisy: bool = False) -> Sshd:
    d = Path(tempfile.mkdtemp(prefix="sshd-", dir=base))
    d.chmod(0o700)
    if noisy:
        (d / "noise.rc").write_text(NOISE_RC)
        setenv = {**(setenv or {}), "BASH_ENV": str(d / "noise.rc")}
    _keygen(d / "host_ed25519")
    _keygen(d / "client_ed25519")
    shutil.copy(d / "client_ed25519.pub", d / "authorized_keys")
    (d / "authorized_keys").chmod(0o600)
    srv = Sshd(dir=d, port=free_port(), setenv=dict(setenv or {}))
    pub = (d / "host_ed25519.pub").read_text().split()
    srv.known_hosts.write_text(f"[127.0.0.1]:{srv.port} {pub[0]} {pub[1]}\n")
    srv.write_config()
    srv.start()
    return srv


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    _require_sshd()
    srv = new_sshd(tmp_path_factory.mktemp("sshd"))
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def make_sshd(tmp_path: Path) -> Iterator[Callable[..., Sshd]]:
    _require_sshd()
    started: list[Sshd] = []

    def make(setenv: dict[str, str] | None = None, noisy: bool = False) -> Sshd:
        """A fresh sshd; ``setenv`` adds environment for its sessions (e.g. a PATH);
        ``noisy``: its login shell prints :data:`NOISE_RC`'s lines around every command."""
        srv = new_sshd(tmp_path, setenv, noisy)
        started.append(srv)
        return srv

    try:
        yield make
    finally:
        for srv in started:
            srv.stop()
