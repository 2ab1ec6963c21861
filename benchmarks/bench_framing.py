"""Micro-benchmark of the log path: a generated SGLang log through ``LogTail`` (no I/O).

Two ways a log reaches the parser, each timed over the whole file (best of ``--runs``):

* **catch-up**: 1 MiB reads of an existing file (``at_eof`` only on the last), as on attach:
  everything but the last 10,000 lines takes the catch-up path, stats thinned;
* **visible**: the same bytes in 64 KiB reads after the end of the file was reached, as while
  following a busy server: every line becomes a ``LogLine``.

The transport is a list of chunks in memory, so only framing and parsing are measured, in CPU
seconds of the process (``time.process_time``: steadier than wall time on a shared machine).
``--src A B`` measures the ``eagle_tui`` of several checkouts alternately (before/after, each
run a fresh process):

    python benchmarks/bench_framing.py --lines 1000000 --src /tmp/main-checkout .
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

if __package__ != "benchmarks":  # imported by a test as benchmarks.X, the suite isolates
    import isolate  # noqa: F401  (eagle-tui runs with temporary folders)

ROOT = Path(__file__).resolve().parent.parent


class Chunks:
    """A transport whose tail yields the given reads (``eof_at``: from which one on at EOF)."""

    host = ""

    def __init__(self, reads: list[bytes], eof_at: int) -> None:
        self.reads = reads
        self.eof_at = eof_at

    async def tail(self, path: str, offset: int = 0) -> AsyncIterator[Any]:
        from eagle_tui.transport.base import TailChunk

        total = 0
        for i, data in enumerate(self.reads):
            total += len(data)
            yield TailChunk(data, total, at_eof=i >= self.eof_at)


def split(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


async def follow(reads: list[bytes], eof_at: int) -> tuple[float, int]:
    from eagle_tui.sources.logtail import LogTail

    src = LogTail(cast(Any, Chunks(reads, eof_at)), "x.log", caught_up_gap=0)
    n = 0
    t0 = time.process_time()  # CPU time: a shared machine's other load does not count
    async for item in src.events():
        n += len(item) if isinstance(item, list) else 1
    return time.process_time() - t0, n


def measure(path: str) -> dict[str, Any]:
    data = Path(path).read_bytes()
    catchup = asyncio.run(follow(split(data, 1 << 20), eof_at=len(data) >> 20))
    visible = asyncio.run(follow([b"", *split(data, 1 << 16)], eof_at=0))
    return {"catchup_s": catchup[0], "catchup_events": catchup[1],
            "visible_s": visible[0], "visible_events": visible[1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--src", nargs="+", default=[str(ROOT)])
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    sys.path.insert(0, str(ROOT))
    from benchmarks.bench_report import generate

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "sglang.log"
        generate(log, args.lines)
        best: dict[str, dict[str, Any]] = {}
        for _ in range(args.runs):
            for src in args.src:
                env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
                out = subprocess.run([sys.executable, __file__, "--measure", str(log)], env=env,
                                     check=True, capture_output=True, text=True).stdout
                got = json.loads(out)
                old = best.setdefault(src, got)
                for key in ("catchup_s", "visible_s"):
                    old[key] = min(old[key], got[key])
        size = log.stat().st_size
    print(f"{args.lines:,} lines, {size:,} bytes, best of {args.runs}, alternating")
    print(f"{'checkout':40} {'catch-up CPU s':>14} {'events':>8} {'visible CPU s':>13} "
          f"{'events':>9}")
    for src, r in best.items():
        print(f"{src:40} {r['catchup_s']:14.3f} {r['catchup_events']:8} {r['visible_s']:13.3f}"
              f" {r['visible_events']:9}")


if __name__ == "__main__":
    main()
