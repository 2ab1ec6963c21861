"""Line shapes: whether a line is a "bulk" line, and the extractors of its numbers.

(A line's logger prefix and the engine it names: :mod:`.prefix`.)

**Bulk lines.** A decode-heavy log is 99 % four shapes: SGLang ``Decode batch`` and ``Prefill
batch`` stats, uvicorn access lines and ``[EAGLE3-DEBUG]`` prints. They are recognised *at the
start of the raw line* by one regex, so the same definition can be applied to a single line (the
line-by-line parser) and to a whole chunk at C speed (``\\n(?!SHAPES)`` finds every line that is
not of those shapes; ``NON_PLAIN_AFTER_NL`` tests a stricter subset that ``re`` rejects faster).
A bulk line's derived events come only from the extractors below, applied to its raw text (a
debug print that quotes ``gen throughput (token/s): X`` counts as a stats line, like the Decode
line it quotes); a line that contains ESC or CR is never bulk (it needs full normalization).
Both paths use exactly these definitions (the chunk variants are proven equal in their
comments), which is what makes the fast path give identical results.
"""

from __future__ import annotations

import re
from enum import IntEnum

# ----------------------------------------------------------------------------------- bulk lines

# SGLang's stamp, "[2025-11-20 10:16:03 TP0] " or date-less "[04:40:55 TP0] ". Written with
# "." runs rather than digit classes: ``re`` runs them several times faster, and the shape is
# only used to recognise bulk lines, consistently on both paths.
_TS = r"\[\d.{7}(?:.{11})?(?: [A-Z][A-Z_]*\d+)*\] "
_ACCESS = r"INFO:     \d"
_DEBUG_TAG = r"\[EAGLE3-DEBUG\]"
# group 1: decode, 2: prefill, 3: access, 4: debug (with or without a SGLang stamp), 5: access
# without a stamp (vLLM's uvicorn, optionally behind its "(APIServer pid=N) " prefix).
_CLASS_SRC = (
    rf"(?:{_TS}(?:(Decode batch)|(Prefill batch)|({_ACCESS})|({_DEBUG_TAG}))"
    rf"|({_DEBUG_TAG})|(?:\([\w.-]+ pid=\d+\) )?({_ACCESS}))"
)
CLASS_B = re.compile(_CLASS_SRC.encode())
CLASS_S = re.compile(_CLASS_SRC, re.ASCII)


class LineClass(IntEnum):
    OTHER = 0
    DECODE = 1
    PREFILL = 2
    ACCESS = 3
    DEBUG = 4


_GROUP_CLASS = (
    LineClass.OTHER,
    LineClass.DECODE,
    LineClass.PREFILL,
    LineClass.ACCESS,
    LineClass.DEBUG,
    LineClass.DEBUG,
    LineClass.ACCESS,
)


def classify(raw: str | bytes) -> LineClass:
    """The class of a raw line (no trailing newline). ESC or CR anywhere → ``OTHER``."""
    if isinstance(raw, str):
        if "\x1b" in raw or "\r" in raw:
            return LineClass.OTHER
        ms = CLASS_S.match(raw)
        return LineClass.OTHER if ms is None else _GROUP_CLASS[ms.lastindex or 0]
    if b"\x1b" in raw or b"\r" in raw:
        return LineClass.OTHER
    mb = CLASS_B.match(raw)
    return LineClass.OTHER if mb is None else _GROUP_CLASS[mb.lastindex or 0]


# Extractors applied to the raw text of bulk lines (the chunk path uses the variants below).
_NUM = r"([\d.]+)(?![\w.+-])"  # the whole token: "1e999", "0x10", "1_0" are not 1 or 0
_GEN_SRC = r"\((?<=gen throughput \()token/s\): " + _NUM
_ACC_SRC = r"len: (?<=accept len: )" + _NUM
# "hidden_states shape=torch.Size([21, 21504])" (also ".shape=" and ": ")
_DIM_HEAD = r"_states(?<=hidden_states)(?:\.shape| shape)(?:=|: )torch\.Size\(\["
_DIM_SRC = _DIM_HEAD + r"[\d, ]*(?<!\d)(\d+)\]\)"
GEN_S = re.compile(_GEN_SRC, re.ASCII)
ACC_S = re.compile(_ACC_SRC, re.ASCII)
DIM_B = re.compile(_DIM_SRC.encode())
DIM_S = re.compile(_DIM_SRC, re.ASCII)


# The report's chunk path (``report.ReportBuilder``) reads whole runs of bulk lines at once.
# ACC_S / GEN_S spelled as one literal (what their look-behinds require, newline-free), with the
# rest of the line consumed: ``findall`` over a run of whole lines returns the first match of
# every line and no other, i.e. what ``number`` reads line by line (if every token is valid).
ACC_LINE_B = re.compile(rb"accept len: ([\d.]+)(?![\w.+-])[^\n]*")
GEN_LINE_B = re.compile(rb"gen throughput \(token/s\): ([\d.]+)(?![\w.+-])[^\n]*")
_KINDS = r"(?:Decode batch|Prefill batch|" + _ACCESS + "|" + _DEBUG_TAG + ")"
_TAGS = r"(?:\] | [A-Z][A-Z_]*\d+(?: [A-Z][A-Z_]*\d+)*\] )"
# Matches at every newline whose next line is not a *plain* bulk line: the shapes a busy log
# repeats, a subset of the bulk shapes of CLASS_B (``\[\d.{18}`` and ``\[\d.{7}`` are the two
# cases of _TS) that ``re`` rejects a little faster. A line it rejects is merely handled one by
# one (``classify`` still knows it as bulk); lines with ESC or CR must be found separately.
NON_PLAIN_AFTER_NL = re.compile(
    (rf"\n(?!\[(?:{_DEBUG_TAG[2:]}|\d.{{18}}{_TAGS}{_KINDS}|\d.{{7}}{_TAGS}{_KINDS})"
     rf"|(?:\([\w.-]+ pid=\d+\) )?{_ACCESS})").encode()
)


_LEADING_ZERO = re.compile(rb",0\d")
_VALID_S = re.compile(r"(?:0|[1-9]\d*)(?:\.\d+)?", re.ASCII)


_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_HUGE = b"0" * 309  # an integer part this long may overflow a double; a shorter one never does


def valid_tokens(joined: bytes) -> bool:
    """True when every token of ``b",".join(tokens)`` is a plain decimal (valid JSON as is) and a
    finite double.

    Tokens come from ``[\\d.]+``, so this is ``_VALID_S.fullmatch`` on each token (plus: no run
    of 309 digits), checked with a few C-level passes instead of regex steps per token: no token
    starts or ends with a dot, none holds two (digits deleted, two dots of one token touch), none
    starts with a zero followed by a digit. A token it refuses is merely read line by line.
    """
    if not joined:
        return True
    if joined[:1] == b"." or joined[-1:] == b"." or b",." in joined or b".," in joined:
        return False
    if joined[:1] == b"0" and joined[1:2].isdigit():
        return False
    zeros = joined.translate(_ZEROS)
    return (b".." not in zeros.translate(None, b"0") and _HUGE not in zeros
            and _LEADING_ZERO.search(joined) is None)


def number(pattern: re.Pattern[str], text: str) -> float | None:
    """The first extractor match in ``text`` as a float; ``None`` if absent or not a number."""
    m = pattern.search(text)
    if m is None or _VALID_S.fullmatch(m.group(1)) is None:
        return None
    return float(m.group(1))


def unknown_dim_pattern(known: tuple[int, ...]) -> re.Pattern[bytes]:
    """A bytes pattern for a ``])`` not preceded by a known last dim (``[``, ``,`` or space, then
    a dim of ``known``).

    Every :data:`DIM_B` match ends with ``D])``, ``D`` its last dim after one of those three
    characters. So searching a whole run of lines with this finds every DIM match with a *new*
    dim, and maybe more (a ``])`` of anything else), without creating an object per debug line:
    a debug-heavy log repeats one or two dims millions of times. ``]`` is rare in logs and the
    known dims are fixed-width look-behinds, so ``re`` scans fast; callers confirm with
    :func:`dim_ending_at`.
    """
    behind = "".join(rf"(?<![\[ ,]{d}\]\))" for d in known)
    return re.compile((r"\]\)" + behind).encode())


_DIM_OFFSETS = (len("_states shape=torch."), len("_states shape: torch."))


def dim_ending_at(buf: bytes | bytearray, close: int, start: int) -> int | None:
    """The dim of the :data:`DIM_B` match ending with the ``])`` at ``close``, if there is one.

    Its ``Size([`` is the last one before ``close``, within the line (only digits, commas and
    spaces lie in between); ``start`` is where the line (or run of lines) starts.
    """
    size_at = buf.rfind(b"Size([", start, close)
    if size_at < 0 or buf.find(b"\n", size_at, close) >= 0:
        return None
    for off in _DIM_OFFSETS:
        if size_at - off >= start:
            m = DIM_B.match(buf, size_at - off, close + 2)
            if m is not None and m.end() == close + 2:
                return small_int(m.group(1))
    return None


MAX_INT_DIGITS = 18


def small_int(digits: str | bytes) -> int | None:
    """``int(digits)``, or None for a number no log prints (more than 18 digits).

    Why: Python refuses to convert more than 4,300 digits (``ValueError``), and a garbage line of
    up to 1 MB can hold that many where a shard count or a hidden size is expected.
    """
    return int(digits) if len(digits) <= MAX_INT_DIGITS else None


__all__ = [
    "ACC_LINE_B",
    "ACC_S",
    "CLASS_B",
    "CLASS_S",
    "DIM_B",
    "DIM_S",
    "GEN_LINE_B",
    "GEN_S",
    "MAX_INT_DIGITS",
    "NON_PLAIN_AFTER_NL",
    "LineClass",
    "classify",
    "dim_ending_at",
    "number",
    "small_int",
    "unknown_dim_pattern",
    "valid_tokens",
]
