"""Soak: eagle-tui following a log at 200 lines/s for hours in a real terminal (tmux).

``eagle-tui watch --log FILE --gpu none`` of *this checkout* (``python -m eagle_tui`` with
``PYTHONPATH`` set to it, started in it, so a later edit of another checkout changes nothing)
runs in its own tmux server at 160×48 while ``bench_tui``'s writer (its line pool: SGLang
EAGLE-3 decode-heavy) appends 200 lines/s under ``nice -n 10``: the viewer's CPU is what is
measured, the writer should not compete with it. Every ``--interval`` seconds (default 60) one
CSV row: elapsed time, RSS of the viewer (all its processes, MB), its CPU over the interval (%
of one core: user + system of the viewer, its descendants and the children it reaped), lines
written, lines the status line counts, load average.

    python benchmarks/bench_soak.py                       # 3 hours
    python benchmarks/bench_soak.py --hours 0.0833 --interval 15   # 5 minutes, to try it
    python benchmarks/bench_soak.py --hours 2 --out benchmarks/results/soak-2cpu.csv
    python benchmarks/bench_soak.py --summarize benchmarks/results/soak-2cpu.csv  # so far

The summary (printed, and written next to the CSV as ``.txt``): RSS median of the first vs the
last 10 minutes, the RSS slope (least squares, MB/hour) after the first 10 minutes and over the
second half of the run, CPU median and range per hour.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ != "benchmarks":  # imported by a test as benchmarks.X, the suite isolates
    import isolate  # noqa: F401  (eagle-tui runs with temporary folders)
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tui import SIZE, Pane, _dash_seen, pane, warm_bytecode

ROOT = Path(__file__).resolve().parent.parent
BENCH_TUI = ROOT / "benchmarks" / "bench_tui.py"
RATE = 200.0
FIELDS = ("elapsed_s", "rss_mb", "cpu_pct", "lines_written", "lines_shown", "procs", "load1")


def viewer_command(log: Path) -> str:
    """This checkout's dashboard, whatever the venv's editable install points at."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    # -C: ``python -m`` puts the working directory first on sys.path
    return (f"env -C {ROOT} -u COLUMNS -u LINES PYTHONPATH={path} {sys.executable} -m eagle_tui "
            f"watch --log {log} --gpu none")


def processes(p: Pane) -> list[psutil.Process]:
    try:
        root = psutil.Process(p.pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def sample(p: Pane) -> tuple[float, float, int]:
    """(RSS MB of every process of the viewer, CPU seconds so far, how many processes)."""
    rss = cpu = 0.0
    procs = processes(p)
    for q in procs:
        try:
            rss += q.memory_info().rss / 2**20
            t = q.cpu_times()
        except psutil.Error:
            continue
        cpu += t.user + t.system + t.children_user + t.children_system
    return rss, cpu, len(procs)


class LineCounter:
    """Lines in the growing log, counted from where the last call stopped."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.lines = path, 0, 0

    def count(self) -> int:
        with self.path.open("rb") as fh:
            fh.seek(self.offset)
            while chunk := fh.read(1 << 20):
                self.lines += chunk.count(b"\n")
                self.offset += len(chunk)
        return self.lines


def slope_per_hour(xs: list[float], ys: list[float]) -> float:
    if len(xs) < 2:
        return float("nan")
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return 3600 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den \
        else float("nan")


def summary(rows: list[dict[str, float]], window_s: float) -> list[str]:
    if not rows:
        return ["no samples"]
    end = rows[-1]["elapsed_s"]
    window_s = min(window_s, end / 2)
    first = [r["rss_mb"] for r in rows if r["elapsed_s"] <= window_s]
    last = [r["rss_mb"] for r in rows if r["elapsed_s"] > end - window_s]
    after = [r for r in rows if r["elapsed_s"] > window_s] or rows
    slope = slope_per_hour([r["elapsed_s"] for r in after], [r["rss_mb"] for r in after])
    second = [r for r in rows if r["elapsed_s"] > end / 2] or rows
    late = slope_per_hour([r["elapsed_s"] for r in second], [r["rss_mb"] for r in second])
    out = [f"samples: {len(rows)} over {end / 3600:.2f} h",
           f"RSS first {window_s / 60:.0f} min: median {statistics.median(first):.1f} MB "
           f"(range {min(first):.1f}-{max(first):.1f}); last {window_s / 60:.0f} min: median "
           f"{statistics.median(last):.1f} MB (range {min(last):.1f}-{max(last):.1f})",
           f"RSS slope after the first {window_s / 60:.0f} min: {slope:+.2f} MB/hour "
           f"(max {max(r['rss_mb'] for r in rows):.1f} MB); over the second half: "
           f"{late:+.2f} MB/hour"]
    times = [r["elapsed_s"] for r in rows]
    step = statistics.median(b - a for a, b in itertools.pairwise(times)) if len(rows) > 1 else 0

    def hour(r: dict[str, float]) -> int:  # a sample covers the interval that ends at it
        return max(0, int((r["elapsed_s"] - step / 2) // 3600))

    for h in sorted({hour(r) for r in rows}):
        cpu = [r["cpu_pct"] for r in rows if hour(r) == h]
        out.append(f"CPU hour {h + 1}: median {statistics.median(cpu):.2f} % of a core "
                   f"(range {min(cpu):.2f}-{max(cpu):.2f}, {len(cpu)} samples)")
    shown = [(r["lines_written"] - r["lines_shown"]) / RATE for r in rows if r["lines_shown"] >= 0]
    if shown:
        out.append(f"screen behind the log at the samples: median {statistics.median(shown):.2f} s,"
                   f" max {max(shown):.2f} s")
    return out


def run(hours: float, interval: float, out: Path, window_s: float) -> list[str]:
    header = (f"bench_soak: {os.cpu_count()} cores ({platform.machine()}), Python "
              f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, checkout "
              f"{ROOT} at {git_head()}, tmux {SIZE[0]}×{SIZE[1]}, {RATE:g} lines/s for "
              f"{hours:g} h, a sample every {interval:g} s")
    print(header, flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="eagle-soak-") as tmp, \
            out.open("w", newline="") as fh:
        log = Path(tmp) / "soak.log"
        log.write_bytes(b"")
        table = csv.DictWriter(fh, FIELDS)
        table.writeheader()
        counter = LineCounter(log)
        with pane(viewer_command(log)) as p:
            deadline = time.monotonic() + 30
            while "─ Log" not in p.capture():
                if time.monotonic() > deadline:
                    raise SystemExit("bench_soak: no first frame in 30 s")
                time.sleep(0.1)
            writer = subprocess.Popen(
                ["nice", "-n", "10", sys.executable, str(BENCH_TUI), "--writer", str(log),
                 str(RATE), str(hours * 3600 + 2 * interval)], stdout=subprocess.DEVNULL)
            try:
                t0 = time.monotonic()
                _, cpu0, _ = sample(p)
                t_prev = t0
                while (now := time.monotonic()) - t0 < hours * 3600:
                    time.sleep(max(0.0, t_prev + interval - now))
                    rss, cpu, n = sample(p)
                    t = time.monotonic()
                    seen = _dash_seen(p.capture())
                    row = {"elapsed_s": round(t - t0, 1), "rss_mb": round(rss, 2),
                           "cpu_pct": round(100 * (cpu - cpu0) / (t - t_prev), 3),
                           "lines_written": counter.count(),
                           "lines_shown": -1 if seen is None else seen, "procs": n,
                           "load1": round(os.getloadavg()[0], 2)}
                    cpu0, t_prev = cpu, t
                    rows.append(row)
                    table.writerow(row)
                    fh.flush()
                    if n == 0:
                        print("bench_soak: the viewer is gone", flush=True)
                        break
            finally:
                writer.terminate()
                writer.wait()
    lines = [header, *summary(rows, window_s), f"CSV: {out}"]
    out.with_suffix(".txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


def git_head() -> str:
    got = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)
    return got.stdout.strip() or "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--hours", type=float, default=3.0)
    ap.add_argument("--interval", type=float, default=60.0, metavar="S",
                    help="seconds between samples (default 60)")
    ap.add_argument("--window-min", type=float, default=10.0,
                    help="minutes compared at the start and the end (default 10)")
    ap.add_argument("--out", type=Path, metavar="CSV",
                    help="default benchmarks/results/soak-<cores>cpu-<date>.csv")
    ap.add_argument("--summarize", type=Path, metavar="CSV",
                    help="only print the summary of a CSV this script wrote (or is writing)")
    args = ap.parse_args()
    if args.summarize is not None:
        with args.summarize.open(newline="") as fh:
            rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(fh)]
        print("\n".join(summary(rows, 60 * args.window_min)))
        return
    out = args.out or (ROOT / "benchmarks" / "results" /
                       f"soak-{os.cpu_count()}cpu-{time.strftime('%Y%m%d-%H%M')}.csv")
    warm_bytecode([])
    for line in run(args.hours, args.interval, out.resolve(), 60 * args.window_min)[1:]:
        print(line, flush=True)


if __name__ == "__main__":
    main()
