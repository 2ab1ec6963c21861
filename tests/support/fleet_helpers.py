"""A real Prometheus (Debian's ``/usr/bin/prometheus``) on 127.0.0.1 for the fleet tests.

Started with a generated config (scrape every second, so a test waits seconds, not minutes),
its TSDB in a temporary directory, on a free port; stopped by pid. Shared by the integration
tests (one start per session) and ``benchmarks/bench_fleet.py``. Also: a load generator that
keeps a simulator busy (one thread, bounded requests), so its counters move.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support import ports
from tests.support.procs import end_process

PROMETHEUS = "/usr/bin/prometheus"


def free_port() -> int:
    return ports.free_port()  # (outside the ephemeral range: tests/support/ports.py)


def prometheus_available() -> bool:
    return Path(PROMETHEUS).is_file() or shutil.which("prometheus") is not None


def write_config(path: Path, targets: Sequence[str], *, job: str = "llm",
                 interval: str = "1s", honor_labels: bool = False,
                 file_sd: Path | None = None) -> None:
    """A scrape config: static ``targets`` and/or a ``file_sd`` file (re-read every second)."""
    lines = ["global:", f"  scrape_interval: {interval}", f"  evaluation_interval: {interval}",
             "scrape_configs:", f"  - job_name: {job}", f"    scrape_timeout: {interval}",
             f"    honor_labels: {'true' if honor_labels else 'false'}"]
    if targets:
        lines += ["    static_configs:", "      - targets: [" +
                  ", ".join(f'"{t}"' for t in targets) + "]"]
    if file_sd is not None:
        lines += ["    file_sd_configs:", f"      - files: ['{file_sd}']",
                  "        refresh_interval: 1s"]
    path.write_text("\n".join(lines) + "\n")


@dataclass
class PrometheusServer:
    workdir: Path
    config: Path
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, within_s: float = 30.0) -> None:
        self.port = self.port or free_port()
        log = (self.workdir / "prometheus.log").open("ab")
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={self.config}",
             f"--storage.tsdb.path={self.workdir / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn",
             "--storage.tsdb.retention.time=1h"],
            stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"prometheus exited: {self.log_tail()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/-/ready", timeout=1.0, trust_env=False).is_success:
                    return
            time.sleep(0.1)
        raise AssertionError(f"prometheus not ready within {within_s} s: {self.log_tail()}")

    def log_tail(self) -> str:
        p = self.workdir / "prometheus.log"
        return p.read_text(errors="replace")[-2000:] if p.exists() else ""

    def stop(self) -> None:
        if self.proc is not None:
            end_process(self.proc)

    def query(self, expr: str) -> list[dict[str, object]]:
        r = httpx.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=5.0,
                      trust_env=False)
        r.raise_for_status()
        result: list[dict[str, object]] = r.json()["data"]["result"]
        return result

    def wait_for(self, expr: str, n: int = 1, within_s: float = 30.0) -> list[dict[str, object]]:
        """Poll ``expr`` until it has ``n`` series (bounded)."""
        deadline = time.monotonic() + within_s
        result: list[dict[str, object]] = []
        while time.monotonic() < deadline:
            result = self.query(expr)
            if len(result) >= n:
                return result
            time.sleep(0.25)
        raise AssertionError(f"{expr!r}: {len(result)} series after {within_s} s, wanted {n}")


@contextlib.contextmanager
def running_prometheus(workdir: Path, targets: Sequence[str], **kw: object) -> Iterator[
        PrometheusServer]:
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    write_config(config, targets, **kw)  # type: ignore[arg-type]
    server = PrometheusServer(workdir, config)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@dataclass
class Load:
    """Keeps ``urls`` busy: ``per_url`` concurrent completions each, until stopped."""

    urls: Sequence[str]
    per_url: int = 2
    max_tokens: int = 48
    stop_event: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    errors: int = 0

    model: str | None = None  # vLLM's served name, when it wants one
    native_sglang: bool = False  # SGLang's /generate instead of /v1/completions

    def _request(self) -> tuple[str, dict[str, object]]:
        if self.native_sglang:
            return "/generate", {"text": "hello " * 16,
                                 "sampling_params": {"max_new_tokens": self.max_tokens,
                                                     "temperature": 0}}
        body: dict[str, object] = {"prompt": "hello " * 16, "max_tokens": self.max_tokens}
        if self.model:
            body["model"] = self.model
        return "/v1/completions", body

    def _run(self, url: str) -> None:
        path, body = self._request()
        with httpx.Client(timeout=120.0, trust_env=False) as client:
            while not self.stop_event.is_set():
                try:
                    if client.post(f"{url}{path}", json=body).status_code != 200:
                        self.errors += 1
                        self.stop_event.wait(0.5)
                except httpx.HTTPError:
                    self.errors += 1
                    self.stop_event.wait(0.5)

    def start(self) -> Load:
        for url in self.urls:
            for _ in range(self.per_url):
                t = threading.Thread(target=self._run, args=(url,), daemon=True)
                t.start()
                self.threads.append(t)
        return self

    def stop(self) -> None:
        self.stop_event.set()
        for t in self.threads:
            t.join(timeout=125)


@dataclass
class Sim:
    """One simulator process (its own process group), serving /metrics in its engine's names."""

    engine: str
    scenario: str
    proc: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)


def start_sim(workdir: Path, engine: str, scenario: str = "healthy", *,
              speed: float = 200.0, env: dict[str, str] | None = None) -> Sim:
    """Start a simulator on a free port; returns once it printed its port (not yet serving)."""
    workdir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "eagle_tui.sim", "--engine", engine, "--scenario", scenario,
         "--port", "0", "--gpus", "1", "--speed", str(speed), "--workdir", str(workdir),
         "--log", str(workdir / "server.log"), "--exit-with-parent"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, **env} if env else None)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=5)
        raise AssertionError(f"simulator {engine}/{scenario} did not start")
    return Sim(engine, scenario, proc, int(json.loads(line)["port"]))


def wait_serving(url: str, within_s: float = 60.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/health", timeout=1.0, trust_env=False).status_code == 200:
                return
        time.sleep(0.1)
    raise AssertionError(f"{url} not healthy within {within_s} s")
