"""The ``report`` object: one pass over a log, constant memory, the JSON contract.

:class:`ReportBuilder` consumes the parser's events and folds the rare ones (phases, crash,
speculative settings, models, hidden dims) into a :class:`DashboardState` with ``reduce``, so the
report says exactly what the dashboard would. The per-line numbers (``accept_len``,
``gen_throughput``) go to :class:`NumberSpool`\\ s instead: a 5 M-line log has millions of them,
and memory must stay flat (text on disk, statistics in bounded memory).

:func:`build_report` reads the log in chunks into one reused buffer (``parser.read_chunks``).
With ``fast=True`` (the default) the lines of a chunk that are not *plain* bulk lines
(``detect.NON_PLAIN_AFTER_NL``: one regex pass finds them) go through the parser one by one; a
run of plain lines costs a handful of C-level passes, whatever its length: ``findall`` the first
accept len / tok/s number of every line (``detect.ACC_LINE_B``, ``GEN_LINE_B``), search for a
hidden-states shape whose dim is not known yet (``detect.unknown_dim_pattern``), count the
newlines. Python never touches a plain line. A run whose numbers fail the check (every token a
plain decimal and a finite double) is parsed line by line instead, so ``fast=True`` and
``fast=False`` give the same report (tested on every fixture and on generated logs).
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import tempfile
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import IO, Any, BinaryIO

from .alerts import evaluate_alerts
from .detect import (
    ACC_LINE_B,
    GEN_LINE_B,
    NON_PLAIN_AFTER_NL,
    dim_ending_at,
    unknown_dim_pattern,
    valid_tokens,
)
from .events import (
    Baseline,
    CrashEvent,
    DecodeStats,
    Event,
    HiddenStateDims,
    LogLine,
    Phase,
    PrefillStats,
    SpecStats,
)
from .parser import LogParser, read_chunks, split_lines
from .series import Series
from .state import DashboardState, reduce

CHUNK = 4 << 20  # bytes read per chunk (the buffer is reused; it grows only for a longer line)
_STATS_TEXT = (b"Decode batch", b"(token/s)", b"accept len")
TAIL = 600  # values kept for the alert rules (Series.maxlen)
CAP = 1 << 16  # distinct values a mean-only spool counts before folding them into its sum
BLOCK = 1 << 16  # values a median spool sorts and writes at once
STEP = 128  # a median spool keeps every STEP-th value of each sorted block in memory
_SCALE = 1 << 1074  # every finite double times this is an integer (exact sums)


def _text(value: float) -> bytes:
    """A float as a plain decimal (JSON-valid, no exponent)."""
    r = repr(value)
    return (r if "e" not in r else f"{value:.12f}".rstrip("0").rstrip(".")).encode()


class NumberSpool:
    """An append-only list of numbers: the JSON text on disk, statistics in bounded memory.

    ``write_json`` copies the text out. The statistics never hold all the values:

    - mean (``median=False``): a log repeats values (``accept len`` has a few hundred distinct
      ones), so tokens are counted as they come (one C-level ``Counter.update`` per batch, no
      float per value) and folded, past ``CAP`` distinct ones and at the end, into an exact
      integer sum; the mean is that sum rounded once (exactly what ``math.fsum`` gives) / count.
    - median (``median=True``): values are sorted ``BLOCK`` at a time (C-level) onto disk, and
      every ``STEP``-th value of a block stays in memory. These samples bound the middle ranks
      to a range of at most ~2 × blocks × ``STEP`` values, which one pass collects (``bisect``
      per block): the median is exact.
    """

    def __init__(self, median: bool = False) -> None:
        self._text: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=1 << 20)  # noqa: SIM115
        self._median = median
        self._counts: Counter[bytes] = Counter()  # mean: token → times seen
        self._sums: dict[int, int] = {}  # mean: power-of-two denominator → sum of numerators
        self._pending: list[float] = []  # median: values not in a block yet
        self._blocks: IO[bytes] | None = None  # median: sorted blocks of doubles
        self._sizes: list[int] = []
        self._samples: list[float] = []
        self.count = 0
        self.tail: deque[float] = deque(maxlen=TAIL)

    def close(self) -> None:
        self._text.close()
        if self._blocks is not None:
            self._blocks.close()

    def _write(self, text: bytes, n: int) -> None:
        if self.count:
            self._text.write(b",")
        self._text.write(text)
        self.count += n

    def add_tokens(self, tokens: list[bytes], joined: bytes) -> None:
        """Tokens that are plain decimals and finite doubles (``detect.valid_tokens(joined)``),
        written as they are."""
        if not tokens:
            return
        self._write(joined, len(tokens))
        if self._median:
            values = list(map(float, tokens))
            self.tail.extend(values[-TAIL:])
            self._pending.extend(values)
            if len(self._pending) >= BLOCK:
                self._flush()
        else:
            self.tail.extend(map(float, tokens[-TAIL:]))
            self._counts.update(tokens)
            if len(self._counts) > CAP:
                self._fold()

    def add(self, value: float) -> None:
        if not math.isfinite(value):
            return
        self._write(_text(value), 1)
        self.tail.append(value)
        if self._median:
            self._pending.append(value)
            if len(self._pending) >= BLOCK:
                self._flush()
        else:
            self._sum(value, 1)

    # ------------------------------------------------------------------ mean
    def _sum(self, value: float, n: int) -> None:
        p, q = value.as_integer_ratio()  # exact; big-integer work only per distinct q, at the end
        self._sums[q] = self._sums.get(q, 0) + n * p

    def _fold(self) -> None:
        for token, n in self._counts.items():
            self._sum(float(token), n)
        self._counts.clear()

    def mean(self) -> float | None:
        if not self.count:
            return None
        if self._median:
            return math.fsum(chain.from_iterable(self._sorted_blocks())) / self.count
        self._fold()
        total = sum(num * (_SCALE // q) for q, num in self._sums.items())
        return (total / _SCALE) / self.count

    # ------------------------------------------------------------------ median
    def _flush(self) -> None:
        if not self._pending:
            return
        if self._blocks is None:
            self._blocks = tempfile.TemporaryFile()  # noqa: SIM115
        block = array("d", sorted(self._pending))
        self._pending.clear()
        self._blocks.write(block.tobytes())
        self._sizes.append(len(block))
        self._samples.extend(block[::STEP])

    def _sorted_blocks(self) -> Iterator[array[float]]:
        self._flush()
        if self._blocks is None:
            return
        self._blocks.seek(0)
        for n in self._sizes:
            block = array("d")
            block.frombytes(self._blocks.read(n * 8))
            yield block
        self._blocks.seek(0, 2)

    def median(self) -> float | None:
        """Exact median (mean of the two middle values for an even count), in bounded memory."""
        if not self.count or not self._median:
            return None
        ranks = sorted({(self.count - 1) // 2, self.count // 2})
        self._flush()
        samples = sorted(self._samples)
        # fewer than r values lie below samples[i] if i <= r // STEP (a block's values below a
        # sample are at most STEP per sample before it), and more than r at or below samples[j]
        # if j >= r // STEP + blocks (at most STEP - 1 per block lie between samples)
        margin = len(self._sizes)
        while True:
            i, j = ranks[0] // STEP - margin, ranks[-1] // STEP + margin
            lo = samples[i] if i > 0 else -math.inf
            hi = samples[j] if j < len(samples) else math.inf
            below = 0
            middle: list[float] = []
            for block in self._sorted_blocks():
                a = bisect_left(block, lo)
                below += a
                middle.extend(block[a : bisect_right(block, hi)])
            if below <= ranks[0] and ranks[-1] < below + len(middle):
                middle.sort()
                return sum(middle[r - below] for r in ranks) / len(ranks)
            margin += len(samples)  # never needed (see above): widen to everything, to be safe

    # ------------------------------------------------------------------ out
    def values(self) -> list[float]:
        """All values in order (tests and small logs only: this loads the whole list)."""
        out = io.BytesIO()
        self.write_json(out)
        values: list[float] = json.loads(out.getvalue(), parse_int=float)
        return values

    def write_json(self, out: BinaryIO | io.BytesIO) -> None:
        out.write(b"[")
        self._text.seek(0)
        while chunk := self._text.read(1 << 20):
            out.write(chunk)
        self._text.seek(0, 2)
        out.write(b"]")


class ReportBuilder:
    """Folds parser events into the report's state and spools."""

    def __init__(self, name: str, baseline: float | None = None) -> None:
        self.name = name
        self.parser = LogParser()
        self.state = DashboardState()
        if baseline:
            self.state = reduce(self.state, [Baseline(baseline, "report")])
        self.lines = 0
        self.accept = NumberSpool()
        self.gen = NumberSpool(median=True)
        self._unknown = unknown_dim_pattern(())

    # ------------------------------------------------------------------ events
    def _serving_pending(self) -> bool:
        return self.state.phase.rank < Phase.SERVING.rank and self.state.crash is None

    def add(self, events: Iterable[Event]) -> None:
        for ev in events:
            if isinstance(ev, DecodeStats):
                if ev.gen_tps is not None:
                    self.gen.add(ev.gen_tps)
                if ev.accept_len is not None:
                    self.accept.add(ev.accept_len)
                if self._serving_pending():
                    self.state = reduce(self.state, [ev])
            elif isinstance(ev, SpecStats):
                if ev.mean_accept_len is not None:
                    self.accept.add(ev.mean_accept_len)
            elif isinstance(ev, LogLine | PrefillStats):
                continue
            else:
                self._reduce(ev)

    def _reduce(self, ev: Event) -> None:
        before = self.state.hidden_dims
        self.state = reduce(self.state, [ev])
        if self.state.hidden_dims != before:
            self._unknown = unknown_dim_pattern(self.state.hidden_dims)

    def line(self, raw: bytes, lineno: int) -> None:
        self.add(self.parser.parse_line(raw, lineno, False))

    def lines_of(self, buf: bytes | bytearray, a: int, b: int, lineno: int) -> None:
        while a < b:
            e = buf.index(b"\n", a, b)
            self.line(bytes(buf[a:e]), lineno)
            lineno += 1
            a = e + 1

    # ------------------------------------------------------------------ chunks
    def feed(self, buf: bytearray, end: int) -> None:
        """The lines ``buf[1:end]``: ``buf[0]`` and ``buf[end - 1]`` are newlines.

        Lines that are not plain (``detect.NON_PLAIN_AFTER_NL``, or holding ESC or CR) go
        through the parser one by one, in order; the runs of plain lines between them go to
        ``run``.
        """
        lineno = self.lines + 1
        for a, b, alone in split_lines(buf, 1, end, NON_PLAIN_AFTER_NL):
            if alone:
                self.line(bytes(buf[a:b]), lineno)
                lineno += 1
            else:
                self.run(buf, a, b, lineno)
                lineno += buf.count(b"\n", a, b)
        self.lines = lineno - 1

    def run(self, buf: bytearray, a: int, b: int, lineno: int) -> None:
        """A run of plain lines ``buf[a:b]`` starting at line ``lineno``."""
        while a < b:
            if self.parser.engine == "unknown":
                e = buf.index(b"\n", a, b)
                self.line(bytes(buf[a:e]), lineno)
                lineno, a = lineno + 1, e + 1
                continue
            if self._serving_pending():
                # the first stats line of the run decides "serving" (a Decode line, or a
                # debug print quoting one)
                found = [j for j in (buf.find(t, a, b) for t in _STATS_TEXT) if j >= 0]
                if found:
                    i = min(found)
                    s = max(buf.rfind(b"\n", a, i) + 1, a)
                    if s > a:
                        self._bulk(buf, a, s, lineno)
                        lineno += buf.count(b"\n", a, s)
                    e = buf.index(b"\n", s, b)
                    self.line(bytes(buf[s:e]), lineno)
                    lineno, a = lineno + 1, e + 1
                    continue
            self._bulk(buf, a, b, lineno)
            return

    def _bulk(self, buf: bytearray, a: int, b: int, lineno: int) -> None:
        acc = ACC_LINE_B.findall(buf, a, b)
        gen = GEN_LINE_B.findall(buf, a, b)
        acc_text, gen_text = b",".join(acc), b",".join(gen)
        # every token a plain decimal and finite (the line-by-line path drops an infinite value):
        # else this run goes line by line, which is rare and exact
        if not (valid_tokens(acc_text) and valid_tokens(gen_text)):
            self.lines_of(buf, a, b, lineno)
            return
        self.accept.add_tokens(acc, acc_text)
        self.gen.add_tokens(gen, gen_text)
        pos = a if buf.find(b"])", a, b) >= 0 else b  # no shape at all: skip the search
        while (m := self._unknown.search(buf, pos, b)) is not None:
            pos = m.end()
            dim = dim_ending_at(buf, m.start(), a)
            if dim is not None and dim not in self.state.hidden_dims:
                at = lineno + buf.count(b"\n", a, m.start())
                self._reduce(HiddenStateDims(dim, at))

    # ------------------------------------------------------------------ result
    def finish(self) -> dict[str, Any]:
        self.add(self.parser.finish())
        st = self.state
        final = dataclasses.replace(
            st,
            accept_len=Series(tuple((0.0, v) for v in self.accept.tail), TAIL),
            gen_tps=Series(tuple((0.0, v) for v in self.gen.tail), TAIL),
        )
        alerts = evaluate_alerts(final)
        crash: CrashEvent | None = st.crash
        spec = st.spec
        return {
            "file": self.name,
            "engine": st.engine,
            "lines": self.lines,
            "phase": st.phase.value,
            "ready": st.ready,
            "phases": [{"phase": m.phase.value, "line": m.lineno, "time": m.time}
                       for m in st.phases],
            "crash": None if crash is None else {"kind": crash.kind, "line": crash.lineno,
                                                 "message": crash.message, "hint": crash.hint},
            "speculative": None if spec is None else {
                "algorithm": spec.algorithm, "draft_model": spec.draft_model,
                "num_steps": spec.num_steps, "eagle_topk": spec.eagle_topk,
                "num_draft_tokens": spec.num_draft_tokens},
            "accept_len": self.accept,
            "gen_throughput": self.gen,
            "hidden_state_dims": list(st.hidden_dims),
            "summary": {"accept_len_mean": self.accept.mean(),
                        "gen_throughput_median": self.gen.median()},
            "alerts": [a.as_dict() for a in alerts],
            "models": [{"role": m.role, "architecture": m.architecture} for m in st.models],
        }


def build_report(stream: BinaryIO, name: str, *, fast: bool = True,
                 baseline: float | None = None) -> dict[str, Any]:
    """Read ``stream`` to the end and return the report (spools still open, see ``dump``)."""
    b = ReportBuilder(name, baseline)
    for buf, end, last in read_chunks(stream, CHUNK):
        if last:  # no newline at the end of the log
            b.lines += 1
            b.line(bytes(buf[1:end]), b.lines)
        elif fast:
            b.feed(buf, end)
        else:
            b.lines_of(buf, 1, end, b.lines + 1)
            b.lines += buf.count(b"\n", 1, end)
    return b.finish()


def dump(report: dict[str, Any], out: BinaryIO) -> None:
    """Write the report as one JSON object; spooled arrays are copied, not loaded."""
    out.write(b"{")
    for i, (key, value) in enumerate(report.items()):
        if i:
            out.write(b", ")
        out.write(json.dumps(key).encode() + b": ")
        if isinstance(value, NumberSpool):
            value.write_json(out)
        else:
            out.write(json.dumps(value).encode())
    out.write(b"}\n")


def close(report: dict[str, Any]) -> None:
    for value in report.values():
        if isinstance(value, NumberSpool):
            value.close()


def to_plain(report: dict[str, Any]) -> dict[str, Any]:
    """The report with arrays materialized (tests, small logs)."""
    out: dict[str, Any] = {}
    for key, value in report.items():
        out[key] = value.values() if isinstance(value, NumberSpool) else value
    return out


__all__ = ["CHUNK", "NumberSpool", "ReportBuilder", "build_report", "close", "dump", "to_plain"]
