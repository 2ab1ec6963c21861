"""A real container engine for the tests: Debian's podman (runc, cgroupfs, vfs) and the real
``docker`` CLI through podman's Docker-compatible API socket (tests/realcontainer/podman.sh).

Containers run from a rootfs of read-only bind mounts of this host, so whatever runs here (this
checkout's venv, the simulator, the real SGLang CPU server) runs inside one; they share the host
network, so a server inside listens on the host's 127.0.0.1. Every container a test starts is
named with :data:`PREFIX` and removed at the end of the session (``rm -f`` by name, never by a
broad pattern of someone else's).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "realcontainer" / "podman.sh"
PREFIX = "eagletest-"
_SEQ = count(1)


def _env_exports() -> dict[str, str]:
    """The variables ``podman.sh env`` prints (podman's configs and DOCKER_HOST)."""
    out = subprocess.run(["bash", str(SCRIPT), "env"], capture_output=True, text=True,
                         check=True, timeout=30).stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        for word in shlex.split(line.removeprefix("export ")):
            key, _, value = word.partition("=")
            found[key] = value
    return found


def missing() -> str:
    """Why the container engine cannot be used here ('' when it can)."""
    if shutil.which("podman") is None or not Path("/usr/sbin/runc").exists():
        return "podman/runc not installed (tests/install.sh installs them)"
    if shutil.which("docker") is None:
        return "the docker CLI is not installed (tests/install.sh installs docker.io)"
    return ""


@dataclass
class ContainerEngine:
    """Podman, set up for this session, with the API socket the docker CLI talks to."""

    env: dict[str, str]
    service: subprocess.Popen[bytes] | None = None
    started: list[str] = field(default_factory=list)

    @property
    def socket(self) -> str:
        return self.env["DOCKER_HOST"].removeprefix("unix://")

    def name(self, what: str = "c") -> str:
        """A fresh container name of this session."""
        return f"{PREFIX}{what}-{os.getpid()}-{next(_SEQ)}"

    def mounts(self, *paths: str | Path) -> list[str]:
        """``-v`` options binding this checkout, its venv's base interpreter and ``paths``
        read-only at the same place inside (a venv needs the interpreter it was made from)."""
        base = Path(os.path.realpath(sys.executable)).parents[1]
        seen: list[str] = []
        # sys.prefix: the venv itself, which lives outside a git worktree's checkout
        for p in (ROOT, Path(sys.prefix), base, *paths):
            text = str(p)
            if text not in seen:
                seen.append(text)
        return [opt for p in seen for opt in ("-v", f"{p}:{p}:ro")]

    def run(self, name: str, command: Sequence[str], *, volumes: Sequence[str] = (),
            options: Sequence[str] = ()) -> str:
        """Start ``command`` detached in a container called ``name`` (host network); its id."""
        state = Path(self.env["CONTAINERS_STORAGE_CONF"]).parent
        argv = ["podman", "run", "-d", "--name", name, "--network=host",
                "-v", "/usr:/usr:ro", "-v", "/etc:/etc:ro", *self.mounts(), *volumes, *options,
                "--rootfs", str(state / "rootfs"), *command]
        self.started.append(name)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=self.envs())
        if done.returncode != 0:
            raise RuntimeError(f"podman run failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def sim(self, name: str, port: int, *args: str, options: Sequence[str] = ()) -> str:
        """The simulator in a container, printing its log to stdout as engines there do."""
        return self.run(name, [sys.executable, "-m", "eagle_tui.sim", "--port", str(port),
                               "--gpus", "1", "--log", "/dev/stdout", *args],
                        options=[*options, "-w", str(ROOT), "-e", f"PYTHONPATH={ROOT}"])

    def podman(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["podman", *args], capture_output=True, text=True,
                              timeout=timeout, env=self.envs())

    def docker(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["docker", *args], capture_output=True, text=True,
                              timeout=timeout, env=self.envs())

    def envs(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def remove(self, name: str) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.podman("rm", "-f", "-t", "0", name, timeout=30)

    def close(self) -> None:
        for name in self.started:
            self.remove(name)
        if self.service is not None:
            os.killpg(self.service.pid, 15)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.service.wait(timeout=10)
            sock = Path(self.socket)  # this session's own: nothing left behind
            sock.unlink(missing_ok=True)
            sock.with_suffix(".log").unlink(missing_ok=True)


def start() -> ContainerEngine:
    """Podman configured and its API socket serving (the caller closes it)."""
    env = _env_exports()
    # a socket of this session's own: two sessions at once (helpers on one machine) would
    # otherwise replace and then stop each other's API service
    state = Path(env["CONTAINERS_STORAGE_CONF"]).parent
    env["DOCKER_HOST"] = f"unix://{state}/podman-{os.getpid()}.sock"
    engine = ContainerEngine(env)
    sock = Path(engine.socket)
    sock.unlink(missing_ok=True)
    log = open(sock.with_suffix(".log"), "wb")  # noqa: SIM115 - the service outlives this call
    engine.service = subprocess.Popen(
        ["podman", "system", "service", "--time=0", env["DOCKER_HOST"]], stdout=log,
        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=engine.envs(),
        start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if sock.exists() and engine.docker("version").returncode == 0:
            return engine
        time.sleep(0.1)
    engine.close()
    raise RuntimeError(f"podman's API socket did not answer within 20 s ({sock})")
