"""``eagle-tui demo``: a simulated launch from nothing to serving, watched like a real server.

The simulator (:mod:`eagle_tui.sim`) runs as a child process in its own process group; the
demo's :class:`~eagle_tui.assembly.spec.DashboardSpec` points at its log, URL, process and
draft config, and it is opened by :func:`~eagle_tui.assembly.open.open_dashboard` like
``watch``'s. On a terminal the simulated server is launched instead, as ``eagle-tui launch``
would start a real one (``commands/demo_launch.py``), so ``K``/``R``/``E`` work on it. With
``--headless`` or without a TTY it behaves like ``wait`` (progress lines, a diagnosis on a
crash) and then prints live metrics for a few seconds.

Exit: 0 when the server served (healthy or misconfigured, whose alerts are printed), 1 with the
diagnosis when it crashed, 3 on a startup timeout, 2 on bad options. Every exit path cleans up
(docs/architecture.md, "Module notes", says what).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from eagle_tui.assembly.open import Presenter, open_dashboard, wants_dashboard
from eagle_tui.assembly.spec import DashboardSpec, check_sources
from eagle_tui.commands import argtypes
from eagle_tui.commands.bench import run_bench
from eagle_tui.commands.demo_load import LOAD_MAX_TOKENS, LOAD_REQUESTS
from eagle_tui.console import fail, say
from eagle_tui.errors import UsageError
from eagle_tui.headless.lines import clean as clean_text
from eagle_tui.headless.progress import (
    EXIT_READY,
    EXIT_USAGE,
    ProgressPrinter,
    Watched,
    finish_verdict,
)
from eagle_tui.model.boundary.termtext import inert_lines
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views import figures
from eagle_tui.model.views.tiertext import tier_text
from eagle_tui.sim.runtime import free_port, prepare_workdir
from eagle_tui.sim.scenario import BASELINE_TOK_S, ENGINE_VERSIONS, SCENARIOS, make_config
from eagle_tui.sim.standins import ENGINES as SIM_ENGINES
from eagle_tui.sim.timeline import build_timeline

DEFAULT_SPEED = 7.0  # a healthy launch plays out in well under a minute: a demo, not a wait
STOP_GRACE_S = 3.0


class DemoServer:
    """The simulator child and its temporary directory; ``close()`` is idempotent."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="eagle-tui-demo-"))
        self.log = self.tmp / "server.log"
        self.port = args.port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._old_path: str | None = None

    def start(self) -> None:
        a = self.args
        paths = prepare_workdir(self.tmp, a.engine, a.gpus, a.seed)
        self.draft = paths["draft"]
        self._old_path = os.environ.get("PATH", "")
        os.environ["PATH"] = paths["bin"] + os.pathsep + self._old_path
        argv = [sys.executable, "-m", "eagle_tui.sim", "--engine", a.engine, "--scenario",
                a.scenario, "--port", str(self.port), "--log", str(self.log), "--gpus",
                str(a.gpus), "--speed", str(a.speed), "--seed", str(a.seed), "--workdir",
                str(self.tmp), "--exit-with-parent", "--engine-version", a.engine_version]
        with open(self.tmp / "sim.out", "wb") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def spec(self) -> DashboardSpec:
        """What the demo watches: the simulator, exactly as ``watch`` would be told to."""
        a = self.args
        return check_sources(DashboardSpec(
            log=str(self.log), url=self.url, pid=self.proc.pid if self.proc else None,
            record=a.record, baseline=BASELINE_TOK_S, draft_config=self.draft, gpu="smi",
            headless=a.headless, health_interval=0.5, label=f"demo: {a.engine} {a.scenario}",
            command="demo"))

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
            # whatever is left of the group (the leader or stand-ins it did not reap)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=STOP_GRACE_S)
        if self._old_path is not None:
            os.environ["PATH"] = self._old_path
            self._old_path = None
        shutil.rmtree(self.tmp, ignore_errors=True)


@contextlib.contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """SIGTERM/SIGHUP raise SystemExit(128+n) so ``finally`` blocks clean up as on Ctrl-C."""
    def handler(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


# --------------------------------------------------------------------------- headless


def live_line(state: DashboardState, seconds: float) -> str:
    parts: list[str] = []
    tps, base = figures.tok_s(state).value, state.metrics.baseline_tok_s
    if tps is None:
        parts.append("tok/s -")
    elif base:
        parts.append(f"tok/s {tps:.1f} ({tps / base:.2f}x the {base:g} tok/s baseline)")
    else:
        parts.append(f"tok/s {tps:.1f}")
    accept = figures.accept_len(state).value
    parts.append(f"accept len {accept:.2f}" if accept is not None else "accept len -")
    if (tiers := tier_text(state)) is not None:  # the active tier, the DP ranks
        parts.append(tiers)
    if state.config.hidden_dims:
        parts.append(f"hidden dim {state.config.hidden_dims[-1]}")
    if state.stats.running is not None:
        parts.append(f"running {state.stats.running}")
    gpus = state.gpu.sample.gpus if state.gpu.sample else ()
    utils = [g.util_gpu for g in gpus if g.util_gpu is not None]
    if utils:
        parts.append(f"{len(gpus)} GPUs util {sum(utils) / len(utils):.0f}%")
    alerts = [a.kind for a in state.alerts if a.severity != "info"]
    parts.append("alerts: " + (", ".join(alerts) if alerts else "none"))
    return f"[live {seconds:4.1f}s] " + " | ".join(parts)


async def _wait_ready(session: Watched, runner: asyncio.Task[Any], out: TextIO,
                      timeout: float) -> int:
    """``wait``'s behaviour: progress lines, then READY or the crash diagnosis; its exit code."""
    progress = ProgressPrinter(out, as_json=False, has_url=True)
    unsubscribe = session.subscribe(progress.on_batch)
    waiter = asyncio.create_task(progress.wait_decided())
    try:
        done, _ = await asyncio.wait({runner, waiter}, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        unsubscribe()
        waiter.cancel()
    return finish_verdict(progress, session.state, sources_ended=runner in done,
                          timeout=timeout)


async def _live(session: Watched, url: str, duration: float, out: TextIO) -> None:
    """Drive the built-in load and print a metrics line every second for ``duration`` s."""
    load = asyncio.create_task(run_bench(url, concurrency=1, requests=LOAD_REQUESTS,
                                         max_tokens=LOAD_MAX_TOKENS, timeout=duration + 30))
    say(inert_lines(f"driving a small load (1 stream, {LOAD_MAX_TOKENS} tokens per request); "
                    f"live metrics for {duration:g} s:"), out)
    try:
        loop = asyncio.get_running_loop()
        start = loop.time()
        while (elapsed := loop.time() - start) < duration:
            await asyncio.sleep(min(1.0, duration - elapsed))
            say(inert_lines(live_line(session.state, loop.time() - start)), out)
            out.flush()
    finally:
        load.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await load
    alerts = [a for a in session.state.alerts if a.severity != "info"]
    for a in alerts:
        say(inert_lines(f"ALERT {a.severity}: {clean_text(a.message)}"), out)
    if not alerts:
        say(inert_lines("no alerts: speculative decoding is paying off"), out)


def headless_presenter(server: DemoServer, args: argparse.Namespace) -> Presenter:
    """``wait``'s answer, then (once serving) live metrics under the demo's own load."""

    async def present(session: Watched, runner: asyncio.Task[DashboardState],
                      out: TextIO) -> int:
        code = await _wait_ready(session, runner, out, args.timeout)
        if code == EXIT_READY:
            await _live(session, server.url, args.duration, out)
        return code

    return present


# --------------------------------------------------------------------------- dashboard


# --------------------------------------------------------------------------- command line


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "demo", help="watch a simulated speculative-decoding server start and serve (no GPU)",
        description="Launch a built-in simulated SGLang/vLLM server (real log format, HTTP, "
        "fake nvidia-smi) and watch it exactly like a real one. Scenarios: "
        + "; ".join(f"{s.name}: {s.summary}" for s in SCENARIOS.values()))
    p.add_argument("--scenario", choices=tuple(SCENARIOS), default="healthy")
    p.add_argument("--engine", choices=SIM_ENGINES, default=SIM_ENGINES[0])
    p.add_argument("--speed", type=argtypes.rate, default=DEFAULT_SPEED,
                   help=f"startup time compression (default {DEFAULT_SPEED:g}: ~20 s)")
    p.add_argument("--headless", action="store_true",
                   help="print progress and live metrics instead of the dashboard (the default "
                   "without a TTY)")
    p.add_argument("--duration", type=argtypes.seconds, default=6.0,
                   help="headless: seconds of live metrics once serving (default 6)")
    p.add_argument("--timeout", type=argtypes.seconds, default=None,
                   help="give up if the server has not answered after this long (default: from "
                   "the scenario and --speed)")
    p.add_argument("--gpus", type=argtypes.whole(1, 64), default=8,
                   help="simulated GPUs (default 8)")
    p.add_argument("--engine-version", default="",
                   help="the simulated engine prints this release's wording: "
                   + "; ".join(f"{e}: {', '.join(v)}" for e, v in ENGINE_VERSIONS.items())
                   + " (default: the installed release's, the first)")
    p.add_argument("--seed", type=argtypes.seed, default=0)
    p.add_argument("--port", type=argtypes.port_or_any, default=0,
                   help="simulator port (default: any free one)")
    p.add_argument("--record", type=argtypes.output_file, default=None,
                   help="record the session to FILE")
    p.set_defaults(func=run)


def _validate(args: argparse.Namespace) -> None:
    if not args.speed > 0:
        raise UsageError("--speed must be > 0")
    if not args.duration > 0:
        raise UsageError("--duration must be > 0")
    if not 0 <= args.port <= 65535:
        raise UsageError("--port must be between 0 and 65535")
    # (a ValueError with a message)
    cfg = make_config(args.engine, args.scenario, gpus=args.gpus,
                      engine_version=args.engine_version)
    if args.timeout is None:
        args.timeout = build_timeline(cfg).duration / args.speed * 1.5 + 30.0
    elif not args.timeout > 0:
        raise UsageError("--timeout must be > 0")


def run(args: argparse.Namespace) -> int:
    try:
        _validate(args)
    except ValueError as exc:  # a UsageError, or make_config's refusal of the scenario
        fail("demo", exc)
        return EXIT_USAGE
    with _terminate_as_exit():
        if not args.headless and wants_dashboard(DashboardSpec(command="demo")):
            from eagle_tui.commands.demo_launch import run_dashboard

            return run_dashboard(args)  # launched like a real server: K/R/E work on it
        server = DemoServer(args)
        try:
            server.start()
            return open_dashboard(server.spec(), presenter=headless_presenter(server, args))
        finally:
            server.close()
