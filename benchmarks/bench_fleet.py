"""Refresh latency and CPU of ``eagle-tui fleet`` for 10, 100 and 1,000 instances.

    python benchmarks/bench_fleet.py                      # 10 100 1000, 20 refreshes each
    python benchmarks/bench_fleet.py --sizes 10 100 --refreshes 10 --write-docs
    python benchmarks/bench_fleet.py --window 1m         # rates at three window tiers

For each size: one synthetic exporter (``benchmarks/fleet_exporter.py``, its own process)
serves that many instances' series; a real Prometheus (Debian's ``/usr/bin/prometheus``,
``honor_labels: true``, scrape every 2 s, TSDB in a temporary directory) scrapes it; once
Prometheus holds a full rate window of samples, the fleet poller (the same code as ``eagle-tui
fleet``) refreshes ``--refreshes`` times, back to back. Measured per refresh, reported as
median (min–max): wall latency (and p95: the four concurrent queries plus building the
snapshot), the poller's CPU (``time.process_time``: JSON parsing and the pure model),
Prometheus' CPU (its process' CPU time during the refresh, minus its idle scraping rate measured
just before), the bytes of the answers, and the HTTP requests (always 4: grouped ``by
(instance)``). ``--repeats N`` starts a fresh Prometheus N times per size (sizes interleaved),
one table row each. ``--write-docs`` replaces the table between the ``bench_fleet`` markers of
``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

if __package__ != "benchmarks":  # imported by a test as benchmarks.X, the suite isolates
    import isolate  # noqa: F401  (eagle-tui runs with temporary folders)
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eagle_tui.sources.prometheus import FleetPoller  # noqa: E402
from tests.support.fleet_helpers import (  # noqa: E402
    PrometheusServer,
    free_port,
    prometheus_available,
    write_config,
)

WINDOW = "10s"
SCRAPE = "2s"


def _p(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def _cpu(proc: psutil.Process | None) -> float:
    if proc is None:
        return 0.0
    t = proc.cpu_times()
    return t.user + t.system


async def _measure(url: str, refreshes: int, window: str = WINDOW, adaptive: bool = True,
                   prom: psutil.Process | None = None, idle_rate: float = 0.0) -> dict[str, Any]:
    poller = FleetPoller(url, window=window, deadline_s=30.0, max_body=256 << 20,
                         adaptive=adaptive)
    latencies: list[float] = []
    cpu: list[float] = []
    prom_cpu: list[float] = []
    answers: list[float] = []
    rows = flagged = 0

    async with httpx.AsyncClient(base_url=url, timeout=30.0, trust_env=False) as client:
        await poller.refresh(client)  # warm: connections open
        before = poller.requests
        for _ in range(refreshes):
            b0, p0 = poller.bytes_received, _cpu(prom)
            c0, t0 = time.process_time(), time.perf_counter()
            snap = await poller.refresh(client)
            took = time.perf_counter() - t0
            latencies.append(took)
            cpu.append(time.process_time() - c0)
            # Prometheus' scraping goes on during the refresh: its idle rate is taken off
            prom_cpu.append(max(0.0, _cpu(prom) - p0 - idle_rate * took))
            answers.append((poller.bytes_received - b0) / 1024)
            rows, flagged = len(snap.rows), sum(1 for r in snap.rows if r.flags)
            if snap.status != "ok":
                raise SystemExit(f"refresh failed: {snap.errors}")
        requests = (poller.requests - before) / refreshes
    return {"rows": rows, "flagged": flagged, "requests_per_refresh": requests,
            "refreshes": refreshes, **_stats("latency_ms", latencies, 1000),
            "latency_p95_ms": round(1000 * _p(latencies, 0.95), 1),
            **_stats("client_cpu_ms", cpu, 1000), **_stats("prometheus_cpu_ms", prom_cpu, 1000),
            **_stats("answer_kib", answers, 1)}


def _stats(name: str, values: list[float], scale: float) -> dict[str, float]:
    """Median and range of one figure over the refreshes, as ``name`` / ``name_min`` / ..."""
    stem = name.removesuffix("_ms").removesuffix("_kib")
    unit = name[len(stem):]
    return {name: round(scale * statistics.median(values), 1),
            f"{stem}_min{unit}": round(scale * min(values), 1),
            f"{stem}_max{unit}": round(scale * max(values), 1)}


def bench_size(n: int, refreshes: int, work: Path, window: str = WINDOW,
               adaptive: bool = True) -> dict[str, Any]:
    port = free_port()
    exporter = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "fleet_exporter.py"),
                                 "--instances", str(n), "--port", str(port)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    prom = None
    try:
        assert exporter.stdout is not None
        exporter.stdout.readline()
        work.mkdir(parents=True, exist_ok=True)
        config = work / "prometheus.yml"
        write_config(config, [f"127.0.0.1:{port}"], interval=SCRAPE, honor_labels=True)
        prom = PrometheusServer(work, config)
        prom.start()
        expected = max(1, n // 2)
        prom.wait_for(f"count_over_time(vllm:generation_tokens_total[{WINDOW}]) >= 3",
                      expected, within_s=120)
        assert prom.proc is not None
        proc = psutil.Process(prom.proc.pid)
        c0, t0 = _cpu(proc), time.monotonic()
        time.sleep(4.0)
        idle_rate = (_cpu(proc) - c0) / (time.monotonic() - t0)
        result = asyncio.run(_measure(prom.url, refreshes, window, adaptive, proc, idle_rate))
        result["prometheus_idle_pct"] = round(100 * idle_rate, 1)
        result["instances"] = n
        return result
    finally:
        if prom is not None:
            prom.stop()
        exporter.terminate()
        exporter.wait(timeout=10)


def _mr(r: dict[str, Any], name: str, unit: str) -> str:
    stem = name.removesuffix(unit)
    shown = {"_ms": "ms", "_kib": "KiB"}[unit]
    return f"{r[name]:,} {shown} ({r[stem + '_min' + unit]:,}–{r[stem + '_max' + unit]:,})"


def table(results: list[dict[str, Any]]) -> str:
    """One row per Prometheus started: median (min–max) over its refreshes."""
    head = ("| instances | run | rows | requests/refresh | latency | latency p95 | eagle-tui CPU "
            "| Prometheus CPU | answers |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    return head + "".join(
        f"| {r['instances']:,} | {r.get('run', 1)} | {r['rows']:,} | "
        f"{r['requests_per_refresh']:g} | {_mr(r, 'latency_ms', '_ms')} | "
        f"{r['latency_p95_ms']:,} ms | {_mr(r, 'client_cpu_ms', '_ms')} | "
        f"{_mr(r, 'prometheus_cpu_ms', '_ms')} | {_mr(r, 'answer_kib', '_kib')} |\n"
        for r in results)


def write_docs(text: str) -> None:
    path = ROOT / "docs" / "performance.md"
    doc = path.read_text()
    begin, end = "<!-- bench_fleet:begin -->", "<!-- bench_fleet:end -->"
    if begin not in doc:
        raise SystemExit(f"no {begin} marker in {path}")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{begin}\n{text}{end}{tail}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    p.add_argument("--refreshes", type=int, default=20)
    p.add_argument("--repeats", type=int, default=1, metavar="N",
                   help="start a fresh Prometheus N times per size, sizes interleaved")
    p.add_argument("--write-docs", action="store_true")
    p.add_argument("--window", default=WINDOW,
                   help=f"the fleet's --window (default {WINDOW}; at 1m the rates are asked at "
                   "three window tiers: 10s, 30s, 1m)")
    p.add_argument("--fixed-window", action="store_true",
                   help="every rate over --window (no adaptive tiers), for comparison")
    args = p.parse_args()
    if not prometheus_available():
        raise SystemExit("bench_fleet: no Prometheus here (Debian: apt-get install -y prometheus)")
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        for run in range(1, args.repeats + 1):
            for n in args.sizes:
                results.append(bench_size(n, args.refreshes, Path(tmp) / f"{n}-{run}",
                                          args.window, not args.fixed_window) | {"run": run})
                print(json.dumps(results[-1]), flush=True)
        results.sort(key=lambda r: (r["instances"], r["run"]))
    text = table(results)
    print(text)
    if args.write_docs:
        write_docs(text)


if __name__ == "__main__":
    main()
