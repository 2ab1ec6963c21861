"""The real SGLang 0.5.23 CPU server inside a container (podman, or the docker CLI through
podman's API socket), for the tests of containerized servers.

The server is ``tests/integration/conftest.py``'s (:func:`sglang_server_command`: the same flags
and environment) run from the host's venv, bind-mounted read-only with its base interpreter and
the models; ``--network=host``, so it listens on the host's 127.0.0.1. ``podman run`` uses the
session's rootfs of host bind mounts; ``docker run`` needs an image, so :func:`host_image` makes
an empty one (the same mount points) with ``podman import``. :func:`sglang_container` starts it
(or only names it, for ``eagle-tui launch`` to start) and removes it in any case.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.integration.conftest import (
    SGLANG_STARTUP_LIMIT_S,
    _require_sglang,
    sglang_server_command,
)
from tests.support.containers import PREFIX, ContainerEngine
from tests.support.ports import free_port

IMAGE = f"localhost/{PREFIX}hostfs:1"
CLIS = ("podman", "docker")


def require_root() -> Path:
    """The SGLang venv's root; skipped where absent, failed instead under
    ``EAGLE_TUI_REQUIRE_SGLANG`` (as the bare server's fixtures do)."""
    return _require_sglang()


def _volumes(root: Path) -> list[str]:
    """The venv, its base interpreter's installation and the models, read-only in place."""
    venv = root / "venv"
    base = Path(os.path.realpath(venv / "bin" / "python")).parents[1]
    paths = [str(venv), str(base), str(root / "models")]
    return [w for p in paths for w in ("-v", f"{p}:{p}:ro")]


def host_image(engine: ContainerEngine) -> str:
    """:data:`IMAGE`: an image of the rootfs's empty mount points and ``/bin`` links (made once
    per machine), so ``docker run IMAGE …`` runs the host's programs as ``podman run --rootfs``
    does."""
    if engine.podman("image", "exists", IMAGE).returncode == 0:
        return IMAGE
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for d in ("proc", "sys", "dev", "tmp", "root", "usr", "etc", "opt", "run", "var/tmp"):
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if "tmp" in d else 0o755
            tar.addfile(info)
        for d in ("bin", "sbin", "lib", "lib64"):
            info = tarfile.TarInfo(d)
            info.type, info.linkname = tarfile.SYMTYPE, f"usr/{d}"
            tar.addfile(info)
    done = subprocess.run(["podman", "import", "-", IMAGE], input=buf.getvalue(),
                          capture_output=True, timeout=60, env=engine.envs())
    if done.returncode != 0 and engine.podman("image", "exists", IMAGE).returncode != 0:
        raise RuntimeError(f"podman import failed: {done.stderr.decode(errors='replace')}")
    return IMAGE


def run_words(engine: ContainerEngine, name: str, algorithm: str, port: int, *,
              cli: str = "podman", root: Path | None = None) -> list[str]:
    """``podman run -d …`` (or ``docker run -d …``) of the real SGLang server with
    ``--speculative-algorithm ALGORITHM`` and the EAGLE-3 draft, as a user types it."""
    root = root or require_root()
    argv, env = sglang_server_command(root, algorithm, port)
    where = (["--rootfs", str(Path(engine.env["CONTAINERS_STORAGE_CONF"]).parent / "rootfs")]
             if cli == "podman" else [host_image(engine)])
    return [cli, "run", "-d", "--name", name, "--network=host",
            "-v", "/usr:/usr:ro", "-v", "/etc:/etc:ro", *_volumes(root),
            *[w for k, v in env.items() for w in ("-e", f"{k}={v}")], *where, *argv]


@dataclass
class RealSglangContainer:
    """One real SGLang server in container ``name`` (started or only named)."""

    engine: ContainerEngine
    name: str
    port: int
    algorithm: str
    cli: str
    words: list[str]
    started_at: float = field(default_factory=time.monotonic)
    healthy_after_s: float | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> str:
        """Run :attr:`words` (the container's id); the start-up clock restarts."""
        self.engine.started.append(self.name)  # removed at the session's end in any case
        done = (self.engine.podman if self.cli == "podman" else self.engine.docker)(
            *self.words[1:], timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{self.cli} run failed: {done.stderr.strip()}")
        self.started_at = time.monotonic()
        return done.stdout.strip()

    def status(self) -> str:
        return self.engine.podman("inspect", "--format", "{{.State.Status}}",
                                  self.name).stdout.strip()

    def logs(self, chars: int = 3000) -> str:
        done = self.engine.podman("logs", self.name, timeout=60)
        return (done.stdout + done.stderr)[-chars:]

    def ready(self, within_s: float = SGLANG_STARTUP_LIMIT_S) -> float:
        """Block until /health answers 200 (seconds since the start); fail with the log's
        tail when the container exits or the limit passes."""
        deadline = time.monotonic() + within_s
        with httpx.Client(trust_env=False, timeout=2.0) as client:
            while time.monotonic() < deadline:
                try:
                    if client.get(f"{self.url}/health").status_code == 200:
                        if self.healthy_after_s is None:
                            self.healthy_after_s = time.monotonic() - self.started_at
                        return self.healthy_after_s
                except httpx.HTTPError:
                    pass
                state = self.status()
                if state not in ("running", "created", "configured", "initialized"):
                    pytest.fail(f"the SGLang container {self.name} is {state or 'gone'}:\n"
                                f"{self.logs()}")
                time.sleep(0.5)
        pytest.fail(f"the SGLang container {self.name} was not healthy within "
                    f"{within_s:.0f} s:\n{self.logs()}")

    def remove(self) -> None:
        self.engine.remove(self.name)


@contextmanager
def sglang_container(engine: ContainerEngine, algorithm: str = "EAGLE3", *,
                     cli: str = "podman", start: bool = True,
                     port: int | None = None) -> Iterator[RealSglangContainer]:
    """The real SGLang server in a fresh container of this session (``start=False``: only its
    name and words, for ``eagle-tui launch -- WORDS`` to start); removed on leaving, whatever
    happened."""
    assert cli in CLIS, cli
    root = require_root()
    name, port = engine.name(f"sglang-{algorithm.lower()}"), port or free_port()
    server = RealSglangContainer(engine, name, port, algorithm, cli,
                                 run_words(engine, name, algorithm, port, cli=cli, root=root))
    try:
        if start:
            server.start()
        yield server
    finally:
        server.remove()
