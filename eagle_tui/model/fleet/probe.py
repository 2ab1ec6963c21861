"""What a reachable host says about an instance Prometheus reads as ``up == 0`` (pure).

Why: from Prometheus alone a server still loading its weights and a dead one look the same
(nothing answers ``/metrics`` on either). When the instance's host is reachable over SSH, the
ordinary sources tell: is the engine process there (discovery's scan, the same as ``eagle-tui
attach``), and what does the end of its log say (the same parser and crash tracker as the
dashboard). :func:`probe_hint` turns those two facts into the fleet row's state:

* ``crashed: KIND`` — the log's tail holds a crash (a Traceback's root cause, CUDA OOM, an NCCL
  timeout...), whether the process is still there (hung after it) or gone;
* ``starting`` — the process is there and its log shows no crash (loading, compiling, capturing);
* ``down`` — no engine process serves that port on the host.
"""

from __future__ import annotations

from eagle_tui.model.events import CrashEvent
from eagle_tui.model.fleet.snapshot import CRASHED, is_hint
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.model.state import DashboardState

MAX_REASON = 60


def log_crash(tail: bytes) -> CrashEvent | None:
    """The crash the end of a log shows, if any. A cut first line is dropped (a tail starts
    mid-line; the last one is ended), the rest goes through the dashboard's own parser and
    reducer."""
    nl = tail.find(b"\n")
    body = tail[nl + 1:] if nl >= 0 else tail
    if body and not body.endswith(b"\n"):  # the last line may still be being written
        body += b"\n"
    state = reduce(DashboardState(), LogParser().feed_lines(body))
    return state.startup.crash


def crash_hint(crash: CrashEvent) -> str:
    """``crashed: KIND: the message's start`` (one short line for the state column)."""
    msg = " ".join(crash.message.split())
    if len(msg) > MAX_REASON:
        msg = msg[: MAX_REASON - 1] + "…"
    return f"{CRASHED}: {crash.kind}" + (f": {msg}" if msg else "")


def probe_hint(alive: bool, tail: bytes | None) -> str:
    """The row's state from the host: the process (``alive``) and its log's tail (if read)."""
    crash = log_crash(tail) if tail else None
    if crash is not None:
        return crash_hint(crash)
    return "starting" if alive else "down"


__all__ = ["CRASHED", "crash_hint", "is_hint", "log_crash", "probe_hint"]
