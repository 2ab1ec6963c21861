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
import json
import math
import tempfile
from array import array
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import IO, Any, BinaryIO

from .alerts import evaluate_alerts
from .detect import ACC_B, DIM_B, GEN_B, NON_BULK_AFTER_NL, unknown_dim_pattern, valid_tokens
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
from .parser import LogParser, scan_chunk
from .series import Series
from .state import DashboardState, reduce

CHUNK = 4 << 20
_STATS_TEXT = (b"Decode batch", b"(token/s)", b"accept len")
TAIL = 600  # values kept for the alert rules (Series.maxlen)


def _text(value: float) -> bytes:
    """A float as a plain decimal (JSON-valid, no exponent: the median pass splits on '.')."""
    r = repr(value)
    return (r if "e" not in r else f"{value:.12f}".rstrip("0").rstrip(".")).encode()


class NumberSpool:
    """An append-only list of numbers kept on disk, as JSON text and as binary doubles.

    The text is what ``write_json`` copies out; the doubles feed the statistics: the mean is
    one exactly rounded ``math.fsum`` over all of them (so it does not depend on how values
    were batched), and with ``median=True`` a histogram of integer parts names the one or two
    buckets holding the middle ranks, which one more pass over the doubles collects.
    """

    def __init__(self, median: bool = False) -> None:
        self._text: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=1 << 20)  # noqa: SIM115
        self._bin: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=1 << 20)  # noqa: SIM115
        self._hist: Counter[int] | None = Counter() if median else None
        self.count = 0
        self.tail: deque[float] = deque(maxlen=TAIL)

    def close(self) -> None:
        self._text.close()
        self._bin.close()

    def _write(self, text: bytes, values: list[float]) -> None:
        if self.count:
            self._text.write(b",")
        self._text.write(text)
        self._bin.write(array("d", values).tobytes())
        self.count += len(values)
        self.tail.extend(values[-TAIL:])
        if self._hist is not None:
            self._hist.update(map(math.floor, values))

    def add_tokens(self, tokens: list[bytes], joined: bytes) -> None:
        """Validated decimal tokens (``detect.valid_tokens(joined)``), written as they are."""
        if tokens:
            self._write(joined, list(map(float, tokens)))

    def add(self, value: float) -> None:
        if math.isfinite(value):
            self._write(_text(value), [value])

    def _doubles(self) -> Iterator[array[float]]:
        self._bin.seek(0)
        while chunk := self._bin.read(1 << 20):
            arr = array("d")
            arr.frombytes(chunk)
            yield arr
        self._bin.seek(0, 2)

    def mean(self) -> float | None:
        if not self.count:
            return None
        return math.fsum(chain.from_iterable(self._doubles())) / self.count

    def values(self) -> list[float]:
        """All values (tests and small logs only: this loads the whole list)."""
        return list(chain.from_iterable(self._doubles()))

    def median(self) -> float | None:
        """Exact median (mean of the two middle values for an even count), in bounded memory."""
        if not self.count or self._hist is None:
            return None
        ranks = sorted({(self.count - 1) // 2, self.count // 2})
        start: dict[int, int] = {}  # bucket → rank of its first value, for the needed buckets
        seen = 0
        for key in sorted(self._hist):
            n = self._hist[key]
            if any(seen <= r < seen + n for r in ranks):
                start[key] = seen
            seen += n
        lo, hi = min(start), max(start) + 1
        picked = sorted(v for arr in self._doubles() for v in arr if lo <= v < hi)
        first = start[lo]
        return sum(picked[r - first] for r in ranks) / len(ranks)

    def write_json(self, out: BinaryIO) -> None:
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

    def lines_of(self, buf: bytes, a: int, b: int, lineno: int) -> None:
        while a < b:
            e = buf.index(b"\n", a, b)
            self.line(buf[a:e], lineno)
            lineno += 1
            a = e + 1

    # ------------------------------------------------------------------ bulk runs
    def run(self, buf: bytes, a: int, b: int, lineno: int) -> None:
        """A run of bulk lines ``buf[a:b]`` starting at line ``lineno``."""
        while a < b:
            if self.parser.engine == "unknown":
                e = buf.index(b"\n", a, b)
                self.line(buf[a:e], lineno)
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
                    self.line(buf[s:e], lineno)
                    lineno, a = lineno + 1, e + 1
                    continue
            self._bulk(buf, a, b, lineno)
            return

    def _bulk(self, buf: bytes, a: int, b: int, lineno: int) -> None:
        n_dec = buf.count(b"Decode batch", a, b)
        if not n_dec and (buf.find(b"gen throughput (", a, b) >= 0
                          or buf.find(b"accept len: ", a, b) >= 0):
            self.lines_of(buf, a, b, lineno)  # stats quoted outside Decode lines: rare, exact
            return
        if n_dec:
            gen = GEN_B.findall(buf, a, b)
            acc = ACC_B.findall(buf, a, b)
            gen_text, acc_text = b",".join(gen), b",".join(acc)
            if (len(gen) != n_dec or len(acc) not in (0, n_dec) or not valid_tokens(gen_text)
                    or not valid_tokens(acc_text)):
                self.lines_of(buf, a, b, lineno)
                return
            self.gen.add_tokens(gen, gen_text)
            self.accept.add_tokens(acc, acc_text)
        pos = a
        while (m := self._unknown.search(buf, pos, b)) is not None:
            pos = m.end()
            d = DIM_B.match(buf, m.start(), b)
            if d is not None and int(d.group(1)) not in self.state.hidden_dims:
                at = lineno + buf.count(b"\n", a, m.start())
                self._reduce(HiddenStateDims(int(d.group(1)), at))

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
    rest = b""
    while chunk := stream.read(CHUNK):
        data = rest + chunk if rest else chunk
        cut = data.rfind(b"\n") + 1
        rest = data[cut:]
        if not cut:
            continue
        if fast:
            b.lines += scan_chunk(data, b.lines + 1, NON_BULK_AFTER_NL, b.line, b.run, cut)
        else:
            n = data.count(b"\n", 0, cut)
            b.lines_of(data, 0, cut, b.lines + 1)
            b.lines += n
    if rest:
        b.lines += 1
        b.line(rest, b.lines)
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
