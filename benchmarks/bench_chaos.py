"""Endpoint chaos: the dashboard, headless ``watch`` and ``wait`` against a hostile server.

For each mode of :class:`eagle_tui.sim.hostile.HostileServer` (``ok`` and the nine faults:
refused, 503, 500, garbage, hang, drip, huge, endless, unrepresentable numbers):

* **dashboard**: ``eagle-tui watch --log SAMPLE --url URL --gpu none`` in tmux at 160×48 (as
  ``bench_tui.py``). Once drawn and 2 s into the fault, a key every 0.2 s for ``--seconds``:
  ``/`` opens the log's filter box, ``Esc`` closes it; key→screen latency is from ``send-keys``
  until ``tmux capture-pane`` shows the change (so it includes tmux and the capture).
  Also the health word the Startup pane shows, the app's CPU over the probe and its peak RSS.
* **headless**: ``watch --headless --url URL --duration 3``: wall time, exit code, peak RSS
  (``wait4``).
* **wait**: ``wait --url URL --timeout 3`` (for ``huge``/``endless`` ``/health`` answers 503, so
  ``wait`` keeps waiting while ``/metrics`` floods): wall time and exit code.

    python benchmarks/bench_chaos.py             # every mode, prints the table
    python benchmarks/bench_chaos.py --quick     # 4 s of keys per mode
    python benchmarks/bench_chaos.py --write     # and update docs/reliability.md

Results go into the "Endpoint chaos" section of ``docs/reliability.md`` between this script's
markers.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import isolate  # noqa: F401  (eagle-tui runs with temporary folders)
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_tui import Pane, pct, wait_screen  # noqa: E402

from eagle_tui.sim.hostile import MODES, HostileServer  # noqa: E402

DOC = ROOT / "docs" / "reliability.md"
BEGIN, END = "<!-- bench_chaos:begin -->", "<!-- bench_chaos:end -->"
SAMPLE = ROOT / "eagle_tui" / "data" / "sample-sglang-eagle3.log"
_HEALTH = re.compile(r"health (no_listener|starting|ready|error|timeout|unknown)")
Row = dict[str, float | str]


TREE = ROOT  # the eagle-tui under test (--tree: another checkout, for a before/after)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(TREE)}


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "eagle_tui", *args]


def dashboard(url: str, seconds: float) -> Row:
    cmd = f"env PYTHONPATH={TREE} {sys.executable} -m eagle_tui watch --log {SAMPLE} " \
          f"--url {url} --gpu none"
    p = Pane(cmd)
    try:
        _, ready = wait_screen(p, lambda t: "─ Log" in t, 30)
        if ready is None:
            return {"error": "no first frame"}
        time.sleep(2.0)
        proc = psutil.Process(p.pid)
        cpu0, t0, rss = p.cpu_seconds(), time.monotonic(), 0.0
        latencies: list[float] = []
        misses, state = 0, False
        while time.monotonic() - t0 < seconds:
            sent = time.monotonic()
            p.send("Escape" if state else "/")
            want = not state
            _, took = wait_screen(p, lambda t, w=want: ("filter: show only" in t) == w, 2.0)
            if took is None:
                misses += 1
            else:
                latencies.append(time.monotonic() - sent)
                state = not state
            for q in (proc, *proc.children(recursive=True)):
                try:
                    rss = max(rss, q.memory_info().rss / 2**20)
                except psutil.Error:
                    pass
            time.sleep(0.2)
        cpu = (p.cpu_seconds() - cpu0) / (time.monotonic() - t0)
        if state:
            p.send("Escape")
        m = _HEALTH.search(p.capture())
        return {"keys": len(latencies), "p50 ms": pct(latencies, 0.5) * 1000,
                "p99 ms": pct(latencies, 0.99) * 1000,
                "max ms": max(latencies, default=float("nan")) * 1000, "lost": misses,
                "health shown": m.group(1) if m else "-", "CPU %": cpu * 100,
                "peak RSS MB": rss}
    finally:
        p.close()


def timed(args: list[str], limit: float = 60.0) -> tuple[float, int, float]:
    """(seconds, exit code, peak RSS MB) of one eagle-tui run."""
    t0 = time.monotonic()
    proc = subprocess.Popen(_cmd(*args), cwd=TREE, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - t0 > limit:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.monotonic() - t0, proc.returncode, usage.ru_maxrss / 1024


def one_mode(srv: HostileServer, mode: str, seconds: float) -> Row:
    srv.set_mode(mode)
    srv.health_mode = None
    row = dashboard(srv.url, seconds)
    took, rc, rss = timed(["watch", "--headless", "--url", srv.url, "--duration", "3"])
    row.update({"headless 3 s: took": took, "rc": rc, "RSS MB": rss})
    if mode in ("huge", "endless"):
        srv.health_mode = "503"
    took, rc, _ = timed(["wait", "--url", srv.url, "--timeout", "3"])
    row.update({"wait 3 s: took": took, "wait rc": rc})
    srv.health_mode = None
    return row


def fmt(v: float | str) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, int):
        return str(v)
    return "-" if v != v else f"{v:.1f}" if abs(v) < 100 else f"{v:.0f}"


def table(rows: dict[str, Row]) -> str:
    cols = list(next(iter(rows.values())).keys())
    out = ["| mode | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    out += [f"| {m} | " + " | ".join(fmt(r.get(c, "-")) for c in cols) + " |"
            for m, r in rows.items()]
    return "\n".join(out)


def machine() -> str:
    return (f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"{time.strftime('%Y-%m-%d', time.gmtime())}")


def write_doc(body: str) -> None:
    text = DOC.read_text()
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + BEGIN + "\n" + body + "\n" + END + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + f"\n\n{BEGIN}\n{body}\n{END}\n"
    DOC.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4 s of keys per mode (default 10)")
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated modes")
    ap.add_argument("--write", action="store_true", help="update docs/reliability.md")
    ap.add_argument("--tree", type=Path, default=None,
                    help="run the eagle-tui of this checkout (the server stays this one's)")
    a = ap.parse_args()
    global TREE
    TREE = a.tree.resolve() if a.tree else ROOT
    seconds = a.seconds or (4.0 if a.quick else 10.0)
    rows: dict[str, Row] = {}
    with HostileServer(drip_s=1.0, max_conn_s=60.0) as srv:
        for mode in a.modes.split(","):
            rows[mode] = one_mode(srv, mode, seconds)
            print(f"{mode}: {rows[mode]}", file=sys.stderr, flush=True)
    who = "" if TREE == ROOT else f" (eagle-tui of {TREE})"
    body = f"Measured {machine()}{who}, {seconds:g} s of keys per mode:\n\n{table(rows)}"
    print(body)
    if a.write:
        write_doc(body)


if __name__ == "__main__":
    main()
