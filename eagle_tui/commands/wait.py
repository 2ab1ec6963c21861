"""``eagle-tui wait``: the answer a ``until curl /health; do sleep 10; done`` loop cannot give.

It runs the same session as the dashboard and decides, after every batch of events:

* **ready** (exit 0): ``/health`` answers 200 and the log (if given) shows no crash; with only
  ``--log``, the log's own ready line (``fired up and ready to roll`` / ``Application startup
  complete``);
* **crashed** (exit 1): a crash line in the log, the watched process exiting, or ``/health``
  going dead (refused, 503, error) after it had been ready. A crash is settled for
  ``CRASH_SETTLE_S`` before the diagnosis is printed, so the traceback's root cause (often a few
  lines below the first fatal line) is in it; the answer still comes within a second;
* **timeout** (exit 3), saying which phase it was stuck in and for how long;
* usage errors exit 2.

A progress line is printed at every phase or health change and every ``PROGRESS_EVERY_S``;
``--json`` prints the same as one JSON object per line and ends with a ``result`` object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from eagle_tui.commands.common import (
    UsageError,
    add_source_args,
    build_session,
    check_source_args,
    health_decides,
)
from eagle_tui.commands.remote import close_transports, open_transports
from eagle_tui.model.events import Event, Phase
from eagle_tui.model.events import Progress as Progress_
from eagle_tui.model.figtext import figures_dict, figures_text
from eagle_tui.model.figures import figures
from eagle_tui.model.state import DashboardState
from eagle_tui.session import Session
from eagle_tui.transport.base import TransportError

EXIT_READY = 0
EXIT_CRASHED = 1
EXIT_USAGE = 2
EXIT_TIMEOUT = 3
EXIT_ALERTS = 4  # ready, but with alerts at the --fail-on level
PROGRESS_EVERY_S = 10.0
CRASH_SETTLE_S = 0.4
HEALTH_INTERVAL_S = 0.5
_DEAD_HEALTH = ("no_listener", "starting", "error")


def verdict(state: DashboardState, *, has_url: bool) -> tuple[str, str] | None:
    """``("ready"|"crashed", reason)`` once the state decides ``wait``; else ``None``."""
    if state.crash is not None:
        return "crashed", f"crash in the log: {state.crash.kind}"
    if state.process_exit is not None:
        ex = state.process_exit
        code = f"exit code {ex.exit_code}" if ex.exit_code is not None else "exit status unknown"
        return "crashed", f"server process {ex.pid} exited ({code})"
    health = state.health
    if has_url:
        if health is not None and state.ever_ready_health and health.state in _DEAD_HEALTH:
            return "crashed", f"/health was ready and is now {health.state}"
        if health is not None and health.state == "ready":
            return "ready", "/health answered 200"
        return None
    if state.ready:
        return "ready", f"the log reached {state.phase.value}"
    return None


# --------------------------------------------------------------------------- formatting

GIB = float(1 << 30)
_CONTROL = dict.fromkeys([*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F, *range(0x80, 0xA0)], "?")


def clean(text: str) -> str:
    """Defence in depth: log text reaching the terminal never carries a control character."""
    return text.translate(_CONTROL)


def _phase_text(state: DashboardState) -> str:
    text = state.phase.value
    if state.phase.rank <= Phase.LOADING_WEIGHTS.rank and state.shards is not None:
        text += f" (shards {state.shards.done}/{state.shards.total})"
    elif Phase.WEIGHTS_LOADED.rank <= state.phase.rank <= Phase.CUDA_GRAPH.rank and state.graphs:
        text += f" (graphs {state.graphs.done}/{state.graphs.total})"
    if state.crash is not None:
        text += f", CRASHED ({state.crash.kind})"
    return text


def _process_text(state: DashboardState) -> str | None:
    ex = state.process_exit
    if ex is not None:
        return f"process {ex.pid} exited ({_exit_text(ex.exit_code, ex.signal)})"
    p = state.process
    if p is None:
        return None
    text = f"process {p.pid} {p.status}"
    if p.rss_bytes is not None:
        text += f" {p.rss_bytes / GIB:.1f} GiB"
    if p.num_procs > 1:
        text += f" ({p.num_procs} procs)"
    return text


def _exit_text(code: int | None, sig: int | None) -> str:
    if code is None:
        return "exit status unknown"
    text = f"exit code {code}"
    if sig is not None:
        try:
            text += f", {signal.Signals(sig).name}"
        except ValueError:
            text += f", signal {sig}"
    return text


def _gpu_text(state: DashboardState) -> str | None:
    g = state.gpus
    if g is None:
        return None
    if g.state == "no_driver":
        return "GPU: no driver"
    if g.state == "error" or not g.gpus:
        return f"GPU: {clean(g.error) or g.state}"
    known = [x for x in g.gpus if x.mem_used is not None and x.mem_total]
    if len(g.gpus) > 4 and known:
        used = sum(x.mem_used or 0 for x in known) / GIB
        total = sum(x.mem_total or 0 for x in known) / GIB
        peak = max(x.mem_used or 0 for x in known) / GIB
        return f"{len(g.gpus)} GPUs: {used:.1f}/{total:.0f} GiB (max {peak:.1f})"
    parts = []
    for x in g.gpus:
        if x.error:
            parts.append(f"{x.index}: {clean(x.error)}")
        elif x.mem_used is not None and x.mem_total:
            parts.append(f"{x.index}: {x.mem_used / GIB:.1f}/{x.mem_total / GIB:.0f} GiB")
        else:
            parts.append(f"{x.index}: N/A")
    return "GPU " + ", ".join(parts)


def progress_line(state: DashboardState) -> str:
    elapsed = state.elapsed or 0.0
    parts = [f"[{elapsed:6.1f}s] phase: {_phase_text(state)}"]
    if state.health is not None:
        h = state.health
        parts.append(f"health: {h.state}" + (f" ({clean(h.error)})" if h.error else ""))
    if (proc := _process_text(state)) is not None:
        parts.append(proc)
    if (gpu := _gpu_text(state)) is not None:
        parts.append(gpu)
    if state.failures:
        parts.append("failing: " + ", ".join(clean(f"{f.source} ({f.error})")
                                              for f in state.failures))
    if (numbers := figures_text(figures(state))) is not None:
        parts.append(clean(numbers))
    return " | ".join(parts)


def _progress_obj(p: Progress_ | None) -> dict[str, int] | None:
    return {"done": p.done, "total": p.total} if p is not None else None


def progress_dict(state: DashboardState) -> dict[str, Any]:
    g = state.gpus
    return {
        "event": "progress",
        "elapsed_s": round(state.elapsed or 0.0, 3),
        "phase": state.phase.value,
        "shards": _progress_obj(state.shards),
        "graphs": _progress_obj(state.graphs),
        "health": state.health.state if state.health else None,
        "health_status": state.health.status_code if state.health else None,
        "process": {"pid": state.process.pid, "status": state.process.status,
                    "rss_bytes": state.process.rss_bytes} if state.process else None,
        "process_exit": {"pid": state.process_exit.pid, "exit_code": state.process_exit.exit_code,
                         "signal": state.process_exit.signal} if state.process_exit else None,
        "gpu_state": g.state if g else None,
        "gpus": [{"index": x.index, "mem_used": x.mem_used, "mem_total": x.mem_total,
                  "error": x.error} for x in g.gpus] if g else [],
        "crash": state.crash.kind if state.crash else None,
        "log_lines": state.lines,
        "failing": [{"source": f.source, "error": f.error} for f in state.failures],
        "numbers": figures_dict(figures(state)),
    }


def _stuck(state: DashboardState) -> float | None:
    """Seconds since the current phase was reached (since the start for no phase at all)."""
    mark = state.phase_mark(state.phase)
    since = mark.t if mark is not None and mark.t is not None else state.t_start
    if since is None or state.now is None:
        return None
    return max(0.0, state.now - since)


def result_dict(state: DashboardState, status: str, reason: str, code: int) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "event": "result",
        "status": status,
        "exit_code": code,
        "reason": reason,
        "elapsed_s": round(state.elapsed or 0.0, 3),
        "phase": state.phase.value,
    }
    if status == "timeout":
        stuck = _stuck(state)
        obj["stuck_in_phase_s"] = round(stuck, 3) if stuck is not None else None
    if state.crash is not None:
        c = state.crash
        obj["crash"] = {"kind": c.kind, "lineno": c.lineno, "message": c.message, "hint": c.hint}
    if state.process_exit is not None:
        ex = state.process_exit
        obj["process_exit"] = {"pid": ex.pid, "exit_code": ex.exit_code, "signal": ex.signal}
    if state.health is not None:
        obj["health"] = state.health.state
    obj["alerts"] = [a.as_dict() for a in state.alerts]
    obj["numbers"] = figures_dict(figures(state))
    if status != "ready":
        obj["last_lines"] = [{"lineno": ln.lineno, "text": ln.text} for ln in state.recent_lines]
    return obj


def diagnosis_lines(state: DashboardState, status: str, reason: str) -> list[str]:
    elapsed = state.elapsed or 0.0
    out: list[str] = []
    if status == "ready":
        out.append(f"READY after {elapsed:.1f} s: {reason} (phase: {state.phase.value})")
        for a in state.alerts:
            if a.severity != "info":
                out.append(f"  {a.severity}: {clean(a.message)}")
        return out
    if status == "timeout":
        stuck = _stuck(state)
        stuck_text = f" for {stuck:.0f} s" if stuck is not None else ""
        out.append(f"TIMEOUT after {elapsed:.1f} s: stuck in phase {_phase_text(state)}"
                   f"{stuck_text}" + (f"; health: {state.health.state}" if state.health else ""))
    else:
        out.append(f"CRASHED after {elapsed:.1f} s: {clean(reason)}")
    c = state.crash
    if c is not None:
        out.append(f"  kind:  {c.kind}")
        out.append(f"  cause: line {c.lineno}: {clean(c.message)}")
        out.append(f"  hint:  {clean(c.hint)}")
    if state.process_exit is not None and c is None:
        ex = state.process_exit
        out.append(f"  process {ex.pid} exited ({_exit_text(ex.exit_code, ex.signal)}) "
                   "with no crash line in the log")
    if state.recent_lines:
        out.append(f"last {len(state.recent_lines)} log lines:")
        out.extend(f"  {ln.lineno:>7} | {clean(ln.text)}" for ln in state.recent_lines)
    return out


# --------------------------------------------------------------------------- deciding


class Progress:
    """Prints progress and decides; ``on_batch`` is subscribed to the session.

    ``decide=False`` (``watch``) prints the same lines and a crash diagnosis when it happens,
    but never ends the run.
    """

    def __init__(self, out: TextIO, *, as_json: bool, has_url: bool, decide: bool = True):
        self.out = out
        self.as_json = as_json
        self.has_url = has_url
        self.decide = decide
        self.decided = asyncio.Event()
        self.outcome: tuple[str, str] | None = None
        self.state = DashboardState()
        self._last_key: tuple[Any, ...] | None = None
        self._last_print: float | None = None
        self._crash_pending = False
        self._ready_reported = False

    def emit(self, obj: dict[str, Any], text: str) -> None:
        if self.as_json:
            self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        else:
            self.out.write(text + "\n")
        self.out.flush()

    def on_batch(self, state: DashboardState, _events: Sequence[Event]) -> None:
        self.state = state
        loop = asyncio.get_running_loop()
        key = (
            state.phase,
            state.shards.done if state.shards else None,
            state.graphs.done if state.graphs else None,
            state.health.state if state.health else None,
            state.process.status if state.process else None,
            state.crash is not None,
            state.process_exit is not None,
            state.gpus.state if state.gpus else None,
            figures(state).live.activity,
        )
        if key != self._last_key or (
            self._last_print is not None and loop.time() - self._last_print >= PROGRESS_EVERY_S
        ):
            self.emit(progress_dict(state), progress_line(state))
            self._last_key = key
            self._last_print = loop.time()
        found = verdict(state, has_url=self.has_url)
        if found is None or self.decided.is_set():
            return
        status, reason = found
        if status == "crashed":
            if not self._crash_pending:
                # let the rest of the traceback arrive: the root cause is often a few lines
                # below the first fatal line
                self._crash_pending = True
                loop.call_later(CRASH_SETTLE_S, self._settle)
            return
        if self.decide:
            self.outcome = found
            self.decided.set()
        elif not self._ready_reported:
            self._ready_reported = True
            self.finish(state, status, reason, EXIT_READY, final=False)

    def _settle(self) -> None:
        found = verdict(self.state, has_url=self.has_url)
        if self.decided.is_set() or found is None:
            return
        if self.decide:
            self.outcome = ("crashed", found[1]) if found[0] == "crashed" else found
            self.decided.set()
        else:
            self.finish(self.state, "crashed", found[1], EXIT_CRASHED, final=False)

    def finish(self, state: DashboardState, status: str, reason: str, code: int, *,
               final: bool = True) -> None:
        obj = result_dict(state, status, reason, code)
        if not final:
            obj["event"] = status  # watch: a notice, the run goes on
        self.emit(obj, "\n".join(diagnosis_lines(state, status, reason)))

def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "wait",
        help="wait until a server is ready or crashed (exit 0 ready, 1 crashed, 3 timeout)",
        description="Follow a starting server and exit as soon as the answer is known: 0 ready, "
        "1 crashed (with the root cause and a fix hint), 3 timed out, 4 ready with alerts at "
        "the --fail-on level, 2 usage error (never 1 for an error of eagle-tui itself).",
    )
    add_source_args(p)
    p.add_argument("--timeout", metavar="SECONDS", type=float, default=600.0,
                   help="give up after this long (default 600)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per progress event, then a result object")
    add_fail_on_arg(p)
    p.set_defaults(func=run)


def add_fail_on_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--fail-on", choices=("critical", "warning"), default=None,
                   help="at ready, exit 4 when alerts of this level (or worse) are present "
                   "(e.g. the EAGLE/EAGLE3 mistake is critical)")


def failing_alerts(state: DashboardState, fail_on: str | None) -> list[str]:
    """The alerts at ``fail_on`` level or worse (``critical`` ⊂ ``warning``)."""
    if fail_on is None:
        return []
    levels = ("critical",) if fail_on == "critical" else ("critical", "warning")
    return [a.message for a in state.alerts if a.severity in levels]


async def wait_async(args: argparse.Namespace, out: TextIO) -> int:
    transports = await open_transports(args)  # --ssh hosts, or the local machine
    session: Session = build_session(args, transports, health_interval=HEALTH_INTERVAL_S)
    progress = Progress(out, as_json=args.json, has_url=health_decides(args, transports[0].host))
    session.subscribe(progress.on_batch)
    runner = asyncio.create_task(session.run())
    waiter = asyncio.create_task(progress.decided.wait())
    try:
        done, _ = await asyncio.wait({runner, waiter}, timeout=args.timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        session.stop()
        waiter.cancel()
        try:
            await runner
        finally:
            await close_transports(transports)
    return finish_verdict(progress, session.state, sources_ended=runner in done,
                          timeout=args.timeout, fail_on=getattr(args, "fail_on", None))


def finish_verdict(progress: Progress, state: DashboardState, *, sources_ended: bool,
                   timeout: float, fail_on: str | None = None) -> int:
    """Turn how the wait ended into (status, reason, exit code), print it, return the code.

    Shared by ``wait`` and ``demo --headless`` so both answer with the same words and codes.
    """
    if progress.outcome is not None:
        status, reason = progress.outcome
        code = EXIT_READY if status == "ready" else EXIT_CRASHED
        failing = failing_alerts(state, fail_on) if code == EXIT_READY else []
        if failing:
            reason = f"{reason}; --fail-on {fail_on}: {failing[0]}"
            code = EXIT_ALERTS
    elif sources_ended:
        status, reason, code = "crashed", "every source ended without an answer", EXIT_CRASHED
    else:
        status, reason, code = "timeout", f"no answer within {timeout:g} s", EXIT_TIMEOUT
    progress.finish(state, status, reason, code)
    return code


def run(args: argparse.Namespace) -> int:
    try:
        check_source_args(args)
        if not args.timeout > 0:
            raise UsageError("--timeout must be > 0")
    except UsageError as exc:
        print(f"eagle-tui wait: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(wait_async(args, sys.stdout))
    except TransportError as exc:  # an SSH host key refused or authentication failed
        print(f"eagle-tui wait: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


__all__ = ["EXIT_ALERTS", "EXIT_CRASHED", "EXIT_READY", "EXIT_TIMEOUT", "EXIT_USAGE", "register",
           "run", "verdict"]
