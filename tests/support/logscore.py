"""Scoring ``eagle-tui report --json`` against what a log holds: per-field hits and totals.

Two yardsticks. :func:`score_corpus` runs the report on every excerpt of
``tests/fixtures/corpus`` and compares it with ``labels.json`` (the reader's labels are the
truth). :func:`score_damage` damages clean fixture logs the ways logs arrive (a traceback's
header cut, two records glued on one line, terminal hard-wraps, caret-escaped and real colour
codes, ``^M``, CRLF) and compares each damaged log's report with the clean log's own.

A field is compared only where the truth has something to say: ``phase``, ``crash`` (the kind,
or null), ``cause`` (where the label names a cause line: the report's message, or its crash
line's text, contains it or is contained in it, whitespace normalised), ``accept_len`` and
``throughput`` (the whole lists, in order; an empty truth means the report must show none).
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.paths import FIXTURES

CORPUS = FIXTURES / "corpus"
FIELDS = ("phase", "crash", "cause", "accept_len", "throughput")
_WS = re.compile(r"\s+")


@dataclass
class Score:
    """Hits and totals per field, and which cases missed each (for the failure message)."""

    hits: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIELDS, 0))
    total: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIELDS, 0))
    misses: dict[str, list[str]] = field(default_factory=lambda: {f: [] for f in FIELDS})

    def add(self, name: str, key: str, ok: bool) -> None:
        self.total[key] += 1
        if ok:
            self.hits[key] += 1
        else:
            self.misses[key].append(name)

    @property
    def overall(self) -> float:
        total = sum(self.total.values())
        return sum(self.hits.values()) / total if total else 1.0

    def table(self, title: str) -> str:
        rows = [f"{title}: {100 * self.overall:.1f} % "
                f"({sum(self.hits.values())}/{sum(self.total.values())})"]
        for key in FIELDS:
            n = self.total[key]
            pct = 100 * self.hits[key] / n if n else 100.0
            rows.append(f"  {key:<11} {self.hits[key]:>4}/{n:<4} {pct:5.1f} %"
                        + (f"  misses: {', '.join(self.misses[key][:12])}"
                           if self.misses[key] else ""))
        return "\n".join(rows)


def run_report(path: Path) -> dict[str, Any]:
    """``eagle-tui report --json PATH`` in this process; the parsed JSON object."""
    from eagle_tui.cli import main

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = main(["report", "--json", "--workers", "1", str(path)])
        out.flush()
    assert rc == 0, (path, rc)
    data = json.loads(raw.getvalue().decode("utf-8"))
    assert isinstance(data, dict)
    return data


def _squash(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _cause_hit(report: dict[str, Any], want: str, text: str) -> bool:
    crash = report.get("crash")
    if not crash:
        return False
    want = _squash(want)
    lines = text.splitlines()
    line = int(crash.get("line") or 0)
    candidates = [str(crash.get("message") or "")]
    if 0 < line <= len(lines):
        candidates.append(lines[line - 1])
    return any(got and (want in got or got in want) for got in map(_squash, candidates))


def _numbers(values: Iterable[Any]) -> list[float]:
    return [round(float(v), 2) for v in values]


def compare(score: Score, name: str, report: dict[str, Any], truth: dict[str, Any],
            text: str) -> None:
    """Add one case: ``truth`` has the corpus label's keys (phase, crash, accept_len,
    throughput); ``text`` is the log the report read (for the crash line's own text)."""
    score.add(name, "phase", report["phase"] == truth["phase"])
    crash, want = report.get("crash"), truth["crash"]
    score.add(name, "crash", (crash is None) if want is None
              else crash is not None and crash["kind"] == want["kind"])
    if want is not None and want.get("cause_line"):
        score.add(name, "cause", _cause_hit(report, want["cause_line"], text))
    score.add(name, "accept_len", _numbers(report["accept_len"]) == _numbers(truth["accept_len"]))
    score.add(name, "throughput",
              _numbers(report["gen_throughput"]) == _numbers(truth["throughput"]))


def score_corpus() -> Score:
    labels: dict[str, dict[str, Any]] = json.loads((CORPUS / "labels.json").read_text("utf-8"))
    score = Score()
    for name, label in sorted(labels.items()):
        path = CORPUS / label["engine"] / f"{name}.log"
        compare(score, name, run_report(path), label, path.read_text("utf-8"))
    return score


# -- generated damage -------------------------------------------------------------------------
# Clean logs with crashes, startups and statistics of both engines.
CLEAN = (
    "samples/sglang-eagle3-launch-decode.log",
    "samples/sglang-oom-cuda-graph.log",
    "samples/sglang-not-enough-memory.log",
    "samples/sglang-scheduler-died-2026.log",
    "samples/vllm-eagle3-launch-stats.log",
    "samples/vllm-kv-too-small.log",
    "sglang-cpu/eagle3.log",
    "sglang-cpu/misconf.log",
    "vllm-cpu/server-eagle3.log",
    "vllm-cpu/server-eagle3-enginecore-killed.log",
    "vllm-cpu/server-ngram.log",
)
# A record: a line an engine's logger starts (SGLang's ``[stamp]``, vLLM's ``LEVEL mm-dd``,
# either behind a process prefix); the glue damage puts one after another line.
RECORD = re.compile(r"^(?:\([\w.:-]+ pid=\d+\) )?(?:\[\d{4}-\d\d-\d\d |(?:INFO|WARNING|ERROR|"
                    r"DEBUG|CRITICAL) \d\d-\d\d )")
TRACEBACK = "Traceback (most recent call last):"
SEEDS = 4


def _cut_header(lines: list[str], rng: random.Random) -> list[str] | None:
    """Drop a traceback's header and 0..n of its first frames (never its exception line)."""
    heads = [i for i, line in enumerate(lines) if line.rstrip().endswith(TRACEBACK)]
    if not heads:
        return None
    i = rng.choice(heads)
    j = i + 1
    frames = 0
    while j < len(lines) and lines[j].lstrip().startswith(("File ", "  ")) and frames < 40:
        j += 1
        frames += 1
    k = i + 1 + rng.randrange(0, max(1, frames - 1))
    return lines[:i] + lines[k:]


def _glue(lines: list[str], rng: random.Random) -> list[str] | None:
    """Two records on one physical line, a few times over."""
    spots = [i for i in range(1, len(lines)) if RECORD.match(lines[i]) and lines[i - 1].strip()]
    if not spots:
        return None
    picked = set(rng.sample(spots, min(len(spots), 3)))
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in picked and out:
            out[-1] += line
        else:
            out.append(line)
    return out


def _wrap(lines: list[str], rng: random.Random) -> list[str] | None:
    width = rng.randint(80, 200)
    out: list[str] = []
    for line in lines:
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return out


def _carets(lines: list[str], rng: random.Random) -> list[str] | None:
    colour = rng.choice(("0;36", "32", "1;31", "33"))
    return [f"^[[{colour}m{line}^[[0m^M" if RECORD.match(line) else line for line in lines]


def _escapes(lines: list[str], rng: random.Random) -> list[str] | None:
    colour = rng.choice(("0;36", "32", "1;31", "33"))
    return [f"\x1b[{colour}m{line[:20]}\x1b[0m{line[20:]}" if RECORD.match(line) else line
            for line in lines]


def _crlf(lines: list[str], rng: random.Random) -> list[str] | None:
    return [line + "\r" for line in lines]


DAMAGE: dict[str, Callable[[list[str], random.Random], list[str] | None]] = {
    "header_cut": _cut_header,
    "glued": _glue,
    "hard_wrap": _wrap,
    "caret_escape": _carets,
    "colour_escape": _escapes,
    "crlf": _crlf,
}


def _truth(report: dict[str, Any], text: str) -> dict[str, Any]:
    crash = report["crash"]
    # the clean report's own message: the damaged log's line numbers move with its repairs
    cause = None if crash is None else crash["message"].rstrip("…")
    return {"phase": report["phase"],
            "crash": None if crash is None else {"kind": crash["kind"], "cause_line": cause},
            "accept_len": list(report["accept_len"]),
            "throughput": list(report["gen_throughput"])}


def damaged_cases() -> Iterator[tuple[str, str, str]]:
    """(case name, clean text, damaged text) for each clean log, damage and seed."""
    for rel in CLEAN:
        clean = (FIXTURES / rel).read_text("utf-8")
        lines = clean.split("\n")
        for kind, damage in DAMAGE.items():
            for seed in range(SEEDS):
                got = damage(list(lines), random.Random(f"{rel}:{kind}:{seed}"))
                if got is None:
                    break
                yield f"{Path(rel).stem}/{kind}/{seed}", clean, "\n".join(got)
                if kind in ("caret_escape", "colour_escape", "crlf") and seed >= 1:
                    break


def score_damage(tmp: Path) -> Score:
    score = Score()
    truths: dict[str, dict[str, Any]] = {}
    for name, clean, damaged in damaged_cases():
        stem = name.split("/", 1)[0]
        if stem not in truths:
            path = tmp / f"{stem}.log"
            path.write_text(clean, "utf-8")
            truths[stem] = _truth(run_report(path), clean)
        path = tmp / "damaged.log"
        path.write_bytes(damaged.encode("utf-8"))
        compare(score, name, run_report(path), truths[stem], damaged)
    return score


def main() -> None:  # pragma: no cover - `python -m tests.support.logscore`: the two tables
    import tempfile

    print(score_corpus().table("corpus"))
    with tempfile.TemporaryDirectory() as tmp:
        print(score_damage(Path(tmp)).table("damage"))
    sys.stdout.flush()


if __name__ == "__main__":  # pragma: no cover
    main()
