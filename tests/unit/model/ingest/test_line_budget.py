"""One line costs bounded work, whatever its length (issue 17, item 1).

A 40,000-digit ``Capturing batches`` line once cost ``report`` 19.6 s of CPU (a quadratic
progress regex) and froze a dashboard for ~95 s; 1 MB lines cost ~0.4 s each in the crash and
kind scans. The parser now reads only a bounded prefix of a long line
(``framing.PARSE_CHARS`` for the engine parsers, ``framing.SCAN_CHARS`` for the crash, kind and
evidence scans) and still shows the whole line. Costs are compared as ratios of CPU time
(``process_time``) between lines of n and 8n bytes, never as absolute times.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable

import pytest

from eagle_tui.model.events import LineKind, LogLine, Progress, SpecConfig
from eagle_tui.model.ingest import evidence
from eagle_tui.model.ingest.framing import PARSE_CHARS, SCAN_CHARS
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.report import build_report

STAMP = "[2025-11-20 10:14:31] "
# line shapes whose body grows: each once hit a slow path (a quadratic regex or a full scan)
SHAPES: dict[str, Callable[[int], str]] = {
    "capturing digits": lambda n: f"{STAMP}Capturing batches (bs=1 avail_mem=7 GB): " + "1" * n,
    "tqdm digits": lambda n: f"{STAMP}Capturing batches: " + "1" * n + "%|##| 1/2",
    "traceback words": lambda n: "RuntimeError: " + "a: 1, " * (n // 6),
    "nccl repeated": lambda n: "ProcessGroupNCCL " * (n // 17),
    "free memory repeated": lambda n: "Free memory on device " * (n // 22),
    "wrapper name": lambda n: "a" * n,
    "vllm prefix": lambda n: "INFO 10-30 14:18:55 [x.py:1] " + "Capturing CUDA graphs " * (n // 22),
    "decode stats": lambda n: f"{STAMP}Decode batch, #running-req: " + "1" * n,
    "spaces": lambda n: " " * n,
    "brackets": lambda n: "[" * n,
}


def _parse_cost(line: str, reps: int) -> float:
    data = line.encode() + b"\n"
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        for _ in range(reps):
            p = LogParser()
            p.feed_lines(b"[2025-11-20 10:14:30] Load weight begin\n")  # the engine known
            p.feed_lines(data)
            p.feed_line(data[:-1])
        best = min(best, time.process_time() - t)
    return max(best, 1e-6)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_parse_cost_grows_at_most_linearly(shape: str) -> None:
    make = SHAPES[shape]
    small, big = make(40_000), make(320_000)
    reps = 1
    while _parse_cost(small, reps) < 0.01 and reps < 256:
        reps *= 2
    ratio = _parse_cost(big, reps) / _parse_cost(small, reps)
    assert ratio < 20, f"{shape}: 8x the line costs {ratio:.0f}x the CPU"


def test_a_long_line_is_shown_whole_and_its_prefix_parsed() -> None:
    digits = "1" * 40_000
    line = f"{STAMP}Capturing batches (bs=4 avail_mem=7 GB): 50%|##| 2/4 {digits}"
    events = LogParser().feed_line(line)
    logs = [e for e in events if isinstance(e, LogLine)]
    assert logs[0].text == line  # shown whole
    assert [(e.done, e.total) for e in events if isinstance(e, Progress)] == [(2, 4)]


def test_a_figure_past_the_parsed_prefix_is_not_read() -> None:
    pad = "x" * PARSE_CHARS
    events = LogParser().feed_line(f"{STAMP}Capturing batches {pad} 50%|##| 2/4")
    assert not [e for e in events if isinstance(e, Progress)]


def test_a_crash_past_the_scanned_prefix_is_not_read_but_one_inside_is() -> None:
    pad = "y" * SCAN_CHARS
    late = LogParser().feed_line(f"RuntimeError: {pad} CUDA out of memory")
    early = LogParser().feed_line(f"RuntimeError: CUDA out of memory {pad}")
    assert not [e for e in late if e.__class__.__name__ == "CrashEvent"]
    assert [e.kind for e in early if e.__class__.__name__ == "CrashEvent"] == ["cuda_oom"]


def test_the_longest_real_server_args_line_is_still_read() -> None:
    """SGLang 0.5.x logs server_args as one ~19 KB dict: within PARSE_CHARS."""
    keys = ", ".join(f"'k{i}': {'v' * 20!r}" for i in range(600))
    line = (f"{STAMP}server_args={{{keys}, 'speculative_algorithm': 'EAGLE3', "
            f"'speculative_num_steps': 3}}")
    assert 19_000 < len(line) < PARSE_CHARS
    spec = [e for e in LogParser().feed_line(line) if isinstance(e, SpecConfig)]
    assert spec and spec[0].algorithm == "EAGLE3" and spec[0].num_steps == 3


def test_a_cut_server_args_dump_does_not_swallow_the_next_lines() -> None:
    p = LogParser()
    p.feed_line(f"{STAMP}server_args={{'a': '" + "z" * PARSE_CHARS + "'")
    events = p.feed_line("Traceback (most recent call last):")
    assert [e.kind for e in events if isinstance(e, LogLine)] == [LineKind.TRACEBACK]


def test_evidence_scans_read_a_bounded_prefix() -> None:
    assert evidence.engine_in_line("x" * SCAN_CHARS + " /sglang/srt/x.py") is None
    assert evidence.engine_in_line(' File "/sglang/srt/x.py"' + "x" * SCAN_CHARS) is not None


def test_report_of_a_40000_digit_capture_line_is_linear() -> None:
    def cost(n: int) -> float:
        data = (f"{STAMP}Capturing batches (bs=1 avail_mem=7 GB): " + "1" * n + "\n").encode()
        best = float("inf")
        for _ in range(3):
            t = time.process_time()
            build_report(io.BytesIO(data), "x")
            best = min(best, time.process_time() - t)
        return max(best, 1e-6)

    assert cost(320_000) / cost(40_000) < 20
