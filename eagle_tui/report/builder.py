"""The report's builder: one pass over a log, constant memory, the JSON contract's object.

:class:`ReportBuilder` consumes the parser's events and folds the rare ones (phases, crash,
speculative settings, models, hidden dims) into a :class:`DashboardState` with ``reduce``, so the
report says exactly what the dashboard would. The per-line numbers (``accept_len``,
``gen_throughput``) go to :class:`NumberSpool`\\ s instead: a 5 M-line log has millions of them,
and memory must stay flat (text on disk, statistics in bounded memory).

More in docs/architecture.md, "Module notes", ``report/builder``.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, BinaryIO

from eagle_tui.model.acceptance import WorkTotals
from eagle_tui.model.events import (
    Baseline,
    CrashEvent,
    DecodeStats,
    Event,
    HiddenStateDims,
    LogLine,
    LogOpened,
    Phase,
    PrefillStats,
    SpecStats,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.classify import NON_PLAIN_AFTER_NL, valid_tokens
from eagle_tui.model.ingest.evidence import serving_inferred, worth_scanning
from eagle_tui.model.ingest.parser import LogParser, split_lines
from eagle_tui.model.series import Series
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.alerts import evaluate_alerts
from eagle_tui.model.views.hold import hold_line_dict, hold_of
from eagle_tui.model.views.ready import ready_seconds
from eagle_tui.model.views.runsummary import engine_fields
from eagle_tui.model.views.tiertext import tier_dict

from .chunk_summary import (
    DECODE_TEXT,
    STATS_TEXT,
    TAIL,
    WORK_LINE_B,
    ChunkSummary,
    LoneLine,
    NumberRun,
    RawRun,
    accept_counts,
    mark_line,
    new_dims,
    run_tokens,
)
from .plainscan import special_starts
from .reader import CHUNK, read_chunks
from .spool import NumberSpool


class ReportBuilder:
    """Folds parser events into the report's state and spools."""

    def __init__(self, name: str, baseline: float | None = None,
                 opened: LogOpened | None = None) -> None:
        """``opened``: the fold is the background summary of a dashboard that opened the log
        at its end (``report.prefix``), which shows the log's last run, as the dashboard does."""
        self.name = name
        self.parser = LogParser()
        self.state = DashboardState()
        if baseline:
            self.state = reduce(self.state, [Baseline(baseline, "report")])
        if opened is not None:
            self.state = reduce(self.state, [opened])
        self.lines = 0
        self.accept = NumberSpool()
        self.gen = NumberSpool(median=True)
        self.work = WorkTotals()  # vLLM's spec-metrics counts: the weighted accept length
        # SGLang's Decode lines: (running requests, accept len) → times seen; the weighted
        # accept length is Σ w·a / Σ w with w = running (acceptance.decode_weight)
        self.decode_work: Counter[tuple[int, float]] = Counter()
        self.offset = 0  # bytes of the log's lines read so far
        # the offset of the line of the log's first bench marker (``commands.report_windows``
        # reads the log's windows from there), None while none has been seen
        self.bench_mark: int | None = None

    # ------------------------------------------------------------------ events
    def _serving_pending(self) -> bool:
        st = self.state.startup
        return st.phase.rank < Phase.SERVING.rank and st.crash is None

    def _parser_pending(self) -> bool:
        """Whether the parser's own phase is not serving yet: a Decode line (or a print quoting
        one) moves it there, line by line, and the crash tracker reads it (a traceback's
        exception line is fatal before ready). The state may be serving already (a fragment's
        prefill batches) while the parser is not: a plain run must then still show the parser
        its first such line."""
        parser = self.parser
        return parser.phase.rank < Phase.SERVING.rank and not parser.crashed

    def _stats_pending(self) -> bool:
        return self._serving_pending() or self._parser_pending()

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
                if self._serving_pending():
                    self.state = reduce(self.state, [ev])
                spec = self.state.config.spec
                self.work.add(ev, spec.num_steps if spec is not None else None)
            elif isinstance(ev, PrefillStats):
                # a fragment's prefill batches are requests served: the reducer's inference
                if self._serving_pending():
                    self.state = reduce(self.state, [ev])
            elif isinstance(ev, LogLine):
                continue
            else:
                self._reduce(ev)

    def _reduce(self, ev: Event) -> None:
        self.state = reduce(self.state, [ev])

    def _wants_evidence(self) -> bool:
        """Whether a traceback line could still change the engine or phase (.evidence)."""
        st = self.state
        return st.startup.engine == "unknown" or st.startup.engine_inferred is not None or (
            st.startup.phase.rank < Phase.READY.rank)

    def line(self, raw: bytes, lineno: int) -> None:
        if not self._wants_evidence():
            self.add(self.parser.parse_line(raw, lineno, False))
        else:
            # the line itself too: its frames may name the engine or the phase (.evidence)
            events = self.parser.parse_line(raw, lineno, True)
            first = events[0] if events else None
            if isinstance(first, LogLine) and worth_scanning(first.kind, first.text):
                self._reduce(first)
            self.add(events)
        if b"accept len" in raw:  # the same rule as a plain run's (run_tokens' work)
            m = WORK_LINE_B.match(raw)
            if m is not None:
                self._add_work({(m.group(1), m.group(2)): 1})

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
        through the parser one by one, in order, repaired first with the plain line before them
        (``_stretch``: only such lines can be glued, wrapped or escaped, and finding them costs
        nothing more); the runs of plain lines between them go to ``run``.
        """
        self._marks(buf, end)
        lineno = self.lines + 1
        items = list(split_lines(buf, 1, end, NON_PLAIN_AFTER_NL, special_starts))
        k = 0
        while k < len(items):
            a, b, alone = items[k]
            lines: list[bytes] = []
            head = b
            if not alone:
                k += 1
                if not (k < len(items) and items[k][2]):  # no line to repair follows
                    self.run(buf, a, b, lineno)
                    lineno += buf.count(b"\n", a, b)
                    continue
                head = max(buf.rfind(b"\n", a, b - 1) + 1, a)
                lines.append(bytes(buf[head : b - 1]))
            while k < len(items) and items[k][2]:
                lines.append(bytes(buf[items[k][0] : items[k][1]]))
                k += 1
            fixed = self._repaired(lines)
            first = 0
            if head < b:  # the run, with its last line unless the repair changed that
                first = int(fixed[0] == lines[0])
                end_run = b if first else head
                if end_run > a:
                    self.run(buf, a, end_run, lineno)
                    lineno += buf.count(b"\n", a, head)
            self._lines(fixed, first, lineno, len(lines))
            lineno += len(lines)
        self.lines = lineno - 1

    def _repaired(self, lines: list[bytes]) -> list[bytes]:
        """The lines as the engine wrote them (``LogParser.repair``): ``lines`` if unchanged."""
        data = b"\n".join(lines) + b"\n"
        fixed = self.parser.repair(data)
        return lines if fixed is data or fixed == data else fixed[:-1].split(b"\n")

    def _lines(self, lines: list[bytes], first: int, lineno: int, n: int) -> None:
        """``lines[first:]`` one by one. Numbers stay the file's: a repaired line gets its
        place's number within the ``n`` file lines (the parts of a glued line may share one)."""
        for i in range(first, len(lines)):
            self.line(lines[i], lineno + min(i, n - 1))

    def run(self, buf: bytearray, a: int, b: int, lineno: int) -> None:
        """A run of plain lines ``buf[a:b]`` starting at line ``lineno``."""
        while a < b:
            if self.parser.engine == "unknown":
                e = buf.index(b"\n", a, b)
                self.line(bytes(buf[a:e]), lineno)
                lineno, a = lineno + 1, e + 1
                continue
            if self._stats_pending():
                # the first stats line of the run decides "serving" (a Decode line, a debug
                # print quoting one, or in a fragment a Prefill line)
                texts = STATS_TEXT if self._serving_pending() and serving_inferred(
                    self.state.startup.phase) else DECODE_TEXT
                found = [j for j in (buf.find(t, a, b) for t in texts) if j >= 0]
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
        tokens = run_tokens(buf, a, b)
        if tokens is None:
            self.lines_of(buf, a, b, lineno)
            return
        work = Counter(tokens.work)
        self.accept.add_tokens(tokens.acc, tokens.acc_text,
                               accept_counts(work) if tokens.paired else None)
        self._add_work(work)
        self.gen.add_tokens(tokens.gen, tokens.gen_text)
        for dim, at in new_dims(buf, a, b, self.state.config.hidden_dims):
            self._reduce(HiddenStateDims(dim, lineno + at))

    def chunk(self, buf: bytearray, end: int, last: bool, fast: bool = True) -> None:
        """One step of ``reader.read_chunks``: whole lines ``buf[1:end]``, or (``last``) the
        log's final line, which lacks its newline."""
        if last:
            self._marks(buf, end)
            self._lines(self._repaired([bytes(buf[1:end])]), 0, self.lines + 1, 1)
            self.lines += 1
            return
        if fast:
            self.feed(buf, end)
        else:  # (the slow path of the tests: every line alone, repaired as one stretch)
            self._marks(buf, end)
            lines = bytes(buf[1 : end - 1]).split(b"\n")
            self._lines(self._repaired(lines), 0, self.lines + 1, len(lines))
            self.lines += len(lines)

    def _marks(self, buf: bytearray, end: int) -> None:
        """Keep the log's offset past the lines ``buf[1:end]`` and its first bench marker's."""
        if self.bench_mark is None:
            at = mark_line(buf, end)
            if at >= 0:
                self.bench_mark = self.offset + at
        self.offset += end - 1

    def apply(self, summary: ChunkSummary, reread: Callable[[], bytearray]) -> None:
        """The chunk that ``chunk_summary.summarize_chunk`` summarized, in file order: the same
        state, spools and line count as ``feed`` on it. ``reread()`` returns the chunk as ``feed``
        takes it (a newline, then its lines), for when the summary's assumption does not hold."""
        if self.parser.engine == "unknown" or (summary.has_stats and self._serving_pending()) \
                or (summary.has_decode and self._parser_pending()):
            buf = reread()
            self.feed(buf, len(buf))
            return
        if self.bench_mark is None and summary.mark >= 0:
            self.bench_mark = self.offset + summary.mark
        self.offset += summary.size
        lineno = self.lines + 1
        for part in summary.parts:
            if isinstance(part, LoneLine):
                self.line(part.text, lineno)
                lineno += 1
            elif isinstance(part, RawRun):
                self.run(bytearray(part.data), 0, len(part.data), lineno)
                lineno += part.lines
            else:
                self._numbers(part, lineno)
                lineno += part.lines
        self.accept.add_counts(summary.accept_counts)
        self._add_work(summary.work_counts)
        self.gen.add_block(summary.gen_sorted)
        self.lines = lineno - 1

    def _add_work(self, counts: Mapping[tuple[bytes, bytes], int]) -> None:
        """SGLang Decode lines' ``(running, accept len)`` tokens (``WORK_LINE_B``: one rule for
        the lines of plain runs and the lines parsed alone, so every path counts the same)."""
        if not counts:
            return
        every = valid_tokens(b",".join(acc for _, acc in counts))  # one check, nearly always
        for (running, acc), n in counts.items():
            if every or valid_tokens(acc):
                self.decode_work[(int(running), float(acc))] += n

    def _numbers(self, run: NumberRun, lineno: int) -> None:
        """A summarized run of plain lines starting at line ``lineno``."""
        self.accept.add_text(run.acc_text, run.acc_n, run.acc_tail)
        self.gen.add_text(run.gen_text, run.gen_n, run.gen_tail)
        for dim, at in run.dims:
            if dim not in self.state.config.hidden_dims:
                self._reduce(HiddenStateDims(dim, lineno + at))

    # ------------------------------------------------------------------ result
    def result(self, bench_mark: list[int] | None = None) -> dict[str, Any]:
        """:meth:`finish`, and the first bench marker's offset appended to ``bench_mark`` (if
        given and the log has one)."""
        report = self.finish()
        if bench_mark is not None and self.bench_mark is not None:
            bench_mark.append(self.bench_mark)
        return report

    def finish(self) -> dict[str, Any]:
        self.add(self.parser.finish())
        st = self.state
        final = dataclasses.replace(st, stats=dataclasses.replace(
            st.stats,
            accept_len=Series(tuple((0.0, v) for v in self.accept.tail), TAIL),
            gen_tps=Series(tuple((0.0, v) for v in self.gen.tail), TAIL),
        ))
        alerts = evaluate_alerts(final)
        crash: CrashEvent | None = st.startup.crash
        spec = st.config.spec
        return {
            "file": self.name,
            "engine": st.startup.engine,
            "lines": self.lines,
            "phase": st.startup.phase.value,
            "ready": st.startup.ready,
            "phases": [{"phase": m.phase.value, "line": m.lineno, "time": m.time}
                       for m in st.startup.phases],
            "crash": None if crash is None else {"kind": crash.kind, "line": crash.lineno,
                                                 "message": crash.message, "hint": crash.hint},
            "speculative": None if spec is None else {
                "algorithm": spec.algorithm, "draft_model": spec.draft_model,
                "num_steps": spec.num_steps, "eagle_topk": spec.eagle_topk,
                "num_draft_tokens": spec.num_draft_tokens},
            "accept_len": self.accept,
            "gen_throughput": self.gen,
            "hidden_state_dims": list(st.config.hidden_dims),
            "summary": {"accept_len_mean": self.accept.mean(),
                        "gen_throughput_median": self.gen.median()},
            "alerts": [a.as_dict() for a in alerts],
            "models": [{"role": m.role, "architecture": m.architecture} for m in st.config.models],
            "inferred": inferred_dict(st),
            "numbers": self._weighted(),
            "tier": tier_dict(final),  # the launch's, or an adaptive server's last (its log)
            "ready_s": ready_seconds(st),  # the one meaning of ready (model.views.ready)
            "piecewise_graphs": None if (pw := st.startup.piecewise) is None else {
                "stage": pw.label, "done": pw.done, "total": pw.total, "role": pw.role,
                "line": pw.lineno},
            **engine_fields(st),  # phase times as the engine measured them, where it did
            # the sleep, pause and [FT] lines, and the hold the log ends in (model.views.hold)
            "holds": [hold_line_dict(h, st.log.lineno_base) for h in st.holds.lines],
            "hold": held.as_dict() if (held := hold_of(st)) is not None else None,
        }


    def _weighted(self) -> dict[str, Any]:
        """The log's accept length weighed by work (:class:`WorkTotals`), where it has counts."""
        w = self.work
        if w.accept_len is None and self.decode_work:
            # exactly rounded sums of a multiset: the same whatever order chunks came in
            items = sorted(self.decode_work.items())
            weight = math.fsum((r or 1) * n for (r, _), n in items)
            value = math.fsum((r or 1) * a * n for (r, a), n in items) / weight
            lines = sum(n for _, n in items)
            return {"accept_len_weighted": round(value, 4),
                    "window": f"{lines} intervals, weighted by verify steps (≈ #running-req)",
                    "accepted_distribution": []}
        if w.accept_len is None:
            return {"accept_len_weighted": None, "window": None, "accepted_distribution": []}
        return {"accept_len_weighted": round(w.accept_len, 4),
                "window": f"{w.intervals} intervals, weighted by drafts "
                          f"(1 + {w.accepted:.0f} accepted / {w.drafts:.0f} drafts)",
                "accepted_distribution": [round(p, 4) for p in w.distribution]}


def build_report(stream: BinaryIO, name: str, *, fast: bool = True,
                 baseline: float | None = None, chunk: int = CHUNK,
                 bench_mark: list[int] | None = None) -> dict[str, Any]:
    """Read ``stream`` to the end and return the report (spools still open: see
    ``output.write_json`` and ``output.close``). ``bench_mark``, if given, receives the offset
    of the line of the first bench marker, if the log has one (``ReportBuilder.bench_mark``)."""
    b = ReportBuilder(name, baseline)
    for buf, end, last in read_chunks(stream, chunk):
        b.chunk(buf, end, last, fast)
    return b.result(bench_mark)



def inferred_dict(st: DashboardState) -> dict[str, dict[str, Any] | None]:
    """What the report infers rather than reads (.evidence): the phase, the engine, or null."""
    mark = st.startup.phase_mark(st.startup.phase)
    eng = st.startup.engine_inferred
    return {
        "phase": {"value": st.startup.phase.value, "line": mark.lineno, "reason": mark.inferred}
        if mark is not None and mark.inferred else None,
        "engine": {"value": eng.value, "line": eng.lineno, "reason": eng.reason}
        if eng is not None else None,
    }


__all__ = ["ReportBuilder", "build_report"]
