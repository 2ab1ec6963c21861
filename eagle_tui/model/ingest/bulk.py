"""The column-wise path for bulk lines: whole runs of common lines → events, in a few C passes.

A server under load writes tens of thousands of lines a second, nearly all of four shapes:
SGLang ``Decode batch`` / ``Prefill batch`` stats, uvicorn access lines and ``[EAGLE3-DEBUG]``
prints. Line by line each costs a classification regex, a decode, ``sanitize``, a field split
and frozen-dataclass constructions. The parser's chunk method (``LogParser.feed_lines``) drives
this module, which holds no state and knows nothing of the parser: :func:`scan` cuts a chunk
into clean stretches (decoded once, rows read by one :data:`_ROW` ``findall``) and the lines
that need the parser's line path; :func:`build` and :class:`Records` make the objects of a
segment field by field under ``map``.

A common-shape row gives exactly the line path's events (docs/architecture.md, "Module notes",
says why); ``tests/unit/model/ingest/test_bulk.py`` checks the result against ``feed_line`` on
every fixture, the benchmark mix and generated logs cut at arbitrary chunk boundaries.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from collections.abc import Callable, Iterable
from itertools import accumulate, compress, repeat
from operator import add, itemgetter, not_
from typing import Any, Generic, NamedTuple, TypeVar, cast

from eagle_tui.model.engines.sglang.logs import DECODE_FIELDS_SRC, PREFILL_FIELDS_SRC
from eagle_tui.model.events import DecodeStats, Event, LineKind, LogLine, PrefillStats
from eagle_tui.model.ingest.classify import MAX_INT_DIGITS

T = TypeVar("T")


class Records(Generic[T]):
    """Builds many instances of a frozen slotted dataclass at once, one C-level pass per field.

    The generated ``__init__`` of a frozen dataclass calls ``object.__setattr__`` once per field
    through a global, which for a ``LogLine`` costs more than parsing its line. Here
    ``object.__new__`` and each slot's own setter run under ``map``, no Python frame per
    object. The objects are the same (type, fields, equality, hash); a class
    this cannot build exactly (no slots, a ``__post_init__``) is refused.
    """

    def __init__(self, cls: type[T]) -> None:
        if not dataclasses.is_dataclass(cls) or "__slots__" not in cls.__dict__:
            raise TypeError(f"{cls.__name__} is not a slotted dataclass")
        if hasattr(cls, "__post_init__"):
            raise TypeError(f"{cls.__name__} has a __post_init__")
        self.cls = cls
        self._setters = {f.name: cls.__dict__[f.name].__set__ for f in dataclasses.fields(cls)}
        self._defaults = {f.name: f.default for f in dataclasses.fields(cls)
                          if f.default is not dataclasses.MISSING}

    def new(self, n: int) -> list[T]:
        """``n`` blank objects: give each to :meth:`fill` before anyone reads it."""
        return list(map(object.__new__, repeat(self.cls, n)))

    def fill(self, objs: list[T], columns: dict[str, Iterable[Any]]) -> None:
        """Set every field of ``objs``: from ``columns`` (one value per object) or the default."""
        unknown = columns.keys() - self._setters.keys()
        if unknown:
            raise TypeError(f"{self.cls.__name__} has no field {sorted(unknown)}")
        for name, setter in self._setters.items():
            if name in columns:
                values = columns[name]
            elif name in self._defaults:
                values = repeat(self._defaults[name])
            else:
                raise TypeError(f"{self.cls.__name__}.{name} needs a value")
            deque(map(setter, objs, values), 0)


_LINES = Records(LogLine)
_DECODES = Records(DecodeStats)
_PREFILLS = Records(PrefillStats)
# ``[2025-11-20 10:16:03 TP0] `` or ``[04:40:55] ``: group = what ``parser._STAMP`` reads.
_STAMP = r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|\d\d:\d\d:\d\d)(?: [A-Z][A-Z_]*\d+)*\] "
# One row per line of a clean stretch (see the indices below); all but the text are "" unless
# the *whole* line has a common shape, whose first letter the shape groups then hold: "D"ecode,
# "P"refill or "I"NFO after a stamp, "E"AGLE3-DEBUG, or "I"NFO of an unstamped access line.
# After a stamp no "]" but in ``[N],`` (see the module docstring).
_ROW = re.compile(
    rf"((?:{_STAMP}(?=([DPI]))(?:Decode batch(?: \[\d+\]|)[.,] {DECODE_FIELDS_SRC}"
    rf"|Prefill batch(?: \[\d+\]|)[.,] {PREFILL_FIELDS_SRC}|INFO:     \d[^\]\n]*)(?=\n)"
    r"|\[(E)AGLE3-DEBUG\] hidden_states shape=torch\.Size\(\[[\d, ]*(?<!\d)(\d{1,18})\]\)"
    r"(?: dtype=torch\.\w+|)(?=\n)"
    r"|(?:\([\w.-]+ pid=\d+\) |)(I)NFO:     \d[^\n]*|)[^\n]*)\n",
    re.ASCII,
)
TEXT, _TIME, SHAPE = 0, 1, 2  # the row's text (public: the parser reads it) and shape
_RUNNING, _TOKENS, _USAGE, _ACCEPT_LEN, _ACCEPT_RATE, _GRAPH_ON, _GEN_TPS, _QUEUED = range(3, 11)
_NEW_SEQ, _NEW_TOKENS, _CACHED, _P_RUNNING, _P_QUEUED, _INPUT_TPS = range(11, 17)
DEBUG_SHAPE, DIM, _ACCESS_SHAPE = 17, 18, 19
_KIND_OF = {"D": LineKind.STATS, "P": LineKind.STATS, "I": LineKind.ACCESS,
            "E": LineKind.DEBUG, "": None}.__getitem__
_GRAPH = {"True": True, "False": False, "": None}.__getitem__
# Bytes that make a line need ``sanitize`` (or a UTF-8 decode): all but printable ASCII, TAB, LF.
_UNCLEAN = re.compile(rb"[^\t\n\x20-\x7e]")
_CLEAN = b"\t\n" + bytes(range(0x20, 0x7F))
Row = tuple[str, ...]


class Stretch(NamedTuple):
    """A clean stretch of whole lines: a row per line (see :data:`_ROW`), each row's shape
    ("D", "P", "I", "E" or "") and line kind (``None``: not a common shape, it goes through
    the parser's line path), and the indices of those other rows."""

    rows: list[Row]
    shapes: list[str]
    kinds: list[LineKind | None]
    others: list[int]


def scan(data: bytes) -> list[Stretch | bytes]:
    """The complete lines ``data`` in file order, in one call: clean stretches of whole lines
    (decoded once, rows read by one ``findall``), and every line holding another byte alone,
    as ``bytes`` without its newline (it needs ``sanitize``)."""
    if not data.translate(None, _CLEAN):  # the usual case: one C pass, far cheaper than a search
        return [_stretch(data.decode("ascii"))]
    out: list[Stretch | bytes] = []
    pos, end = 0, len(data)
    while pos < end:
        bad = _UNCLEAN.search(data, pos)
        # the clean stretch ends where the line holding ``bad`` starts
        stop = max(data.rfind(b"\n", pos, bad.start()) + 1, pos) if bad is not None else end
        if stop > pos:
            out.append(_stretch(data[pos:stop].decode("ascii")))
        if bad is None:
            break
        pos = data.index(b"\n", bad.start())
        out.append(data[stop:pos])
        pos += 1
    return out


def _stretch(text: str) -> Stretch:
    rows: list[Row] = _ROW.findall(text)
    shapes = list(map(max, _column(rows, SHAPE), _column(rows, DEBUG_SHAPE),
                      _column(rows, _ACCESS_SHAPE)))
    kinds: list[LineKind | None] = list(map(_KIND_OF, shapes))
    for i in compress(range(len(rows)), map("I".__eq__, shapes)):
        line = rows[i][TEXT]  # an access line that quotes what ``_bulk`` reads goes alone
        if "(token/s)" in line or "accept len" in line or "_states" in line:
            kinds[i] = None
    return Stretch(rows, shapes, kinds, list(compress(range(len(rows)), map(not_, kinds))))


def build(rows: list[Row], shapes: list[str], kinds: list[LineKind | None], first: int,
          host: str, last_dim: int | None) -> tuple[list[Event], bool] | None:
    """The events of rows that all have a common shape, numbered from ``first``, and whether
    one is a Decode stats line (serving); ``None`` when they print a hidden size other than
    ``last_dim`` (rare: its event goes between the lines, so they go one by one). Every object
    is built field by field under ``map``; the caller has checked that the engine is known.

    No object is created per row but the events themselves (fewer young objects: the cyclic
    GC, which runs every 700 of them, costs less).
    """
    dims = set(_column(rows, DIM))
    dims.discard("")
    if dims and (len(dims) > 1 or _small_int(dims.pop()) != last_dim):
        return None
    k = len(rows)
    lines = _LINES.new(k)
    _LINES.fill(lines, {"lineno": range(first, first + k), "text": _column(rows, TEXT),
                        "kind": kinds, "host": repeat(host)})
    decoding = list(map("D".__eq__, shapes))
    prefilling = list(map("P".__eq__, shapes))
    decodes = _decodes(list(compress(rows, decoding)),
                       compress(range(first, first + k), decoding))
    prefills = _prefills(list(compress(rows, prefilling)),
                         compress(range(first, first + k), prefilling))
    if not decodes and not prefills:
        return cast(list[Event], lines), False
    # each stats event right after its line: line i goes to i + (stats events before it)
    has_stats = list(map(max, decoding, prefilling))
    at = list(map(add, range(k), accumulate(has_stats, initial=0)))
    merged: list[Event | None] = [None] * (k + len(decodes) + len(prefills))
    deque(map(merged.__setitem__, at, lines), 0)
    deque(map(merged.__setitem__, map(add, compress(at, decoding), repeat(1)), decodes), 0)
    deque(map(merged.__setitem__, map(add, compress(at, prefilling), repeat(1)), prefills), 0)
    return cast(list[Event], merged), bool(decodes)


def _small_int(digits: str) -> int | None:
    """``classify.small_int`` (no call into another module per segment)."""
    return int(digits) if len(digits) <= MAX_INT_DIGITS else None


def _column(rows: list[Row], i: int) -> list[str]:
    return list(map(itemgetter(i), rows))


def _floats(values: list[str]) -> Iterable[float | None]:
    """``float`` of each value, ``None`` for "" (a field the line did not have)."""
    return map(float, values) if all(values) else [float(v) if v else None for v in values]


Convert = Callable[[list[str]], Iterable[Any]]


def _ints(values: list[str]) -> Iterable[int]:
    return map(int, values)


def _plain_floats(values: list[str]) -> Iterable[float]:
    return map(float, values)


def _graphs(values: list[str]) -> Iterable[bool | None]:
    return map(_GRAPH, values)


# field → (row index, conversion): what ``decode_stats`` / ``prefill_stats`` read from a line
_DECODE_COLUMNS: dict[str, tuple[int, Convert]] = {
    "gen_tps": (_GEN_TPS, _plain_floats), "accept_len": (_ACCEPT_LEN, _floats),
    "accept_rate": (_ACCEPT_RATE, _floats), "running": (_RUNNING, _ints),
    "queued": (_QUEUED, _ints), "kv_usage": (_USAGE, _plain_floats),
    "num_tokens": (_TOKENS, _ints), "cuda_graph": (_GRAPH_ON, _graphs),
}
_PREFILL_COLUMNS: dict[str, tuple[int, Convert]] = {
    "new_seq": (_NEW_SEQ, _ints), "new_tokens": (_NEW_TOKENS, _ints),
    "cached_tokens": (_CACHED, _ints), "running": (_P_RUNNING, _ints),
    "queued": (_P_QUEUED, _ints), "input_tps": (_INPUT_TPS, _floats),
}


def _stats(records: Records[T], columns: dict[str, tuple[int, Convert]], rows: list[Row],
           linenos: Iterable[int]) -> list[T]:
    """The stats events of ``rows`` (Decode or Prefill rows), built column by column."""
    objs = records.new(len(rows))
    if rows:
        records.fill(objs, {"lineno": linenos, "time": _column(rows, _TIME),
                            **{name: convert(_column(rows, i))
                               for name, (i, convert) in columns.items()}})
    return objs


def _decodes(rows: list[Row], linenos: Iterable[int]) -> list[DecodeStats]:
    return _stats(_DECODES, _DECODE_COLUMNS, rows, linenos)


def _prefills(rows: list[Row], linenos: Iterable[int]) -> list[PrefillStats]:
    return _stats(_PREFILLS, _PREFILL_COLUMNS, rows, linenos)


__all__ = ["DEBUG_SHAPE", "DIM", "SHAPE", "TEXT", "Records", "Row", "Stretch", "build", "scan"]
