"""Open a big log: first frame, the last lines on screen, keys during the background summary.

Runs ``eagle-tui watch --log FILE --gpu none`` in tmux (160×48) on a generated log
(``bench_report.generate``, with a unique last line) and polls ``tmux capture-pane``:

* **first frame** (the status line drawn) and **last lines** (the unique last line on screen),
  from the start of the command; the target is last lines ≤ 0.1 s after the frame;
* **keys** while the status line says "summarizing": ``/`` and ``Esc`` open and close the
  filter box, key→screen latency p50/p99 (target p99 ≤ 100 ms);
* **summary / report**: the background summary's child (``python -m eagle_tui.report.prefix``)
  against ``eagle-tui report`` on the same file, same default workers (target ≤ 1.5×).

    python benchmarks/bench_open.py --lines 1000000 5000000 --runs 2
    python benchmarks/bench_open.py --src /path/to/other/checkout   # A/B: PYTHONPATH=SRC

Ratios only compare within one run on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_report
import isolate  # noqa: F401  (eagle-tui runs with temporary folders)

ROOT = Path(__file__).resolve().parents[1]
MARK = "UNIQUE-END-MARKER-77"
PY = sys.executable


def make_log(work: Path, lines: int) -> Path:
    path = work / f"open-{lines}.log"
    if not path.exists():
        bench_report.generate(path, lines)
        with path.open("a") as f:
            f.write(f"[2025-11-20 15:56:49] {MARK}\n")
    return path


class Tmux:
    def __init__(self, cmd: str) -> None:
        self.sock = f"bench-open-{os.getpid()}-{time.monotonic_ns()}"
        subprocess.run(["tmux", "-L", self.sock, "new-session", "-d", "-s", "b", "-x", "160",
                        "-y", "48", cmd], check=True)

    def screen(self) -> str:
        return subprocess.run(["tmux", "-L", self.sock, "capture-pane", "-p", "-t", "b"],
                              capture_output=True, text=True).stdout

    def key(self, key: str) -> None:
        subprocess.run(["tmux", "-L", self.sock, "send-keys", "-t", "b", key])

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)


def open_once(log: Path, src: Path) -> dict[str, float | None]:
    t0 = time.monotonic()
    t = Tmux(f"cd {tempfile.gettempdir()} && PYTHONPATH={src} {PY} -m eagle_tui watch "
             f"--log {log} --gpu none")
    frame = text = None
    lat: list[float] = []
    try:
        while time.monotonic() - t0 < 60 and text is None:
            s = t.screen()
            now = time.monotonic() - t0
            frame = frame if frame is not None or "eagle-tui" not in s else now
            text = now if MARK in s else None
            time.sleep(0.005)
        while "summarizing" in t.screen() and len(lat) < 200:
            for key, want in (("/", True), ("Escape", False)):
                k0 = time.monotonic()
                t.key(key)
                while time.monotonic() - k0 < 3 and (
                        "filter: show only" in t.screen()) != want:
                    time.sleep(0.003)
                lat.append(time.monotonic() - k0)
            time.sleep(0.05)
    finally:
        t.close()
    lat.sort()

    def q(p: float) -> float | None:
        return lat[min(len(lat) - 1, int(p * len(lat)))] if lat else None

    return {"frame": frame, "text": text, "keys": float(len(lat)), "p50": q(0.5), "p99": q(0.99)}


def timed(argv: list[str], src: Path) -> float:
    t0 = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": str(src)})
    return time.monotonic() - t0


def summary_vs_report(log: Path, src: Path) -> tuple[float, float]:
    start = log.stat().st_size - (256 << 10)
    with log.open("rb") as f:
        f.seek(start)
        start += f.readline().__len__()
    with tempfile.TemporaryDirectory() as tmp:
        summary = timed([PY, "-m", "eagle_tui.report.prefix", str(log), str(start),
                         str(Path(tmp) / "out.pickle")], src)
    report = timed([PY, "-m", "eagle_tui", "report", str(log)], src)
    return summary, report


def fmt(v: float | None, scale: float = 1.0, unit: str = " s") -> str:
    if v is None:
        return "—"
    return f"{v * scale:.3f}{unit}" if unit == " s" else f"{v * scale:.0f}{unit}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--src", type=Path, default=ROOT)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs, src {args.src}")
    for n in args.lines:
        log = make_log(args.workdir, n)
        for r in range(args.runs):
            m = open_once(log, args.src)
            after = None if m["text"] is None or m["frame"] is None else m["text"] - m["frame"]
            print(f"{n:>9,} lines run {r}: first frame {fmt(m['frame'])}, last lines "
                  f"{fmt(m['text'])} ({fmt(after)} after the frame); {m['keys']:.0f} keys "
                  f"while summarizing: p50 {fmt(m['p50'], 1000, ' ms')}, "
                  f"p99 {fmt(m['p99'], 1000, ' ms')}")
        try:
            summary, report = summary_vs_report(log, args.src)
        except subprocess.CalledProcessError:  # a checkout from before the summary
            print(f"{n:>9,} lines: no background summary in {args.src}")
            continue
        print(f"{n:>9,} lines: summary {summary:.2f} s, report {report:.2f} s "
              f"({summary / report:.2f}×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
