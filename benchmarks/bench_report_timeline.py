"""Where ``report``'s wall time goes with its default processes: a timeline of one process.

Each run starts a fresh Python that runs ``eagle-tui report --json LOG`` in-process, the way the
CLI does, and prints the wall clock at each step, in ms from the moment the benchmark started it
(``subprocess.Popen``): the script's first line (``exec``: the interpreter's own start), the
workers' module imported, the CLI imported, the first and the last fork, the parent's first
chunk and the merge that follows it (``own done``: the parent's fold imports included), the end
of the merge, the end of ``main``; then the run's whole wall time. Runs alternate with
``--workers 1``. The log is ``bench_report``'s (generated when missing).

    python benchmarks/bench_report_timeline.py                  # 1 M lines, 5 runs each
    python benchmarks/bench_report_timeline.py --runs 3 --log /tmp/x.log
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ != "benchmarks":  # imported by a test as benchmarks.X, the suite isolates
    import isolate  # noqa: F401  (eagle-tui runs with temporary folders)

CHILD = r'''
import sys, time
T0 = float(sys.argv[1]); marks = [("exec", time.time())]
import eagle_tui.report.parallel as P
marks.append(("import parallel", time.time()))
fork0 = P._fork
def fork(*a, **k):
    pid = fork0(*a, **k); marks.append(("fork", time.time())); return pid
P._fork = fork
for name in ("own", "finish"):
    f = getattr(P._Merge, name)
    def g(*a, _f=f, _n=name, **k):
        r = _f(*a, **k); marks.append((_n + " done", time.time())); return r
    setattr(P._Merge, name, g)
from eagle_tui.cli import main
marks.append(("import cli", time.time()))
main(["report", "--json", *(["--workers", sys.argv[3]] if sys.argv[3] != "0" else []), sys.argv[2]])
marks.append(("main done", time.time()))
out = []
for n, t in marks:  # the first and the last of repeated steps
    if out and n in ("fork", "own done") and out[-1][0] in (n, "last " + n):
        if out[-1][0] == n:
            out.append(("last " + n, t))
        else:
            out[-1] = ("last " + n, t)
        continue
    out.append((n, t))
sys.stderr.write(" ".join(f"{n}={1000 * (t - T0):.0f}" for n, t in out) + "\n")
'''


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log", type=Path, default=None, help="the log (default: 1 M lines, generated)")
    p.add_argument("--lines", type=int, default=1_000_000)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="eagle-timeline-") as tmp:
        log = args.log
        if log is None:
            sys.path.insert(0, str(Path(__file__).parent))
            import bench_report

            log = Path(tmp) / "bench.log"
            bench_report.generate(log, args.lines)
        child = Path(tmp) / "child.py"
        child.write_text(CHILD, encoding="utf-8")
        subprocess.run([sys.executable, "-m", "eagle_tui", "report", "--json", str(log)],
                       stdout=subprocess.DEVNULL, check=True)  # bytecode, page cache
        for _ in range(args.runs):
            for workers in ("0", "1"):
                t0 = time.time()
                got = subprocess.run([sys.executable, str(child), repr(t0), str(log), workers],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, check=True)
                wall = 1000 * (time.time() - t0)
                label = "default" if workers == "0" else workers
                print(f"workers={label} wall={wall:.0f} {got.stderr.strip()}", flush=True)


if __name__ == "__main__":
    main()
