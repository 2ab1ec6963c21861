"""Chunk summaries: the bulk work of one report chunk without the report's state.

What the parallel report's workers compute (:mod:`.parallel`); *chunk summaries*, not
"records", to keep them apart from the event ``@record`` classes and the ``--record`` file.

``ReportBuilder.feed`` (:mod:`.builder`) needs a little state that only the lines *before* a
chunk decide: the engine, whether "serving" was seen, the hidden-state dims already known, the
line number, the parser's and crash tracker's state. Everything else it does to a chunk is
stateless bulk work, and that is nearly all of the time. :func:`summarize_chunk` does exactly
that work on a chunk whose predecessors have not been read yet, assuming only the common case
(engine known, "serving" seen), and returns a :class:`ChunkSummary`; ``ReportBuilder.apply`` then
replays its parts *in file order* against the real state. A summary's parts are of three
kinds (see the notes).

More in docs/architecture.md, "Module notes", ``report/chunk_summary``.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterator
from operator import itemgetter
from typing import Any, NamedTuple

from eagle_tui.model.bench.tag import BENCH_TAG
from eagle_tui.model.ingest.classify import (
    ACC_LINE_B,
    GEN_LINE_B,
    NON_PLAIN_AFTER_NL,
    dim_ending_at,
    unknown_dim_pattern,
    valid_tokens,
)
from eagle_tui.model.ingest.lines import split_lines
from eagle_tui.model.series import Series

from .plainscan import special_starts

TAIL = Series().maxlen  # values kept for the alert rules: what the state's series keep
DECODE_TEXT = (b"Decode batch", b"(token/s)", b"accept len")
# (a prefill batch says "serving" only in a fragment with no sign of the server's start)
STATS_TEXT = (*DECODE_TEXT, b"Prefill batch")
PIECE = 1 << 18  # bytes of a plain run summarized at a time (see ``summarize_chunk``)

DimAt = tuple[int, int]  # (hidden-state dim, line of its first sighting, from 0 in its run)
# An SGLang Decode line of a plain run: its running requests and first accept len (what its
# ``DecodeStats`` says: the line's weight and value for the weighted accept length)
WORK_LINE_B = re.compile(
    rb"^\[\d(?:[^\n]{18}|[^\n]{7})(?: [A-Z][A-Z_]*\d+)*\] Decode batch(?: \[\d+\]|)[.,] "
    rb"#running-req: (\d{1,15}), [^\n]*?accept len: ([\d.]+)(?![\w.+-])", re.M)
Work = tuple[bytes, bytes]  # (running requests, accept len) tokens
# WORK_LINE_B for the lines of a run that has a newline in front (every run of a chunk has one):
# ``^`` in MULTILINE mode is tried at every byte (``re`` has no fast scan for it), a literal
# newline is found at C speed, which makes the pass several times cheaper. The usual fields between
# the running requests and the accept length are tried before the lazy gap: they hold no
# "accept len: ", so the accept len found is the gap's first, exactly WORK_LINE_B's. Every match
# is WORK_LINE_B's on the same line, with the same groups (``run_tokens`` relies on it).
RUN_WORK_B = re.compile(
    rb"\n\[\d(?:[^\n]{18}|[^\n]{7})(?: [A-Z][A-Z_]*\d+)*\] Decode batch(?: \[\d+\]|)[.,] "
    rb"#running-req: (\d{1,15}), (?:#token: \d{1,15}, token usage: [\d.]{1,30}, |[^\n]*?)"
    rb"accept len: ([\d.]+)(?![\w.+-])")
ACC_TEXT = b"accept len: "
BENCH_MARK = f"{BENCH_TAG}=".encode()  # a bench window marker (``commands.report_windows``)
_ACC_OF = itemgetter(1)


class LoneLine(NamedTuple):
    """A line that is not plain: through the ordinary parser, alone."""

    text: bytes


class RawRun(NamedTuple):
    """A run of plain lines whose number tokens failed ``valid_tokens``: parsed line by line."""

    lines: int
    data: bytes


class NumberRun(NamedTuple):
    """A run of plain lines, summarized: each spool's JSON text, value count and last values
    (``[]`` when later runs of the chunk push them out of ``TAIL`` anyway), and the dims seen."""

    lines: int
    acc_text: bytes
    acc_n: int
    acc_tail: list[float]
    gen_text: bytes
    gen_n: int
    gen_tail: list[float]
    dims: list[DimAt]


ChunkPart = LoneLine | RawRun | NumberRun


class ChunkSummary(NamedTuple):
    """One chunk's bulk work: its parts in file order and its pre-folded statistics."""

    parts: list[ChunkPart]
    has_stats: bool  # a run holds stats text (``apply`` re-reads if "serving" is pending)
    accept_counts: dict[bytes, int]  # accept len token → times seen (the exact mean)
    gen_sorted: bytes  # gen throughput values, sorted, as ``array("d").tobytes()`` (median)
    work_counts: dict[Work, int]  # (running, accept len) → times seen (the weighted mean)
    mark: int = -1  # offset in the chunk of the line of its first bench marker, -1 if none
    size: int = 0  # bytes of the chunk's lines (the report keeps its offset in the log)
    # a run holds Decode text (``apply`` re-reads while the parser's phase is not serving)
    has_decode: bool = False


class RunTokens(NamedTuple):
    """The number tokens of a plain run, each list with its JSON text."""

    acc: list[bytes]
    acc_text: bytes
    gen: list[bytes]
    gen_text: bytes
    work: list[Work]
    # ``acc`` is ``work``'s accept tokens in order: the accept counts follow from the work's
    paired: bool = False


def _runs(buf: bytes | bytearray, end: int, piece: int) -> Iterator[tuple[int, int, bool]]:
    for a, b, alone in split_lines(buf, 1, end, NON_PLAIN_AFTER_NL, special_starts):
        if alone:
            yield a, b, True
        else:
            for x, y in pieces(buf, a, b, piece):
                yield x, y, False


SKIP_DIMS = 8  # dims the search pattern skips itself (a run repeats one or two of them)


def new_dims(buf: bytes | bytearray, a: int, b: int,
             known: tuple[int, ...] = ()) -> list[DimAt]:
    """``(dim, line)`` of the first occurrence of each distinct hidden-state dim not in
    ``known`` in the run ``buf[a:b]``, in order, ``line`` counted from 0 at ``a``.

    The pattern skips the dims already found (a debug-heavy run repeats one dim on every debug
    line), so the serial report passes the dims it knows; a worker, which knows none, passes
    nothing, and filtering its results in order against the known dims gives the same events.

    Linear in the run whatever the number of distinct dims: the pattern skips only the first
    :data:`SKIP_DIMS` of them (rebuilt with one more look-behind per new dim, it grew quadratic
    in the dims); the others are matched and dropped by a set. Each match looks back
    for its ``Size([`` no further than the previous match, and lines are counted from the
    previous new dim.
    """
    out: list[DimAt] = []
    if buf.find(b"])", a, b) < 0:  # no shape at all: skip the search
        return out
    seen = set(known)
    skip = tuple(known[:SKIP_DIMS])
    pattern = unknown_dim_pattern(skip)
    pos = counted = a
    line = 0
    while (m := pattern.search(buf, pos, b)) is not None:
        dim = dim_ending_at(buf, m.start(), pos)  # (no ``])`` lies inside a shape: see above)
        pos = m.end()
        if dim is not None and dim not in seen:
            line += buf.count(b"\n", counted, m.start())
            counted = m.start()
            out.append((dim, line))
            seen.add(dim)
            if len(skip) < SKIP_DIMS:
                skip = (*skip, dim)
                pattern = unknown_dim_pattern(skip)
    return out


def run_tokens(buf: bytes | bytearray, a: int, b: int) -> RunTokens | None:
    """The first ``accept len`` and ``gen throughput`` token of every line of the plain run
    ``buf[a:b]``, each list with its JSON text, and the Decode lines' work tokens
    (``WORK_LINE_B``); ``None`` when a token is not a plain finite decimal (the line-by-line
    path drops an infinite value): such a run is parsed line by line, which is rare and exact.

    The accept tokens usually come with the work tokens, from one pass (:data:`RUN_WORK_B`):
    each of its matches is on its own line and holds one "accept len: "; when the run holds no
    other (one ``count``), every line's first accept token is its match's, in order, which is
    what ``ACC_LINE_B`` would find (``paired``). Otherwise (a debug print quoting a Decode line,
    a token ``ACC_LINE_B`` reads and WORK does not) ``ACC_LINE_B`` reads them. A run without
    "accept len: " (a non-speculative server) skips both passes.
    """
    n_acc = buf.count(ACC_TEXT, a, b)
    acc: list[bytes]
    work: list[Work]
    paired = False
    if not n_acc:
        acc, work = [], []
    elif a and buf[a - 1] == 0x0A:
        work = RUN_WORK_B.findall(buf, a - 1, b)
        paired = len(work) == n_acc
        acc = list(map(_ACC_OF, work)) if paired else ACC_LINE_B.findall(buf, a, b)
    else:  # no newline in front (a raw run's own buffer): the line-start patterns
        acc, work = ACC_LINE_B.findall(buf, a, b), WORK_LINE_B.findall(buf, a, b)
    gen = GEN_LINE_B.findall(buf, a, b)
    acc_text, gen_text = b",".join(acc), b",".join(gen)
    if not (valid_tokens(acc_text) and valid_tokens(gen_text)):
        return None
    return RunTokens(acc, acc_text, gen, gen_text, work, paired)


def accept_counts(work: Counter[Work]) -> Counter[bytes]:
    """The accept tokens' counts of a run whose tokens are ``paired``: one step per distinct
    ``(running, accept len)``, not one per line."""
    counts: Counter[bytes] = Counter()
    for (_, acc), n in work.items():
        counts[acc] += n
    return counts


def pieces(buf: bytes | bytearray, a: int, b: int, size: int) -> Iterator[tuple[int, int]]:
    """``buf[a:b]`` (whole lines) cut into runs of whole lines of about ``size`` bytes (a line
    longer than that is a run of its own)."""
    while b - a > size:
        cut = buf.find(b"\n", a + size, b) + 1
        if cut <= 0 or cut >= b:
            break
        yield a, cut
        a = cut
    yield a, b


class ChunkSummarizer:
    """Builds one chunk's :class:`ChunkSummary` from its lines, given in one or more windows.

    A worker reads its chunk a window at a time (``add`` each window's whole lines) so that
    its buffer stays small; the summary is the same as for the chunk in one piece up to how
    the runs of plain lines are cut, and ``apply`` adds runs up exactly. Runs are also
    summarized ``piece`` bytes at a time: the lists a run's ``findall`` builds stay small,
    which is most of a worker's own memory.
    """

    def __init__(self, piece: int = PIECE) -> None:
        self.piece = piece
        self.parts: list[ChunkPart] = []
        self.has_stats = False
        self.has_decode = False
        self.counts: Counter[bytes] = Counter()
        self.work: Counter[Work] = Counter()
        self.gen_values = array("d")  # 8 bytes a value, not a float object
        self.done = 0  # bytes of the chunk added so far
        self.mark = -1

    def add(self, buf: bytes | bytearray, end: int) -> None:
        """The lines ``buf[1:end]`` (``buf[0]`` and ``buf[end - 1]`` newlines), as
        ``ReportBuilder.feed`` would do them with the engine known and "serving" seen."""
        if self.mark < 0:
            at = mark_line(buf, end)
            self.mark = -1 if at < 0 else self.done + at
        self.done += end - 1
        parts = self.parts
        for a, b, alone in _runs(buf, end, self.piece):
            if alone:
                parts.append(LoneLine(bytes(buf[a:b])))
                continue
            lines = buf.count(b"\n", a, b)
            if not self.has_decode:
                self.has_decode = any(buf.find(t, a, b) >= 0 for t in DECODE_TEXT)
                self.has_stats = self.has_stats or self.has_decode or \
                    buf.find(STATS_TEXT[-1], a, b) >= 0
            tokens = run_tokens(buf, a, b)
            if tokens is None:
                parts.append(RawRun(lines, bytes(buf[a:b])))
                continue
            acc, gen = tokens.acc, tokens.gen
            work = Counter(tokens.work)
            self.counts.update(accept_counts(work) if tokens.paired else acc)
            self.work.update(work)
            values = self.gen_values
            values.extend(map(float, gen))
            parts.append(NumberRun(
                lines, tokens.acc_text, len(acc), list(map(float, acc[-TAIL:])),
                tokens.gen_text, len(gen), values[len(values) - min(len(gen), TAIL):].tolist(),
                new_dims(buf, a, b)))

    def result(self) -> ChunkSummary:
        _trim_tails(self.parts)
        return ChunkSummary(self.parts, self.has_stats, dict(self.counts),
                            array("d", sorted(self.gen_values)).tobytes(), dict(self.work),
                            self.mark, self.done, self.has_decode)


def mark_line(buf: bytes | bytearray, end: int) -> int:
    """Where the line of the first bench marker of the lines ``buf[1:end]`` starts, counted from
    ``buf[1]``; -1 if they hold none. One ``find`` per chunk: the report's own pass tells the
    windows whether (and from where) to read the log again, instead of a scan of its own."""
    i = buf.find(BENCH_MARK, 1, end)
    return -1 if i < 0 else buf.rfind(b"\n", 0, i)


def summarize_chunk(buf: bytes | bytearray, end: int, piece: int = PIECE) -> ChunkSummary:
    """The bulk work of the lines ``buf[1:end]`` (``buf[0]`` and ``buf[end - 1]`` newlines),
    as ``ReportBuilder.feed`` would do it with the engine known and "serving" seen."""
    summarizer = ChunkSummarizer(piece)
    summarizer.add(buf, end)
    return summarizer.result()


def _trim_tails(parts: list[ChunkPart]) -> None:
    """Empty the tails of number runs whose values later number runs push out of ``TAIL``
    anyway (values of other parts only push more out): a chunk of many runs carries one tail's
    worth."""
    acc_after = gen_after = 0
    for i in range(len(parts) - 1, -1, -1):
        part = parts[i]
        if not isinstance(part, NumberRun):
            continue
        if acc_after >= TAIL or gen_after >= TAIL:
            parts[i] = part._replace(acc_tail=[] if acc_after >= TAIL else part.acc_tail,
                                     gen_tail=[] if gen_after >= TAIL else part.gen_tail)
        acc_after += part.acc_n
        gen_after += part.gen_n


# ------------------------------------------------------------------------------ the wire
_KINDS = (LoneLine, RawRun, NumberRun)  # a part's kind tag on the wire: its index here
_TAG: dict[type, int] = {kind: tag for tag, kind in enumerate(_KINDS)}


def to_wire(summary: ChunkSummary) -> tuple[Any, ...]:
    """``summary`` as exact tuples, lists, dicts, bytes, ints and floats (what ``marshal``
    takes): each part as ``(kind tag, its fields)``."""
    tag = _TAG
    return ([(tag[type(part)], tuple(part)) for part in summary.parts],
            summary.has_stats, summary.accept_counts, summary.gen_sorted, summary.work_counts,
            summary.mark, summary.size, summary.has_decode)


def from_wire(data: Any) -> ChunkSummary:
    """The :class:`ChunkSummary` that :func:`to_wire` gave ``data`` for."""
    parts, has_stats, counts, block, work, mark, size, has_decode = data
    kinds = _KINDS
    named: list[ChunkPart] = [kinds[tag]._make(fields) for tag, fields in parts]
    return ChunkSummary(named, has_stats, counts, block, work, mark, size, has_decode)


__all__ = [
    "ACC_TEXT",
    "BENCH_MARK",
    "DECODE_TEXT",
    "PIECE",
    "RUN_WORK_B",
    "SKIP_DIMS",
    "STATS_TEXT",
    "WORK_LINE_B",
    "ChunkPart",
    "ChunkSummarizer",
    "ChunkSummary",
    "DimAt",
    "LoneLine",
    "NumberRun",
    "RawRun",
    "RunTokens",
    "Work",
    "accept_counts",
    "from_wire",
    "mark_line",
    "new_dims",
    "pieces",
    "run_tokens",
    "summarize_chunk",
    "to_wire",
]
