"""Turn one raw log line into safe, comparable text.

Server logs reach us through terminals, ``tee``, docker, docker-compose, Ray and GitHub issues, and
each adds something around the line the engine printed. Everything downstream (parsers, the crash
classifier, the log view) wants exactly the engine's text, and the log view must never receive a
byte that a terminal would interpret: Textual does not strip escapes, so a logged ``\\x1b]0;...``
would retitle the user's tmux pane and ``\\x1b[?1049l`` leave the alternate screen.

:func:`normalize` decodes (UTF-8 with replacement), strips escape sequences whole (no ESC
survives), collapses ``\\r`` redraws to what a terminal showed, replaces the remaining controls
with U+FFFD, and strips wrapper prefixes (vLLM's process prefix, Ray, docker ``--timestamps``,
docker-compose, Markdown quotes) repeatedly. :class:`Reflow` repairs whole lines before they are
parsed (caret escapes, glued records, hard wraps). docs/architecture.md ("Module notes") lists
each step. The common case (a clean ASCII line without wrappers) takes two C-level checks.
"""

from __future__ import annotations

import re

from eagle_tui.model.boundary import termtext
from eagle_tui.model.boundary.termtext import Inert
from eagle_tui.model.record import Record, record

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
    # torch.distributed's per-rank prefix on every line of a rank: "[rank0]: ".
    r"|\[rank\d+\]: ?"
    # Markdown quotes and quoted tables: "> ", ">", ">   | ".
    r"|>(?: *\| ?| |$)"
    r")"
)
_DOCKER_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)")
_MAX_WRAPPERS = 8  # a pathological line of 10k "> " must not loop for long
# the stamp ``logs --timestamps`` puts before each line, in bytes, with its parts
_STAMP_PREFIX = re.compile(
    rb"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9})\d*)?(Z|[+-]\d\d:?\d\d) ")


@record
class Normalized(Record):
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


def split_stamp(line: bytes) -> tuple[int, bytes] | None:
    """A ``logs --timestamps`` line → (its stamp in ns since the epoch, the line without it);
    ``None`` when it does not begin with a stamp (the CLI's own message, say). The display
    and the parser strip the same prefix in :func:`strip_wrappers`; this is its number, which
    orders and resumes a container's log."""
    m = _STAMP_PREFIX.match(line)
    if m is None:
        return None
    y, mo, d, h, mi, sec = (int(g) for g in m.groups()[:6])
    frac, zone = m.group(7) or b"", m.group(8)
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and sec < 61):
        return None
    days = _days(y, mo, d)
    offset = 0
    if zone != b"Z":
        sign = -1 if zone[:1] == b"-" else 1
        zh, zm = int(zone[1:3]), int(zone[-2:])
        offset = sign * (zh * 3600 + zm * 60)
    secs = days * 86400 + h * 3600 + mi * 60 + sec - offset
    return secs * 1_000_000_000 + int(frac.ljust(9, b"0") or 0), line[m.end():]


def _days(y: int, m: int, d: int) -> int:
    """Days from 1970-01-01 to the date (proleptic Gregorian; the civil-from-days inverse)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def stamp_text(ns: int) -> str:
    """ns since the epoch → an RFC 3339 UTC stamp with nanoseconds (what ``--since`` takes)."""
    secs, frac = divmod(ns, 1_000_000_000)
    days, rest = divmod(secs, 86400)
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (m <= 2)
    h, rest = divmod(rest, 3600)
    mi, s = divmod(rest, 60)
    return f"{y:04d}-{m:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.{frac:09d}Z"


# -- repairs across lines ----------------------------------------------------------------------
# Colour codes pasted as text (``^[[0;36m``) and a carriage return shown as ``^M``.
_CARETS = re.compile(rb"\^\[\[[\d;?]*[A-Za-z]|\^M(?=\n|$)")
# what may stand before a record on its line without being a record: a stamp, bars, quotes
_STAMP_ONLY = re.compile(
    rb"(?:\x1b\[[\d;]*m)*[\s|>]*(?:\[[^\]\n]{0,40}\]|[\dTZ:.,+-]{8,40})?[\s|>]*(?:\x1b\[[\d;]*m)*")
_PADDED = re.compile(rb"  [^ ]{0,4}$")
WRAP_MIN = 80  # terminals narrower than this do not wrap logs: shorter lines are never joined
WRAP_PAIRS = 3  # wrapped lines of one length that make it the width (two can be chance)
WRAP_JOINS = 8  # continuation lines joined onto one line at most
WRAP_CHARS = 4096  # and the joined line's length at most


def _columns(line: bytes) -> int:
    """The characters of a line (a terminal wraps at a number of them, not of bytes)."""
    return len(line) if line.isascii() else len(line.decode("utf-8", "replace"))


def _glued(data: bytes, markers: tuple[bytes, ...]) -> bool:
    """Whether a record marker stands elsewhere than at a line's start (behind a process tag,
    as a process-tagged log's all do, only the regex can tell)."""
    for m in markers:
        n = data.count(m)
        if n and n > data.count(b"\n" + m) + data.startswith(m):
            return True
    return False


class Reflow:
    """Repair whole lines before they are parsed: what terminals and pastes did to records.

    ``block`` takes complete lines and returns them with caret-escaped colour codes and ``^M``
    removed, two records glued on one line split where the second's prefix starts (``glues``:
    each engine's record start found mid-line, and literals each start holds, for a cheap
    test), and terminal hard-wraps joined back: a record's line of the wrap width followed by
    lines that start no record (``record``), are not indented and are not blank. The width is
    learned from the lines (the longest length, at least ``WRAP_MIN``, that ``WRAP_PAIRS`` such
    pairs share) and kept; a block with a line longer than it is left alone, a line padded to a
    frame's edge is never joined, and joins are bounded (``WRAP_JOINS``, ``WRAP_CHARS``).
    """

    __slots__ = ("_glue", "_head", "_more", "width")

    def __init__(self, record: str, glues: tuple[tuple[str, tuple[bytes, ...]], ...]) -> None:
        src = record.encode()
        # each engine's record start found mid-line, and the literals that say to look for it
        self._glue = tuple((re.compile(g.encode()), m) for g, m in glues)
        self._head = re.compile(src)
        # a continuation: not indented (but a wrap may fall before a space), not a record, nor
        # a line of Python's logging or uvicorn ("INFO:     127.0.0.1 ...")
        self._more = re.compile(rb"\n(?=[^\s\[(]| \S)(?!" + src + rb"|[A-Z]{4,8}: )")
        self.width = 0

    def block(self, data: bytes) -> bytes:
        if b"\r\n" in data:  # CRLF endings: the CR is the line's end, not a redraw
            data = data.replace(b"\r\n", b"\n")
        if data.endswith(b"\r"):  # the last line's, before its newline has come
            data = data[:-1]
        if b"^" in data:
            data = _CARETS.sub(b"", data)
        for glue, markers in self._glue:
            if _glued(data, markers):
                data = self._split(data, glue)
        return self._unwrap(data)

    def _split(self, data: bytes, glue: re.Pattern[bytes]) -> bytes:
        out: list[bytes] = []
        pos = 0
        for m in glue.finditer(data):
            p = m.start()
            head = data[data.rfind(b"\n", 0, p) + 1 : p]
            if _STAMP_ONLY.fullmatch(head) or head.endswith(b": "):
                continue  # a CI or container stamp before the one record, or a print quoting it
            out.append(data[pos:p])
            pos = p
        return b"\n".join([*out, data[pos:]]) if out else data

    def _unwrap(self, data: bytes) -> bytes:
        spots = [m.start() for m in self._more.finditer(data)]
        if not spots:
            return data
        starts = [data.rfind(b"\n", 0, p) + 1 for p in spots]
        lengths = [_columns(data[s:p]) for s, p in zip(starts, spots, strict=True)]
        # a record's line, not padded to a frame's edge (a wrap leaves no run of spaces at its end)
        heads = [self._head.match(data, s) is not None and _PADDED.search(data, s, p) is None
                 for s, p in zip(starts, spots, strict=True)]
        if not self.width:
            seen: dict[int, int] = {}
            for n, head in zip(lengths, heads, strict=True):
                if n >= WRAP_MIN and head:
                    seen[n] = seen.get(n, 0) + 1
            # the longest length that enough pairs share (the width: nothing is longer)
            self.width = max((n for n, k in seen.items() if k >= WRAP_PAIRS), default=0)
        width = self.width
        # a terminal that wraps at ``width`` leaves no line longer than that
        if not width or width not in lengths or any(
                _columns(line) > width for line in data.split(b"\n") if len(line) > width):
            return data
        out: list[bytes] = []
        pos = 0
        joins = 0
        line_at = 0  # where the line being joined onto starts in ``data``
        for p, n, start, head in zip(spots, lengths, starts, heads, strict=True):
            if start != pos or not out:  # not the continuation just joined: a new line
                if not head:
                    continue  # only a record is joined onto (a fixed-width table is not)
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
    if first == "(" or first == ">" or (first.isalnum() and _WRAPPERS.match(text)) or (
            first == "[" and text.startswith("[rank")):
        return strip_wrappers(text)
    return Normalized(text)


__all__ = [
    "REPLACEMENT",
    "Normalized",
    "Reflow",
    "collapse_cr",
    "normalize",
    "replace_controls",
    "sanitize",
    "split_stamp",
    "stamp_text",
    "strip_escapes",
    "strip_wrappers",
    "to_text",
]
