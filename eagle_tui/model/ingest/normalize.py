"""Turn one raw log line into safe, comparable text.

Server logs reach us through terminals, ``tee``, docker, docker-compose, Ray and GitHub issues, and
each adds something around the line the engine printed. Everything downstream (parsers, the crash
classifier, the log view) wants exactly the engine's text, and the log view must never receive a
byte that a terminal would interpret: Textual does not strip escapes, so a logged ``\\x1b]0;...``
would retitle the user's tmux pane and ``\\x1b[?1049l`` leave the alternate screen.

:func:`normalize` decodes (UTF-8 with replacement), strips escape sequences whole (no ESC
survives), collapses ``\\r`` redraws to what a terminal showed, replaces the remaining controls
with U+FFFD, and strips wrapper prefixes (vLLM's process prefix, Ray, docker ``--timestamps``,
docker-compose, Markdown quotes) repeatedly. docs/architecture.md ("Module notes") lists each
step. The common case (a clean ASCII line without wrappers) takes two C-level checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eagle_tui.model.boundary import termtext
from eagle_tui.model.boundary.termtext import Inert

# Escape sequences and controls: the one sanitizer's patterns (model/termtext.py).
REPLACEMENT = termtext.REPLACEMENT

# -- wrapper prefixes ---------------------------------------------------------------------------
_WRAPPERS = re.compile(
    r"(?:"
    # Ray / vLLM process prefixes: (APIServer pid=1), (Worker_TP0 pid=9, ip=10.0.0.2),
    # (ServeReplica:default:LLMServer pid=5) or the same without pid when the name has colons.
    r"\((?:[\w.-]+(?::[\w.-]*)*(?: [\w.-]+(?:=\d+)?){0,2} pid=\d+(?:, ip=[\d.:a-fA-F]+)?"
    r"|[\w.-]+(?::[\w.-]*)+)\) ?"
    # docker --timestamps: RFC 3339 with nanoseconds and a zone (a Kubernetes CRI log adds the
    # stream and a full/partial tag).
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) +"
    r"(?:(?:stdout|stderr) [FP] )?"
    # docker-compose service prefix: "svc-1  | " (name, padding, bar).
    r"|(?<![\w.-])[\w.-]+ *\| "  # (a name starts after a non-name character: linear search)
    # Markdown quotes and quoted tables: "> ", ">", ">   | ".
    r"|>(?: *\| ?| |$)"
    r")"
)
_DOCKER_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)")
_MAX_WRAPPERS = 8  # a pathological line of 10k "> " must not loop for long


@dataclass(frozen=True, slots=True)
class Normalized:
    """A sanitized line and what was peeled off it.

    ``process`` is the innermost Ray/vLLM process name (``"EngineCore_DP0"``) when the line had
    one, ``stamp`` the docker timestamp when it had one. Both help engine detection and give
    prefix-less lines a time.
    """

    text: str
    process: str | None = None
    stamp: str | None = None


def to_text(raw: str | bytes) -> str:
    """Bytes → str with U+FFFD for invalid UTF-8; str passes through."""
    if isinstance(raw, bytes | bytearray | memoryview):
        return bytes(raw).decode("utf-8", "replace")
    return raw


def strip_escapes(text: str) -> str:
    """Remove terminal escape sequences (7- and 8-bit); no ESC character survives."""
    return termtext.strip_escapes(text)


def collapse_cr(text: str) -> str:
    """Keep the last non-blank ``\\r``-separated state (tqdm redraws, CRLF endings)."""
    if "\r" not in text:
        return text
    parts = text.split("\r")
    for part in reversed(parts):
        if part.strip():
            return part
    return ""


def replace_controls(text: str) -> str:
    """Each control character (LF included: a line has none) → one U+FFFD, runs at once."""
    return termtext.replace_controls(text)


def sanitize(raw: str | bytes) -> Inert:
    """Steps 1-4 of :func:`normalize`: safe text with wrappers kept (for display).

    The one sanitizer (:func:`~eagle_tui.model.boundary.termtext.inert`) with the ``\\r`` redraw
    collapsed between its two steps.
    """
    text = to_text(raw)
    if text.isprintable():  # nothing below would change it
        return Inert(text)
    text = termtext.strip_escapes(text)
    text = collapse_cr(text)
    return Inert(termtext.replace_controls(text))


def strip_wrappers(text: str) -> Normalized:
    """Peel wrapper prefixes off an already sanitized line (repeatable, bounded)."""
    process: str | None = None
    stamp: str | None = None
    for _ in range(_MAX_WRAPPERS):
        m = _WRAPPERS.match(text)
        if m is None or m.end() == 0:
            break
        token = m.group(0)
        if token.startswith("("):
            process = token[1:].split(" pid=", 1)[0].split(")", 1)[0]
        elif _DOCKER_TS.match(token):
            stamp = token.strip()
        text = text[m.end() :]
    return Normalized(text, process, stamp)


# -- repairs across lines ----------------------------------------------------------------------
# Colour codes pasted as text (``^[[0;36m``) and a carriage return shown as ``^M``.
_CARETS = re.compile(rb"\^\[\[[\d;?]*[A-Za-z]|\^M(?=\n|$)")
WRAP_MIN = 80  # terminals narrower than this do not wrap logs: shorter lines are never joined
WRAP_JOINS = 8  # continuation lines joined onto one line at most
WRAP_CHARS = 4096  # and the joined line's length at most
LEVELS = (b"DEBUG ", b"INFO ", b"WARNING ", b"ERROR ", b"CRITICAL ")


class Reflow:
    """Repair whole lines before they are parsed: what terminals and pastes did to records.

    ``block`` takes complete lines and returns them with caret-escaped colour codes and ``^M``
    removed, two records glued on one line split where the second's prefix starts (``record``:
    the engines' record starts, ``markers``: a literal each such start begins with, for a cheap
    test), and terminal hard-wraps joined back: a line of the wrap width followed by a line
    that starts no record, is not indented and is not blank. The width is learned from the
    lines (a length at least ``WRAP_MIN`` that at least two such pairs share) and kept; joins are
    bounded (``WRAP_JOINS``, ``WRAP_CHARS``). A clean block costs a few ``bytes.count``.
    """

    __slots__ = ("_glue", "_markers", "_more", "width")

    def __init__(self, record: str, markers: tuple[bytes, ...]) -> None:
        src = record.encode()
        # mid-line, not right behind a process tag or a docker stamp that opens the same record
        self._glue = re.compile(rb"(?<=[^\n])(?<!\) )(?<![\dZ] )(?=" + src + rb")")
        self._more = re.compile(rb"\n(?=[^\s\[(])(?!" + src + rb")")
        self._markers = markers
        self.width = 0

    def block(self, data: bytes) -> bytes:
        if b"\r\n" in data:  # CRLF endings: the CR is the line's end, not a redraw
            data = data.replace(b"\r\n", b"\n")
        if b"^" in data:
            data = _CARETS.sub(b"", data)
        if self._glued(data):
            data = self._glue.sub(b"\n", data)
        return self._unwrap(data)

    def _glued(self, data: bytes) -> bool:
        for m in self._markers:
            n = data.count(m)
            # at a line's start, or behind the process tag a line starts with
            behind = min(data.count(b") " + m), data.count(b"\n(") + data.startswith(b"("))
            if n and n > data.count(b"\n" + m) + behind + data.startswith(m):
                return True
        return False

    def _unwrap(self, data: bytes) -> bytes:
        spots = [m.start() for m in self._more.finditer(data)]
        if not spots:
            return data
        lengths = [p - data.rfind(b"\n", 0, p) - 1 for p in spots]
        if not self.width:
            seen: dict[int, int] = {}
            for n in lengths:
                if n >= WRAP_MIN:
                    seen[n] = seen.get(n, 0) + 1
            self.width = max((n for n, k in seen.items() if k >= 2), key=seen.__getitem__,
                             default=0)
        width = self.width
        if not width or width not in lengths:
            return data
        out: list[bytes] = []
        pos = 0
        joins = 0
        line_at = 0  # where the line being joined onto starts in ``data``
        for p, n in zip(spots, lengths, strict=True):
            start = p - n
            if start != pos or not out:  # not the continuation just joined: a new line
                line_at, joins = start, 0
            if n != width or joins >= WRAP_JOINS or p - line_at > WRAP_CHARS:
                continue
            out.append(data[pos:p])
            pos = p + 1
            joins += 1
        if not out:
            return data
        out.append(data[pos:])
        return b"".join(out)


def normalize(raw: str | bytes) -> Normalized:
    """Sanitize one raw line and strip its wrapper prefixes (see the module docstring)."""
    text = sanitize(raw)
    first = text[:1]
    if first == "(" or first == ">" or (first.isalnum() and _WRAPPERS.match(text)):
        return strip_wrappers(text)
    return Normalized(text)


__all__ = [
    "LEVELS",
    "REPLACEMENT",
    "Normalized",
    "Reflow",
    "collapse_cr",
    "normalize",
    "replace_controls",
    "sanitize",
    "strip_escapes",
    "strip_wrappers",
    "to_text",
]
