"""The report's bulk passes over a plain run, one by one, and the alternatives tried for them.

Takes one serial chunk (``reader.CHUNK`` bytes) from the middle of a log generated as
``bench_report.py`` does (or ``--log FILE``), times each pass on it (CPU time, best of
``--runs``, every pass once per round so a busy machine slows all alike) and scales it to the
whole file. Rows:

- the passes ``report`` makes on a run today (``chunk_summary.run_tokens``, the median's floats
  and sort, the newline and accept counts);
- one pass for the work and gen tokens (``RUN_WORK_B`` with an optional trailing tok/s group, then
  the gen count that proves it exact), against the two passes it would replace;
- the Decode lines found from their literal with look-behinds for the stamp (then a count of
  ``Decode batch`` proves them exact), against ``RUN_WORK_B``;
- the median from token counts instead of floats sorted in blocks.

Each alternative's result is checked equal to today's before it is timed.

    python benchmarks/bench_report_passes.py                 # 1 M lines, 9 rounds
    python benchmarks/bench_report_passes.py --lines 200000 --runs 5
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from array import array
from collections import Counter
from collections.abc import Callable
from operator import itemgetter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench_report

from eagle_tui.model.ingest.classify import GEN_LINE_B
from eagle_tui.report.chunk_summary import ACC_TEXT, RUN_WORK_B
from eagle_tui.report.reader import CHUNK

GEN_TEXT = b"gen throughput (token/s): "
_NUM = rb"([\d.]+)(?![\w.+-])"
ONE_PASS = re.compile(RUN_WORK_B.pattern + rb"(?:[^\n]*gen throughput \(token/s\): " + _NUM
                      + rb")?")
_AFTER_DECODE = (rb"(?: \[\d+\]|)[.,] #running-req: (\d{1,15}), (?:#token: \d{1,15}, token "
                 rb"usage: [\d.]{1,30}, |[^\n]*?)accept len: " + _NUM)
DECODE_FIRST = re.compile(rb"Decode batch(?:(?<=\n\[\d[^\n]{18}\] Decode batch)|"
                          rb"(?<=\n\[\d[^\n]{7}\] Decode batch))" + _AFTER_DECODE)
_ACC, _GEN, _PAIR = itemgetter(1), itemgetter(2), itemgetter(0, 1)
BLOCK = 1 << 16


def chunk_of(path: Path, size: int = CHUNK) -> bytearray:
    """``size`` bytes of whole lines from the middle of ``path``, after a newline."""
    data = path.read_bytes()
    a = data.index(b"\n", len(data) // 2) + 1
    b = data.rindex(b"\n", 0, a + size) + 1
    return bytearray(b"\n" + data[a:b])


def cases(buf: bytearray) -> dict[str, Callable[[], Any]]:
    end = len(buf)

    def two_passes() -> tuple[Any, ...]:
        work = RUN_WORK_B.findall(buf, 0, end)
        buf.count(ACC_TEXT, 1, end)
        return Counter(work), list(map(_ACC, work)), GEN_LINE_B.findall(buf, 1, end)

    def one_pass() -> tuple[Any, ...]:
        found = ONE_PASS.findall(buf, 0, end)
        buf.count(ACC_TEXT, 1, end)
        n_gen = buf.count(GEN_TEXT, 1, end)
        gen = list(map(_GEN, found))
        if gen.count(b""):
            gen = [g for g in gen if g]
        if n_gen != len(gen):  # (the generated log never takes this fallback)
            gen = GEN_LINE_B.findall(buf, 1, end)
        return Counter(map(_PAIR, found)), list(map(_ACC, found)), gen

    def decode_first() -> list[Any]:
        found = DECODE_FIRST.findall(buf, 1, end)
        if buf.count(b"Decode batch", 1, end) != len(found):
            found = RUN_WORK_B.findall(buf, 0, end)
        return found

    gen = GEN_LINE_B.findall(buf, 1, end)

    def floats_sorted() -> None:
        values = list(map(float, gen))
        for i in range(0, len(values), BLOCK):
            array("d", sorted(values[i : i + BLOCK]))

    def counted() -> None:
        sorted((float(t), n) for t, n in Counter(gen).items())

    return {
        "RUN_WORK_B findall (work, accept)": lambda: RUN_WORK_B.findall(buf, 0, end),
        "GEN_LINE_B findall (gen)": lambda: GEN_LINE_B.findall(buf, 1, end),
        "count newlines": lambda: buf.count(b"\n", 1, end),
        "count 'accept len: '": lambda: buf.count(ACC_TEXT, 1, end),
        "work+gen today: 2 findall, count, Counter": two_passes,
        "work+gen in one pass (+ gen count)": one_pass,
        "Decode lines from 'Decode batch' + count": decode_first,
        "median today: floats, sorted blocks": floats_sorted,
        "median from token counts": counted,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lines", type=int, default=1_000_000)
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--log", type=Path, help="a log to take the chunk from (default: generated)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.log or Path(tmp) / "report-passes.log"
        if args.log is None:
            bench_report.generate(path, args.lines)
        total = path.stat().st_size
        buf = chunk_of(path)
    timed = cases(buf)
    today = timed["work+gen today: 2 findall, count, Counter"]()
    assert timed["work+gen in one pass (+ gen count)"]() == today
    assert timed["Decode lines from 'Decode batch' + count"]() == \
        timed["RUN_WORK_B findall (work, accept)"]()
    best = dict.fromkeys(timed, float("inf"))
    for _ in range(args.runs):
        for name, fn in timed.items():
            t0 = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - t0)
    scale = total / len(buf)
    print(f"{total / 1e6:.0f} MB log, a {len(buf) / 1e6:.1f} MB chunk, CPU time best of "
          f"{args.runs}, scaled to the file; load {os.getloadavg()[0]:.2f}")
    for name, s in best.items():
        print(f"  {s * scale * 1000:7.1f} ms  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
