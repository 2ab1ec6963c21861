"""``eagle-tui wait``: the answer a ``until curl /health; do sleep 10; done`` loop cannot give.

It runs the same session as the dashboard and decides, after every batch of events:

* **ready** (exit 0): the readiness path (SGLang's ``/ready``, else ``/health``:
  :mod:`eagle_tui.sources.health`) answers 200 and the log (if given) shows no crash; with only
  ``--log``, the log's own ready line;
* **crashed** (exit 1): a crash line in the log, the watched process exiting, or readiness
  going dead after it had been ready. A crash is settled for ``CRASH_SETTLE_S`` before the
  diagnosis is printed, so the traceback's root cause (often a few lines below the first fatal
  line) is in it;
* **timeout** (exit 3), saying which phase it was stuck in and for how long; usage errors exit 2.

A progress line is printed at every phase or health change and every ``PROGRESS_EVERY_S``;
``--json`` prints the same as one JSON object per line and ends with a ``result`` object.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from eagle_tui.assembly.build import build_session
from eagle_tui.assembly.remote import close_transports, open_transports
from eagle_tui.assembly.spec import DashboardSpec, spec_from_args
from eagle_tui.commands import argtypes
from eagle_tui.commands.common import add_source_args
from eagle_tui.console import fail, warn
from eagle_tui.errors import UsageError
from eagle_tui.headless.progress import (
    EXIT_ALERTS,
    EXIT_CRASHED,
    EXIT_READY,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    ProgressPrinter,
    finish_verdict,
)
from eagle_tui.model.boundary.termtext import inert_lines
from eagle_tui.session import Session, Subscriber
from eagle_tui.transport.base import Transport, TransportError

STOP_S = 5.0  # for the sources to stop once the verdict is known (see ``stopped``)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "wait",
        help="wait until a server is ready or crashed (exit 0 ready, 1 crashed, 3 timeout)",
        description="Follow a starting server and exit as soon as the answer is known: 0 ready, "
        "1 crashed (with the root cause and a fix hint), 3 timed out, 4 ready with alerts at "
        "the --fail-on level, 2 usage error (never 1 for an error of eagle-tui itself).",
    )
    add_source_args(p)
    p.add_argument("--timeout", metavar="SECONDS", type=argtypes.seconds, default=600.0,
                   help="give up after this long (default 600)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per progress event, then a result object")
    add_fail_on_arg(p)
    p.set_defaults(func=run)


def add_fail_on_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fail-on", choices=("critical", "warning"), default=None,
                   help="at ready, exit 4 when alerts of this level (or worse) are present "
                   "(the EAGLE/EAGLE3 mistake is critical)")


async def wait_async(spec: DashboardSpec, timeout: float, out: TextIO,
                     fail_on: str | None = None, *,
                     subscribers: Sequence[Subscriber] = ()) -> int:
    """``wait``'s run: its own loop, no dashboard (``wait`` never shows one)."""
    t0 = time.monotonic()  # "after N s" counts from here: what the user waited
    transports = await open_transports(spec.ssh)  # --ssh hosts, or the local machine
    try:
        if spec.ssh.dests and spec.pid is not None:
            await check_remote_pid(transports[0], spec.pid)
        if spec.container:
            from eagle_tui.assembly.containers import resolve_container

            spec = await resolve_container(spec, transports[0])
    except (UsageError, TransportError) as exc:
        await close_transports(transports)
        fail("wait", exc)
        return EXIT_USAGE
    session: Session = build_session(spec, transports)
    progress = ProgressPrinter(out, as_json=spec.json,
                               has_url=spec.health_decides(transports[0].host), t0=t0)
    session.subscribe(progress.on_batch)
    for cb in subscribers:  # (launch: the run history's recorder)
        session.subscribe(cb)
    runner = asyncio.create_task(session.run())
    waiter = asyncio.create_task(progress.wait_decided())
    try:
        # the timeout counts from t0, not from here: building the session (its sources'
        # imports) must not stretch --timeout N past N
        left = max(0.0, timeout - (time.monotonic() - t0))
        done, _ = await asyncio.wait({runner, waiter}, timeout=left,
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        session.stop()
        waiter.cancel()
        try:
            await stopped(runner, STOP_S)
        finally:
            await close_transports(transports)
    return finish_verdict(progress, session.state, sources_ended=runner in done,
                          timeout=timeout, fail_on=fail_on)


async def stopped(runner: asyncio.Task[Any], limit: float) -> None:
    """Wait for the session to stop, ``limit`` seconds at most: a source that does not stop
    (a command that will not die) is named on stderr and left behind, and the verdict is
    given; the session's own error, if it ended with one, is raised."""
    done, _ = await asyncio.wait({runner}, timeout=limit)
    if done:
        runner.result()
        return
    me = asyncio.current_task()
    stuck = sorted(t.get_name() for t in asyncio.all_tasks() if t is not me and not t.done())
    warn(inert_lines(f"eagle-tui wait: warning: the sources did not stop within {limit:g} s "
                     f"({', '.join(stuck[:8]) or 'none named'}): left behind"))
    runner.cancel()
    await asyncio.wait({runner}, timeout=1.0)


def check_pid(spec: DashboardSpec) -> None:
    """A local ``--pid`` that names no process is a typo, not a crash (exit 2, not 1)."""
    if spec.pid is None or spec.ssh.dests:
        return
    import psutil  # only here: ``wait --log`` alone never needs it

    if not psutil.pid_exists(spec.pid):
        raise UsageError(f"--pid {spec.pid}: no such process")


async def check_remote_pid(transport: Transport, pid: int) -> None:
    """``--pid`` over SSH: a process the host does not have is a typo too (exit 2)."""
    res = await transport.run(["test", "-d", f"/proc/{pid}"], 10.0)
    if res.exit_code != 0:
        raise UsageError(f"--pid {pid}: no such process on {transport.host}")


def run(args: argparse.Namespace) -> int:
    try:
        from eagle_tui.commands.runfigures import refresh_baseline

        refresh_baseline(args)
        spec = spec_from_args(args, "wait")
        if not args.timeout > 0:
            raise UsageError("--timeout must be > 0")
        check_pid(spec)
    except UsageError as exc:
        fail("wait", exc)
        return EXIT_USAGE
    try:
        from eagle_tui.assembly.backstop import backstop

        with backstop(args.timeout, "wait"):  # --timeout is kept even by a run that hangs
            return asyncio.run(wait_async(spec, args.timeout, sys.stdout, args.fail_on))
    except TransportError as exc:  # an SSH host key refused or authentication failed
        fail("wait", exc)
        return EXIT_USAGE


__all__ = ["EXIT_ALERTS", "EXIT_CRASHED", "EXIT_READY", "EXIT_TIMEOUT", "EXIT_USAGE", "register",
           "run", "wait_async"]
