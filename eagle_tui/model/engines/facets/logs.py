"""How an engine's log is recognised and read, and what its log's findings mean for it.

Generic code (``model/ingest``, the reducer, the alert and activity views) never names an
engine: it iterates the registry's profiles and asks this facet. An engine nobody fills in here
is still shown line by line; it is just never detected, parsed or advised about.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from eagle_tui.model.events import Event, LineKind, Phase
from eagle_tui.model.record import Record, record


class LineParser(Protocol):
    """An engine's stateful message parser (one per log stream, made by ``LogFacet.parser``)."""

    def parse(self, msg: str, lineno: int, time: str | None,
              prefixed: bool) -> tuple[list[Event], LineKind | None]:
        """Events and a line kind for one message (logger prefix removed; ``prefixed``: it had
        one). ``([], None)``: nothing this engine recognises."""
        ...

    def line_cut(self) -> None:
        """The line just parsed was read in part (over ``framing.PARSE_CHARS``)."""
        ...


@record
class LogPrefix(Record):
    """The logger prefix an engine's own lines start with.

    ``pattern`` is matched at the start of a line that begins with one of ``first_chars`` (a
    cheap dispatch before any regex); ``time`` and ``level`` are its group numbers (0: none)
    and ``date`` a group read before the time (SGLang prints a date in some builds only).
    ``uvicorn_after``: uvicorn's ``INFO:     `` may follow (the engine logs its HTTP server's
    lines through its own logger).
    """

    pattern: re.Pattern[str]
    first_chars: str
    time: int
    level: int = 0
    date: int = 0
    uvicorn_after: bool = False


# (kind, phase, message, mine) → the engine's hint, or None (the generic one). ``mine``: the log
# is this engine's; a hint may also claim a message of an unknown engine by its wording.
CrashHint = Callable[[str, Phase, str, bool], str | None]

def memory_stage(phase: Phase) -> str:
    """Which memory a crash in ``phase`` ran out of: ``"weights"`` (loading them),
    ``"startup"`` (profiling, KV sizing, torch.compile, graph capture, warm-up: the KV share and
    the graph batch sizes), ``"serving"`` (batch and context size) or ``"unknown"``."""
    if phase is Phase.NONE:
        return "unknown"
    if phase.rank <= Phase.WEIGHTS_LOADED.rank:
        return "weights"
    return "startup" if phase.rank <= Phase.HTTP_SERVER.rank else "serving"


# A graph capture named as the failing step. Not any "CUDA Graphs": PyTorch's every OOM message
# says "... allocated in private pools (e.g., CUDA Graphs)".
GRAPH_CAPTURE = re.compile(r"[Cc]apture cuda graph|CUDA graph capture|[Cc]apturing (?:cuda|CUDA) "
                           r"graph|cuda_graph_runner|in capture\b")


PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")  # ``{name}`` in a hint (JSON braces are not one)


@record
class HintTemplate(Record):
    """A hint whose numbers come from the log line, or that gives none.

    ``text``'s ``{name}`` placeholders are filled from ``pattern``'s named groups matched in
    the crash message; when the pattern does not match or any of them did not take part,
    ``bare`` (the same advice without the numbers, no placeholders) is the hint: a hint never
    prints a number that the log did not.
    """

    pattern: re.Pattern[str] | None
    text: str
    bare: str = ""

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(PLACEHOLDER.findall(self.text))

    def fill(self, values: dict[str, str | None]) -> str:
        """``text`` with every placeholder filled, else ``bare`` (``text`` without any)."""
        names = self.fields
        if not names:
            return self.text
        if any(not values.get(name) for name in names):
            return self.bare
        return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), self.text)

    def render(self, message: str) -> str:
        m = self.pattern.search(message) if self.pattern is not None else None
        return self.fill(m.groupdict() if m is not None else {})

    def fills(self, message: str) -> bool:
        """Whether ``message`` gives every number ``text`` needs."""
        m = self.pattern.search(message) if self.pattern is not None else None
        return not self.fields or (m is not None and all(m.group(f) for f in self.fields))


def render_first(templates: tuple[HintTemplate, ...], message: str) -> str:
    """The first template the message fills, else the last one's ``bare`` sentence."""
    for t in templates:
        if t.fills(message):
            return t.render(message)
    return templates[-1].render(message)


@record
class AlertWording(Record):
    """How the alerts name this engine's speculative settings (its flags, in its spelling)."""

    algorithm_flag: str = "--speculative-algorithm"  # the flag that picks the method
    eagle3_fix: str = "Relaunch with --speculative-algorithm EAGLE3."
    eagle_not_eagle3: str = "--speculative-algorithm EAGLE instead of EAGLE3"
    # ``{algo}``: the method it runs (lower case), ``{upper}``: the same upper case
    runs_method: str = "--speculative-algorithm {upper}"


@record
class LogFacet(Record):
    """What in a log line names this engine, how its lines are read, and its rules."""

    text_markers: tuple[str, ...] = ()  # a message holding one of these was printed by it
    logger_hints: tuple[str, ...] = ()  # a logger name holding one of these (lower case) is its
    traceback_marker: str | None = None  # a traceback frame path only its code has
    # --- detection
    prefix: LogPrefix | None = None  # its own logger prefix (its shape alone names the engine)
    logger_starts: tuple[str, ...] = ()  # a logger name starting so (lower case) is its
    process: re.Pattern[str] | None = None  # searched in a process tag (``(EngineCore pid=1)``)
    # a traceback or error line through its source (searched in the line's first SCAN_CHARS)
    traceback_path: re.Pattern[str] | None = None
    # Engines whose code this one's tracebacks may pass through: a traceback through this
    # engine's own path replaces an engine inferred from theirs (old SGLang builds call into
    # ``vllm/distributed``, so a vLLM frame first does not make the log vLLM's).
    calls_into: tuple[str, ...] = ()
    # Functions of its code a traceback passes through only in one phase (its serving loop, its
    # model construction), with the phase and the reason shown: :func:`frame_rules` builds them.
    phase_frames: tuple[tuple[Phase, re.Pattern[str], str], ...] = ()
    # The bulk lines (``classify.LineClass``) that name it while the engine is unknown: its
    # ``Decode batch`` / ``Prefill batch`` stats, and the opening character of the prefix it puts
    # before a uvicorn access line (``[`` of a stamp, ``(`` of a process tag).
    bulk_stats: bool = False
    access_opener: str | None = None
    # --- reading
    parser: Callable[[], LineParser] | None = None  # a fresh parser for one log stream
    # uvicorn's "Application startup complete" means ready (the engine was built before its
    # HTTP app starts) rather than only the HTTP server being up
    ready_at_app_startup: bool = False
    # the details of the PhaseEvents of the line it prints once, first, at each start (its
    # launcher's, never a worker's): seen again after a ready or a crash, a restart into the log
    run_first: tuple[str, ...] = ()
    # --- rules
    crash_hint: CrashHint | None = None
    hint_templates: tuple[HintTemplate, ...] = ()  # every template its crash_hint fills
    dead: re.Pattern[str] | None = None  # a line saying one of its processes died
    # where one of its records starts (a regex source); the same found after another record on
    # its line (``record_glue``: two records glued on one line are split there; written with its
    # literal first, for speed), and a literal each start holds (a cheap pre-test)
    record_start: str | None = None
    record_glue: str | None = None
    record_markers: tuple[bytes, ...] = ()
    fatal_context: re.Pattern[str] | None = None  # a line saying the traceback after it is fatal
    # An address-in-use error without other context happens before the engine starts: it binds
    # its API socket first (else uvicorn's bind at the HTTP server, after the engine is built).
    binds_port_first: bool = False
    # An EAGLE-3 draft given the EAGLE(-1) method is refused at startup (a config error), rather
    # than running with acceptance collapsed: the alert says which happened.
    eagle3_as_eagle_refused: bool = False
    wording: AlertWording = AlertWording()
    # the engine's own deadline for a hung step when it was not set (``None``: it has none, so
    # NCCL's timeout is what ends it)
    default_watchdog_s: float | None = None
    watchdog_flag: str = ""  # the flag that sets it


def frame_rules(*rules: tuple[Phase, tuple[str, ...], str]
                ) -> tuple[tuple[Phase, re.Pattern[str], str], ...]:
    """``(phase, function names, reason)`` as :attr:`LogFacet.phase_frames`: a name matches as a
    traceback frame's ``in NAME``, its source line's call ``.NAME(`` or an RPC's ``"NAME"``
    (a frame line whose indentation or path was lost still names its function)."""
    return tuple((phase, re.compile(r"(?:\bin |\.|\")(?:" + "|".join(names) + r")\b"), reason)
                 for phase, names, reason in rules)


__all__ = ["GRAPH_CAPTURE", "PLACEHOLDER", "AlertWording", "CrashHint", "HintTemplate",
           "LineParser", "LogFacet", "LogPrefix", "frame_rules", "memory_stage", "render_first"]
