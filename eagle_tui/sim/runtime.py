"""The simulator process: plays a timeline in (compressed) real time, then serves.

It owns a small process tree like the real engines (one stand-in process per scheduler rank or
vLLM worker, so watchers see a tree and GPU compute apps have real pids), a log file written line
by line, the HTTP endpoint, the serving engine and the GPU state file. Every exit path ends the
same way: children killed, GPU memory released in the state file, the log closed, and a work
directory it created itself removed. A crash that SGLang ends with ``kill_process_tree`` ends here
with SIGKILL of the whole tree, so the exit status is the real one (shell 137).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from . import sglang_log, vllm_log
from .engine import ServingEngine
from .gpu import STATE_FILE, GpuModel, install_fake_smi, write_state
from .scenario import ServerConfig, draft_config_json, make_config
from .server import HttpServer
from .steps import Step
from .timeline import build_timeline

GPU_PUBLISH_S = 0.2
DEFAULT_PORTS = {"sglang": 30000, "vllm": 8000}
# A stand-in for a rank process: exits as soon as its parent is gone, so it is never orphaned.
CHILD_CODE = ("import os, signal, sys, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
              "p = os.getppid()\nwhile os.getppid() == p:\n    time.sleep(0.5)\n")


@dataclass(frozen=True, slots=True)
class SimOptions:
    engine: str = "sglang"
    scenario: str = "healthy"
    port: int = 30000
    log_path: Path | None = None
    gpus: int = 8
    speed: float = 1.0
    seed: int = 0
    workdir: Path | None = None
    stats_interval: float = 2.0
    exit_with_parent: bool = False
    draft_path: Path | None = None  # the engine command's draft (default: one in the workdir)
    log_append: bool = False  # append to the log (stdout redirected by `launch`), never truncate
    announce: bool = True  # print the JSON line with pid/port/paths once started
    model_path: str | None = None  # the engine command's model (shown in the log as given)
    engine_version: str = ""  # whose wording the log is in ("": the installed release's)


def prepare_workdir(workdir: Path, engine: str, gpus: int, seed: int) -> dict[str, str]:
    """Create the draft checkpoint config and the fake nvidia-smi; return their paths.

    The demo calls this before starting the simulator so the GPU watcher finds ``nvidia-smi``
    (showing idle GPUs) from its very first sample.
    """
    cfg = make_config(engine, "healthy", gpus=gpus, seed=seed)
    draft = workdir / "draft"
    draft.mkdir(parents=True, exist_ok=True)
    (draft / "config.json").write_text(json.dumps(draft_config_json(cfg.model), indent=2))
    bin_dir = install_fake_smi(workdir, gpus, seed)
    return {"draft": str(draft), "bin": str(bin_dir), "gpu_state": str(workdir / STATE_FILE)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def child_names(engine: str, gpus: int) -> list[str]:
    """The engine's process tree below the main process (argv[-1] of each stand-in)."""
    if engine == "sglang":
        return [f"sglang::scheduler_TP{r}" for r in range(gpus)] + ["sglang::detokenizer"]
    return ["VLLM::EngineCore"] + [f"VLLM::Worker_TP{r}" for r in range(gpus)]


@dataclass
class _Live:
    """What exists once the launch has started (absent while only the workdir exists)."""

    cfg: ServerConfig
    gpu: GpuModel
    gpu_state: Path
    engine: ServingEngine
    server: HttpServer


class Simulator:
    def __init__(self, opts: SimOptions) -> None:
        if opts.speed <= 0:
            raise ValueError(f"--speed must be positive (got {opts.speed})")
        self.opts = opts
        self._own_workdir = opts.workdir is None
        self.workdir = opts.workdir or Path(tempfile.mkdtemp(prefix="eagle-sim-"))
        self._children: list[subprocess.Popen[bytes]] = []
        self._log_file: IO[bytes] | None = None
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._anchor = (time.monotonic(), 0.0, opts.speed)  # (wall, sim seconds, rate)
        self._t0 = time.time()
        self._live: _Live | None = None

    # ------------------------------------------------------------------ clock and log
    def sim_seconds(self) -> float:
        wall, sim, rate = self._anchor
        return sim + (time.monotonic() - wall) * rate

    def epoch(self) -> float:
        """The simulated wall clock the log's timestamps follow."""
        return self._t0 + self.sim_seconds()

    def write(self, lines: list[str]) -> None:
        if self._log_file is not None and lines:
            self._log_file.write("".join(f"{line}\n" for line in lines).encode("utf-8"))

    # ------------------------------------------------------------------ main
    async def run(self) -> int:
        try:
            paths = prepare_workdir(self.workdir, self.opts.engine, self.opts.gpus,
                                    self.opts.seed)
            live = self._start(paths)
            return await self._play(live)
        finally:
            self._cleanup()

    def _start(self, paths: dict[str, str]) -> _Live:
        o = self.opts
        # bad names fail before forking
        make_config(o.engine, o.scenario, gpus=o.gpus, engine_version=o.engine_version)
        port = o.port or free_port()
        for name in child_names(o.engine, o.gpus):
            self._children.append(subprocess.Popen(
                [sys.executable, "-S", "-c", CHILD_CODE, name], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        pids = tuple(p.pid for p in self._children)
        draft = str(o.draft_path) if o.draft_path is not None else paths["draft"]
        cfg = make_config(o.engine, o.scenario, gpus=o.gpus, port=port, draft_path=draft,
                          seed=o.seed, t0=self._t0, main_pid=os.getpid(), child_pids=pids,
                          stats_interval_s=o.stats_interval, engine_version=o.engine_version)
        if o.model_path:
            cfg = dataclasses.replace(cfg, model=dataclasses.replace(cfg.model,
                                                                     path=o.model_path))
        log_path = o.log_path or self.workdir / "server.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        mode = "ab" if o.log_append else "wb"
        self._log_file = open(log_path, mode, buffering=0)  # noqa: SIM115 - closed in cleanup
        gpu_pids = pids[:o.gpus] if o.engine == "sglang" else pids[1:o.gpus + 1]
        engine = ServingEngine(cfg, self.write, self.epoch)
        self._live = live = _Live(cfg, GpuModel(o.gpus, o.seed, gpu_pids),
                                  Path(paths["gpu_state"]), engine,
                                  HttpServer(engine, self.write, self.epoch, o.speed))
        if o.announce:
            print(json.dumps({"pid": os.getpid(), "port": port, "log": str(log_path),
                              "workdir": str(self.workdir), **paths}), flush=True)
        return live

    async def _play(self, live: _Live) -> int:
        o = self.opts
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._stop.set)
        self._tasks = [asyncio.create_task(live.engine.run()),
                       asyncio.create_task(self._publish_gpus(live))]
        if o.exit_with_parent:
            self._tasks.append(asyncio.create_task(self._watch_parent(os.getppid())))
        self._anchor = (time.monotonic(), 0.0, o.speed)
        for step in build_timeline(live.cfg).steps:
            wait = step.at - self.sim_seconds()
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), wait / o.speed)
            if self._stop.is_set():
                return await self._shutdown(live)
            code = await self._apply(live, step)
            if code is not None:
                return code
        await self._stop.wait()
        return await self._shutdown(live)

    async def _apply(self, live: _Live, step: Step) -> int | None:
        self.write(list(step.lines))
        if step.label:
            live.gpu.set_label(step.label)
        if step.mem_gib is not None:
            live.gpu.set_memory(step.mem_gib)
        try:
            if step.http == "bind":
                live.server.bind()
            elif step.http == "serve":
                await live.server.serve()
        except OSError as e:
            return self._bind_failed(live.cfg, e)
        if step.startup is not None:
            live.engine.startup_time = step.startup
        if step.ready:
            live.server.ready = True
        if step.serve:
            self._anchor = (time.monotonic(), self.sim_seconds(), 1.0)  # serving is real time
            live.engine.start_serving()
            if live.cfg.engine == "vllm":
                self._tasks.append(asyncio.create_task(live.engine.run_vllm_stats()))
        if step.exit_code is None:
            return None
        await self._stop_serving(live)
        if step.kill:
            self._cleanup()
            os.kill(os.getpid(), signal.SIGKILL)
        return step.exit_code

    def _bind_failed(self, cfg: ServerConfig, err: OSError) -> int:
        """The port really is taken (not a scenario): report it the way the engine would."""
        text = f"[Errno {err.errno}] {err.strerror}"
        if cfg.engine == "sglang":
            self.write([f"{sglang_log.prefix(self.epoch(), None, 1)}ERROR:    [Errno {err.errno}] "
                        f"error while attempting to bind on address ('{cfg.host}', {cfg.port}): "
                        f"{(err.strerror or '').lower()}"])
        else:
            self.write([f"(APIServer pid={cfg.main_pid}) OSError: {text}"])
        print(f"eagle_tui.sim: cannot listen on {cfg.host}:{cfg.port}: {text}", file=sys.stderr)
        return 1

    async def _shutdown(self, live: _Live) -> int:
        """SIGTERM/SIGINT: the engine's shutdown lines, then a clean exit."""
        mod = sglang_log if live.cfg.engine == "sglang" else vllm_log
        self.write(mod.shutdown_lines(live.cfg, self.epoch()))
        await self._stop_serving(live)
        return 0

    async def _stop_serving(self, live: _Live) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        await live.server.close()

    async def _watch_parent(self, parent: int) -> None:
        """A watcher that dies without cleaning up must not leave a server running."""
        while os.getppid() == parent:
            await asyncio.sleep(0.5)
        self._stop.set()

    async def _publish_gpus(self, live: _Live) -> None:
        while True:
            write_state(live.gpu_state, live.gpu.sample(len(live.engine.running)))
            await asyncio.sleep(GPU_PUBLISH_S)

    def _cleanup(self) -> None:
        """Idempotent: runs on every exit path (and before a deliberate SIGKILL)."""
        for child in self._children:
            with contextlib.suppress(OSError):
                child.kill()
        for child in self._children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=2)
        self._children = []
        if self._live is not None:
            self._live.gpu.release()
            with contextlib.suppress(OSError):
                write_state(self._live.gpu_state, self._live.gpu.sample())
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


def run(opts: SimOptions) -> int:
    return asyncio.run(Simulator(opts).run())
