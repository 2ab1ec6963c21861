"""The bulk work of one report chunk without the report's state: what parallel workers compute.

``ReportBuilder.feed`` (``model.report``) needs a little state that only the lines *before* a
chunk decide: the engine, whether "serving" was seen, the hidden-state dims already known, the
line number, the parser's and crash tracker's state. Everything else it does to a chunk is
stateless bulk work, and that is nearly all of the time. :func:`summarize_chunk` does exactly
that work on a chunk whose predecessors have not been read yet, assuming only the common case
(engine known, "serving" seen), and returns a :data:`ChunkSummary`; ``ReportBuilder.apply`` then
replays it *in file order* against the real state:

- lines that are not plain (``detect.NON_PLAIN_AFTER_NL``, ESC, CR) come back as their bytes, and
  go through the ordinary parser, so tracebacks and startup lines that straddle chunks (or
  workers) are parsed exactly as in one pass;
- a run of plain lines comes back as its line count, its number tokens as JSON text, the floats
  of its last ``TAIL`` values, and the first line of each distinct hidden-state dim it shows
  (``apply`` keeps those not known yet, which is what the serial dim search finds);
- a run whose tokens fail the check comes back whole, to be parsed line by line as in one pass;
- the chunk's statistics come pre-folded (token counts for the mean, one sorted block of
  doubles for the median): both statistics are exact whatever the order of their inputs.

When the assumption fails at the chunk's start (engine still unknown, or "serving" pending and
the chunk has a stats line) ``apply`` reads the chunk again and feeds it serially. Both are
monotone (an engine once detected stays, the phase only rises, a crash stays), so a chunk that
starts in the common case stays in it. The chunk boundaries are the serial reader's own
(``parser.read_chunks``): the runs, and hence the report's bytes, are identical.

Summaries are plain tuples, lists, dicts, bytes, ints and floats so that ``marshal`` (builtin,
fast) can carry them between processes.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterator
from typing import Union

from .classify import (
    ACC_LINE_B,
    GEN_LINE_B,
    NON_PLAIN_AFTER_NL,
    dim_ending_at,
    unknown_dim_pattern,
    valid_tokens,
)
from .parser import split_lines
from .series import Series

TAIL = Series().maxlen  # values kept for the alert rules: what the state's series keep
STATS_TEXT = (b"Decode batch", b"(token/s)", b"accept len")
PIECE = 1 << 18  # bytes of a plain run summarized at a time (see ``summarize_chunk``)

# (lines, acc_text, acc_n, acc_tail, gen_text, gen_n, gen_tail, dims): a plain run
PlainRun = tuple[int, bytes, int, list[float], bytes, int, list[float], list[tuple[int, int]]]
# (lines, data): a run to parse line by line (its tokens failed ``valid_tokens``)
SerialRun = tuple[int, bytes]
# bytes: a line handled alone
Item = Union[bytes, SerialRun, PlainRun]  # noqa: UP007 (a runtime alias: marshal-able data)
# (items, has_stats, accept token counts, sorted gen_throughput doubles as bytes)
ChunkSummary = tuple[list[Item], bool, dict[bytes, int], bytes]


def _runs(buf: bytes | bytearray, end: int, piece: int) -> Iterator[tuple[int, int, bool]]:
    for a, b, alone in split_lines(buf, 1, end, NON_PLAIN_AFTER_NL):
        if alone:
            yield a, b, True
        else:
            for x, y in pieces(buf, a, b, piece):
                yield x, y, False


def new_dims(buf: bytes | bytearray, a: int, b: int,
             known: tuple[int, ...] = ()) -> list[tuple[int, int]]:
    """``(dim, line)`` of the first occurrence of each distinct hidden-state dim not in
    ``known`` in the run ``buf[a:b]``, in order, ``line`` counted from 0 at ``a``.

    The pattern skips the dims already found (a debug-heavy run repeats one dim on every debug
    line), so the serial report passes the dims it knows; a worker, which knows none, passes
    nothing, and filtering its results in order against the known dims gives the same events.
    """
    out: list[tuple[int, int]] = []
    if buf.find(b"])", a, b) < 0:  # no shape at all: skip the search
        return out
    pattern = unknown_dim_pattern(known)
    pos = a
    while (m := pattern.search(buf, pos, b)) is not None:
        pos = m.end()
        dim = dim_ending_at(buf, m.start(), a)
        if dim is not None and dim not in known:
            out.append((dim, buf.count(b"\n", a, m.start())))
            known = (*known, dim)
            pattern = unknown_dim_pattern(known)
    return out


RunTokens = tuple[list[bytes], bytes, list[bytes], bytes]


def run_tokens(buf: bytes | bytearray, a: int, b: int) -> RunTokens | None:
    """The first ``accept len`` and ``gen throughput`` token of every line of the plain run
    ``buf[a:b]``, each list with its JSON text; ``None`` when a token is not a plain finite
    decimal (the line-by-line path drops an infinite value): such a run is parsed line by line,
    which is rare and exact."""
    acc = ACC_LINE_B.findall(buf, a, b)
    gen = GEN_LINE_B.findall(buf, a, b)
    acc_text, gen_text = b",".join(acc), b",".join(gen)
    if not (valid_tokens(acc_text) and valid_tokens(gen_text)):
        return None
    return acc, acc_text, gen, gen_text


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
    """Builds one chunk's :data:`ChunkSummary` from its lines, given in one or more windows.

    A worker reads its chunk a window at a time (``add`` each window's whole lines) so that
    its buffer stays small; the summary is the same as for the chunk in one piece up to how
    the runs of plain lines are cut, and ``apply`` adds runs up exactly. Runs are also
    summarized ``piece`` bytes at a time: the lists a run's ``findall`` builds stay small,
    which is most of a worker's own memory.
    """

    def __init__(self, piece: int = PIECE) -> None:
        self.piece = piece
        self.items: list[Item] = []
        self.has_stats = False
        self.counts: Counter[bytes] = Counter()
        self.gen_values = array("d")  # 8 bytes a value, not a float object
    def add(self, buf: bytes | bytearray, end: int) -> None:
        """The lines ``buf[1:end]`` (``buf[0]`` and ``buf[end - 1]`` newlines), as
        ``ReportBuilder.feed`` would do them with the engine known and "serving" seen."""
        items = self.items
        for a, b, alone in _runs(buf, end, self.piece):
            if alone:
                items.append(bytes(buf[a:b]))
                continue
            lines = buf.count(b"\n", a, b)
            if not self.has_stats:
                self.has_stats = any(buf.find(t, a, b) >= 0 for t in STATS_TEXT)
            tokens = run_tokens(buf, a, b)
            if tokens is None:
                items.append((lines, bytes(buf[a:b])))
                continue
            acc, acc_text, gen, gen_text = tokens
            self.counts.update(acc)
            values = self.gen_values
            values.extend(map(float, gen))
            items.append((lines, acc_text, len(acc), list(map(float, acc[-TAIL:])),
                          gen_text, len(gen), values[len(values) - min(len(gen), TAIL):].tolist(),
                          new_dims(buf, a, b)))

    def result(self) -> ChunkSummary:
        _trim_tails(self.items)
        return (self.items, self.has_stats, dict(self.counts),
                array("d", sorted(self.gen_values)).tobytes())


def summarize_chunk(buf: bytes | bytearray, end: int, piece: int = PIECE) -> ChunkSummary:
    """The bulk work of the lines ``buf[1:end]`` (``buf[0]`` and ``buf[end - 1]`` newlines),
    as ``ReportBuilder.feed`` would do it with the engine known and "serving" seen."""
    summarizer = ChunkSummarizer(piece)
    summarizer.add(buf, end)
    return summarizer.result()


def _trim_tails(items: list[Item]) -> None:
    """Empty the tails of plain runs whose values later plain runs push out of ``TAIL`` anyway
    (values of other items only push more out): a chunk of many runs carries one tail's worth."""
    acc_after = gen_after = 0
    for i in range(len(items) - 1, -1, -1):
        item = items[i]
        if isinstance(item, bytes) or len(item) == 2:
            continue
        n, acc_text, acc_n, acc_tail, gen_text, gen_n, gen_tail, dims = item
        if acc_after >= TAIL or gen_after >= TAIL:
            items[i] = (n, acc_text, acc_n, [] if acc_after >= TAIL else acc_tail,
                        gen_text, gen_n, [] if gen_after >= TAIL else gen_tail, dims)
        acc_after += acc_n
        gen_after += gen_n


__all__ = ["PIECE", "STATS_TEXT", "ChunkSummarizer", "ChunkSummary", "Item", "PlainRun",
           "RunTokens", "SerialRun", "new_dims", "pieces", "run_tokens", "summarize_chunk"]
