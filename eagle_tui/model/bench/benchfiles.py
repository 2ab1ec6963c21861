"""Results of the engines' own benchmarks, and ``/metrics`` counter deltas, as window figures.

Two formats, read as their tools write them (pure: the caller reads the file):

* ``python -m sglang.bench_serving --output-file F`` *appends* one JSON object per run (JSONL):
  ``duration``, ``completed``, ``total_output_tokens``, ``output_throughput`` and
  ``accept_length``. That accept length is what ``/get_server_info`` said after the run
  (``avg_spec_accept_length``): the server's running average, not this run's alone.
* ``vllm bench serve --save-result`` writes one JSON object: the same throughput keys plus
  ``date`` (``%Y%m%d-%H%M%S``, the client's local time at the end),
  ``spec_decode_acceptance_length`` and ``spec_decode_num_drafts`` (its own ``/metrics`` deltas
  over the run).

``/metrics`` deltas: each engine's profile names the counters and how they give an acceptance
length (docs/architecture.md, "Module notes"); tok/s is ``Δgeneration_tokens / duration``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from eagle_tui.model.bench.windows import (
    SGLANG_DEFAULT_LOG_INTERVAL,
    LogSums,
    WindowFigures,
    interval_in,
)
from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.engines import EngineProfile, profiles
from eagle_tui.model.events import DecodeStats, Event, LogLine, SpecStats
from eagle_tui.model.numbers import strict_float
from eagle_tui.model.record import Record, record


def _by_precedence() -> list[EngineProfile]:
    """The registered engines, the highest metrics precedence first (its figures win)."""
    return sorted(profiles(), key=lambda p: -p.metrics.precedence)


def counter_totals(text: str) -> dict[str, float]:
    """The lifetime counters a window needs, summed over label sets (engines, DP ranks)."""
    wanted = frozenset(n for p in profiles() for n in p.metrics.window_counters)
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        name_end = min((i for i in (line.find("{"), line.find(" ")) if i >= 0), default=-1)
        if name_end <= 0:
            continue
        name = line[:name_end]
        if not name.endswith("_total"):
            continue
        base = name[: -len("_total")]
        if base not in wanted:
            continue
        words = line[line.rfind("}") + 1:].split() if "}" in line else line.split()[1:]
        value = strict_float(words[0]) if words else None
        if value is not None:  # (NaN: no data; 1e999, 0x10, 400 digits: not a reading)
            out[base] = out.get(base, 0.0) + value
    return out


def metrics_figures(before: dict[str, float], after: dict[str, float],
                    duration_s: float | None) -> WindowFigures | None:
    """``/metrics`` over a window, from the counters at its start and end."""
    def delta(name: str) -> float | None:
        if name in before and name in after and after[name] >= before[name]:
            return after[name] - before[name]
        return None

    engines = _by_precedence()
    gen = next((d for p in engines if p.metrics.gen_counter
                if (d := delta(p.metrics.gen_counter)) is not None), None)
    accept: float | None = None
    weight: float | None = None
    note = ""
    for profile in engines:
        found = profile.metrics.window_accept(delta, gen)
        if found is not None:
            accept, weight, note = found
            break
    if accept is None and gen is None:
        return None
    return WindowFigures("/metrics", accept, gen / duration_s if gen is not None and duration_s
                         else None, gen, weight, note)


@record
class ResultsRun(Record):
    """One run from a results file: its time span (when the file says) and its figures."""

    tool: str
    t_start: float | None
    t_end: float | None
    figures: WindowFigures
    label: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "t_start": self.t_start, "t_end": self.t_end,
                "label": self.label, "figures": [self.figures.as_dict()]}


def _num(obj: dict[str, Any], key: str) -> float | None:
    v = obj.get(key)
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _vllm_end(date: object) -> float | None:
    if not isinstance(date, str):
        return None
    try:
        return time.mktime(time.strptime(date, "%Y%m%d-%H%M%S"))
    except ValueError:
        return None


def parse_run(obj: dict[str, Any]) -> ResultsRun | None:
    """One result object → a run; None for an object that is neither tool's."""
    if "output_throughput" not in obj or "duration" not in obj:
        return None
    duration = _num(obj, "duration")
    tokens, tok_s = _num(obj, "total_output_tokens"), _num(obj, "output_throughput")
    if "spec_decode_acceptance_length" in obj or "date" in obj or "endpoint_type" in obj:
        end = _vllm_end(obj.get("date"))
        start = end - duration if end is not None and duration is not None else None
        fig = WindowFigures("vllm bench serve", _num(obj, "spec_decode_acceptance_length"),
                            tok_s, tokens, _num(obj, "spec_decode_num_drafts"),
                            "client tok/s; acceptance from its /metrics deltas")
        label = str(obj.get("label") or obj.get("model_id") or "")
        return ResultsRun("vllm bench serve", start, end, fig, label)
    fig = WindowFigures("sglang.bench_serving", _num(obj, "accept_length"), tok_s, tokens, None,
                        "client tok/s; accept length is the server's running average")
    return ResultsRun("sglang.bench_serving", None, None, fig, str(obj.get("backend") or ""))


def parse_results(text: str) -> list[ResultsRun]:
    """A results file's runs (one JSON object, or JSON lines); ValueError if none is found."""
    stripped = text.strip()
    objs: list[object] = []
    try:  # (the caller read the file within its own cap: the length is no bound here)
        whole = load_json(stripped, "a results file", max_bytes=len(stripped))
        objs = whole if isinstance(whole, list) else [whole]
    except LoadError:
        objs = [load_json(line, f"line {n}", max_bytes=len(line))
                for n, line in enumerate(stripped.splitlines(), 1) if line.strip()]
    runs = [r for o in objs if isinstance(o, dict) and (r := parse_run(o)) is not None]
    if not runs:
        raise ValueError("no sglang.bench_serving or vllm bench serve result in it")
    return runs


_STAMP = re.compile(r"^(?:(\d{4})-)?(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})")


def stamp_epoch(text: str | None, year: int) -> float | None:
    """A stats line's stamp as local epoch seconds: SGLang's ``2026-12-01 13:14:00``, vLLM's
    ``11-30 00:10:20`` (no year: ``year``'s)."""
    if not text:
        return None
    m = _STAMP.match(text.strip("[] "))
    if m is None:
        return None
    y = int(m.group(1)) if m.group(1) else year
    try:
        return time.mktime((y, int(m.group(2)), int(m.group(3)), int(m.group(4)),
                            int(m.group(5)), int(m.group(6)), 0, 0, -1))
    except (OverflowError, ValueError):
        return None


@dataclass(slots=True)
class _Span:
    run: ResultsRun
    sums: LogSums = field(default_factory=LogSums)
    tail: int = 0  # interval lines taken after the run's end (the first one is its tail)


def span_figures(events: Iterable[Event], runs: list[ResultsRun]) -> list[WindowFigures | None]:
    """The log's figures over each run's time span (None for a run the file gives no time):
    the stats lines stamped inside it, and the first interval line after its end (the tail).
    Stamps have one-second resolution, so a short run's figures are rough."""
    spans = [_Span(r) for r in runs if r.t_start is not None and r.t_end is not None]
    interval, source = SGLANG_DEFAULT_LOG_INTERVAL, "the default"
    for ev in events:
        if isinstance(ev, LogLine):
            if (stated := interval_in(ev.text)) is not None:
                interval, source = stated
            continue
        if not isinstance(ev, DecodeStats | SpecStats) or not spans:
            continue
        for sp in spans:
            assert sp.run.t_start is not None and sp.run.t_end is not None
            t = stamp_epoch(ev.time, time.localtime(sp.run.t_end).tm_year)
            if t is None or t < sp.run.t_start:
                continue
            if t > sp.run.t_end:
                if isinstance(ev, DecodeStats):
                    sp.tail += 1
                if sp.tail > 1:
                    continue
            sp.sums.add(ev, interval, source)
    by_run = {id(sp.run): sp for sp in spans}
    out: list[WindowFigures | None] = []
    for r in runs:
        found = by_run.get(id(r))
        dur = r.t_end - r.t_start if r.t_end is not None and r.t_start is not None else None
        out.append(found.sums.figures(dur) if found is not None else None)
    return out


__all__ = ["ResultsRun", "counter_totals", "metrics_figures", "parse_results", "parse_run",
           "span_figures", "stamp_epoch"]
