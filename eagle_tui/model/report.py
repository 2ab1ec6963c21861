"""The ``report`` object: one pass over a log, constant memory, the JSON contract.

:class:`ReportBuilder` consumes the parser's events and folds the rare ones (phases, crash,
speculative settings, models, hidden dims) into a :class:`DashboardState` with ``reduce``, so the
report says exactly what the dashboard would. The per-line numbers (``accept_len``,
``gen_throughput``) go to :class:`NumberSpool`\\ s instead: a 5 M-line log has millions of them,
and memory must stay flat. A spool writes them to a temporary file as the JSON text they will
be printed as, keeps the running sum, the last values (for the alert rules) and a histogram of
integer parts, from which the exact median is found with one more pass over the file.

:func:`build_report` reads a binary stream in chunks. ``fast=True`` (the default) hands the
chunk to :func:`parser.scan_chunk`: lines that are not bulk lines go through the parser one by
one; each run of bulk lines is handled here in a few C-level passes (count the ``Decode batch``
lines, ``findall`` their numbers, search for hidden-state dims not seen yet). When a run does not
pass the integrity check (one number per Decode line, every number a plain decimal) it is parsed
line by line instead, so ``fast=True`` and ``fast=False`` give the same report.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import stat
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
from .parser import LogParser, split_lines
from .series import Series
from .state import DashboardState, reduce

CHUNK = 4 << 20  # bytes read per chunk (the buffer is reused; it grows only for a longer line)
_STATS_TEXT = (b"Decode batch", b"(token/s)", b"accept len")
TAIL = 600  # values kept for the alert rules (Series.maxlen)
CAP = 1 << 16  # distinct values a mean-only spool counts before folding them into its sum
BLOCK = 1 << 16  # values a median spool sorts and writes at once
STEP = 128  # a median spool keeps every STEP-th value of each sorted block in memory
_SCALE = 1 << 1074  # every finite double times this is an integer (exact sums)
_MAX_TOKEN = 308  # a decimal token this long or shorter is a finite double


def _text(value: float) -> bytes:
    """A float as a plain decimal (JSON-valid, no exponent)."""
    r = repr(value)
    return (r if "e" not in r else f"{value:.12f}".rstrip("0").rstrip(".")).encode()


class NumberSpool:
    """An append-only list of numbers: the JSON text on disk, statistics in bounded memory.

    The text is what ``write_json`` copies out. The statistics never hold all the values:

    - mean (``median=False``): a log repeats values (``accept len`` has a few hundred distinct
      ones), so tokens are counted as they come — one C-level ``Counter.update`` per batch, no
      float per value — and folded, past ``CAP`` distinct ones and at the end, into an exact
      integer sum of the values' ratios. The mean is that sum rounded once (exactly what
      ``math.fsum`` gives) divided by the count.
    - median (``median=True``): values are sorted ``BLOCK`` at a time (C-level) and written to
      disk; every ``STEP``-th value of each block stays in memory. Those samples bound the
      middle ranks to a range holding at most ~2 × blocks × ``STEP`` values, which one pass
      over the blocks (``bisect``, no per-value Python) collects: the median is exact.
    """

    def __init__(self, median: bool = False) -> None:
        self._text: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=1 << 20)  # noqa: SIM115
        self._median = median
        self._counts: Counter[bytes] = Counter()  # mean: token → times seen
        self._floats: Counter[float] = Counter()  # mean: value (from ``add``) → times seen
        self._sums: dict[int, int] = {}  # mean: denominator → sum of numerators (folded)
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

    def _write(self, text: bytes) -> None:
        if self.count:
            self._text.write(b",")
        self._text.write(text)

    def add_tokens(self, tokens: list[bytes], joined: bytes,
                   floats: list[float] | None = None) -> None:
        """Tokens that are plain decimals and finite doubles (``detect.valid_tokens(joined)``,
        no more than ``_MAX_TOKEN`` long), written as they are. ``floats``: their values, if
        the caller has them (a median spool needs them, a mean spool only counts tokens)."""
        if not tokens:
            return
        self._write(joined)
        self.count += len(tokens)
        if self._median:
            values = list(map(float, tokens)) if floats is None else floats
            self._pending.extend(values)
            self.tail.extend(values[-TAIL:])
            if len(self._pending) >= BLOCK:
                self._flush()
            return
        self._counts.update(tokens)
        self.tail.extend(map(float, tokens[-TAIL:]))
        if len(self._counts) + len(self._floats) > CAP:
            self._fold()

    def add(self, value: float) -> None:
        if not math.isfinite(value):
            return
        self._write(_text(value))
        self.count += 1
        self.tail.append(value)
        if self._median:
            self._pending.append(value)
            if len(self._pending) >= BLOCK:
                self._flush()
            return
        self._floats[value] += 1
        if len(self._counts) + len(self._floats) > CAP:
            self._fold()

    # ------------------------------------------------------------------ mean
    def _fold(self) -> None:
        """Add the counted values to the exact sum (grouped by their power-of-two denominator,
        so big-integer work is per distinct denominator, not per value)."""
        sums = self._sums
        values: Iterator[tuple[float, int]] = chain(
            zip(map(float, self._counts), self._counts.values(), strict=True),
            self._floats.items())
        for v, n in values:
            p, q = v.as_integer_ratio()
            sums[q] = sums.get(q, 0) + n * p
        self._counts.clear()
        self._floats.clear()

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
        # fewer than ranks[0] values lie below samples[i] when i <= ranks[0] // STEP, and more
        # than ranks[-1] lie at or below samples[j] when j >= ranks[-1] // STEP + blocks
        margin = len(self._sizes)
        while True:
            i = ranks[0] // STEP - margin
            j = ranks[-1] // STEP + margin
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
            margin = 2 * margin + len(samples)  # not reached (see above); widen to be safe

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
        # every token a plain decimal, and finite (a value the line-by-line path would drop as
        # infinite must not be written): else this run goes line by line, which is rare and exact
        ok = valid_tokens(acc_text) and valid_tokens(gen_text)
        gen_values = list(map(float, gen)) if ok else []
        if not (ok and math.isfinite(sum(gen_values))
                and (not acc or max(map(len, acc)) <= _MAX_TOKEN)):
            self.lines_of(buf, a, b, lineno)
            return
        self.accept.add_tokens(acc, acc_text)
        self.gen.add_tokens(gen, gen_text, gen_values)
        pos = a
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


def _fill(stream: BinaryIO, buf: bytearray, filled: int) -> int:
    """Read into ``buf[filled:]`` until it is full or the stream ends; return the new fill."""
    readinto = getattr(stream, "readinto", None)
    while filled < len(buf):
        if readinto is not None:
            with memoryview(buf) as view, view[filled:] as free:
                n = readinto(free)
        else:
            data = stream.read(len(buf) - filled)
            n = len(data)
            buf[filled : filled + n] = data
        if not n:
            break
        filled += n
    return filled


def _buffer_size(stream: BinaryIO) -> int:
    """``CHUNK``, or less for a small regular file (no 4 MB to zero for a 2 kB log)."""
    try:
        st = os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return CHUNK
    return max(min(CHUNK, st.st_size + 1), 1 << 16) if stat.S_ISREG(st.st_mode) else CHUNK


def build_report(stream: BinaryIO, name: str, *, fast: bool = True,
                 baseline: float | None = None) -> dict[str, Any]:
    """Read ``stream`` to the end and return the report (spools still open, see ``dump``).

    One buffer is reused for every chunk (no allocation, no copy but the read itself), with a
    newline kept in front of the chunk so every line, the first included, follows a newline.
    """
    b = ReportBuilder(name, baseline)
    buf = bytearray(_buffer_size(stream) + 1)
    buf[0] = 10  # "\n"
    filled = 1
    while True:
        if filled == len(buf):  # one line longer than the buffer
            buf.extend(bytes(len(buf)))
        top = _fill(stream, buf, filled)
        eof = top < len(buf)
        cut = buf.rfind(b"\n", 1, top) + 1
        if cut:
            if fast:
                b.feed(buf, cut)
            else:
                b.lines_of(buf, 1, cut, b.lines + 1)
                b.lines += buf.count(b"\n", 1, cut)
            rest = top - cut
            buf[1 : 1 + rest] = buf[cut:top]
            filled = 1 + rest
        else:
            filled = top
        if eof:
            break
    if filled > 1:
        b.lines += 1
        b.line(bytes(buf[1:filled]), b.lines)
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
