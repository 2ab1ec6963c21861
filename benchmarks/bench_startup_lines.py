"""The parsers' cost per line on the real CPU servers' logs: nearly every line a startup line.

The worst case for a check added to the startup phase tables (a log of only startup lines,
where the stats lines that return early are rare): every line of tests/fixtures/vllm-cpu and
tests/fixtures/sglang-cpu through a fresh ``LogParser``, 20 times, best CPU time of 5.

    PYTHONPATH=. python benchmarks/bench_startup_lines.py .
    PYTHONPATH=../main python benchmarks/bench_startup_lines.py .   # another checkout's code
"""

from __future__ import annotations

import glob
import sys
import time

from eagle_tui.model.ingest.parser import LogParser


def main(root: str) -> None:
    files = sorted(glob.glob(root + "/tests/fixtures/vllm-cpu/*.log")
                   + glob.glob(root + "/tests/fixtures/sglang-cpu/*.log"))
    data = [open(f, "rb").read().splitlines() for f in files]  # noqa: SIM115
    best = 1e9
    for _ in range(5):
        t = time.process_time()
        for _ in range(20):
            for lines in data:
                p = LogParser()
                for i, line in enumerate(lines, 1):
                    p.parse_line(line, i, False)
        best = min(best, time.process_time() - t)
    print(f"{sum(map(len, data)) * 20} lines: {best:.3f} s CPU")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
