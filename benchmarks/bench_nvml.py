"""Measure eagle-tui's NVML sampler on this machine and print one JSON object.

    python benchmarks/bench_nvml.py                 # idle GPUs, 2000 samples
    python benchmarks/bench_nvml.py --load 8        # also sample while a torch job runs (8 s)
    python benchmarks/bench_nvml.py --samples 500

What it reports: what the sampler read for every GPU (the same ``GpuInfo`` the dashboard
shows); the cost of one sample per GPU (median/p99 µs over ``--samples`` reads: as the sampler
runs, which reads the compute-process list with every full sample; with it read
every time; without it); the cost of each NVML call on its own and of ``nvmlInit``; and, when
``nvidia-smi`` exists, the cost of one ``nvidia-smi --query-gpu`` process plus a check that the
streamed ``nvidia-smi -lms`` fallback parses this driver's output. Without a driver it prints
the ``no_driver`` state the user would see and exits 0. ``bench_gpu_steps.py`` measures how
soon a memory step reaches the screen.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import isolate  # noqa: F401  (eagle-tui runs with temporary folders)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eagle_tui.sources.gpu import NvmlSampler, SmiStream, smi_argv


def _stats(samples_s: list[float]) -> dict[str, float]:
    us = sorted(x * 1e6 for x in samples_s)
    p99 = us[min(len(us) - 1, round(0.99 * (len(us) - 1)))]
    return {"median_us": round(statistics.median(us), 2), "p99_us": round(p99, 2),
            "max_us": round(us[-1], 2), "n": len(us)}


def _time(fn: Callable[[], Any], n: int) -> dict[str, float]:
    fn()  # warm-up (first call fills caches, e.g. process names)
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return _stats(out)


def _call_costs(sampler: NvmlSampler, handle: Any, n: int) -> dict[str, dict[str, float]]:
    nv = sampler._nvml
    calls: dict[str, Callable[[], Any]] = {
        "memory_info": lambda: nv.nvmlDeviceGetMemoryInfo(handle),
        "memory_info_v2": lambda: nv.nvmlDeviceGetMemoryInfo(handle, version=nv.nvmlMemory_v2),
        "utilization": lambda: nv.nvmlDeviceGetUtilizationRates(handle),
        "temperature": lambda: nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU),
        "power": lambda: nv.nvmlDeviceGetPowerUsage(handle),
        "power_limit": lambda: nv.nvmlDeviceGetEnforcedPowerLimit(handle),
        "sm_clock": lambda: nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_SM),
        "compute_procs": lambda: nv.nvmlDeviceGetComputeRunningProcesses(handle),
    }
    out = {}
    for name, fn in calls.items():
        try:
            out[name] = _time(fn, n)
        except nv.NVMLError as exc:
            out[name] = {"error": str(exc)}  # type: ignore[dict-item]
    return out


def _every_sample(sampler: NvmlSampler, i: int, h: Any, n: int) -> dict[str, float]:
    """Cost when the compute-process list is read on every sample (``process_every=1``)."""
    every = sampler.process_every
    sampler.process_every = 1
    try:
        return _time(lambda: sampler.read_gpu(i, h), n)
    finally:
        sampler.process_every = every


def _readings(sampler: NvmlSampler) -> list[dict[str, Any]]:
    return [dataclasses.asdict(g) for g in sampler.sample().gpus]


def _start_load(seconds: float) -> subprocess.Popen[bytes] | None:
    code = (
        "import time, torch\n"
        "x = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16)\n"
        "pad = torch.empty(8 << 30, dtype=torch.uint8, device='cuda')\n"
        f"end = time.time() + {seconds}\n"
        "while time.time() < end:\n"
        "    for _ in range(20): y = x @ x\n"
        "    torch.cuda.synchronize()\n"
    )
    try:
        return subprocess.Popen([sys.executable, "-c", code])
    except OSError:
        return None


async def _smi_stream_check(seconds: float) -> dict[str, Any]:
    from eagle_tui.transport.local import LocalTransport

    transport = LocalTransport()
    stream = SmiStream(transport, interval=0.2)
    samples = []

    async def collect() -> None:
        async for ev in stream.events():
            samples.append(ev)

    try:
        await asyncio.wait_for(collect(), seconds)
    except TimeoutError:
        pass
    finally:
        await transport.close()
    return {
        "samples": len(samples),
        "states": sorted({getattr(s, "state", "?") for s in samples}),
        "last": [dataclasses.asdict(g) for g in getattr(samples[-1], "gpus", ())] if samples
        else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=2000, help="reads per measurement")
    ap.add_argument("--load", type=float, default=0.0, metavar="SECONDS",
                    help="also sample while a torch matmul job runs for SECONDS")
    args = ap.parse_args()
    result: dict[str, Any] = {"python": sys.version.split()[0]}

    sampler = NvmlSampler()
    t0 = time.perf_counter()
    failed = sampler.start()
    result["nvml_init_ms"] = round((time.perf_counter() - t0) * 1e3, 2)
    if failed is not None:
        result.update(state=failed.state, error=failed.error)
        print(json.dumps(result, indent=1))
        return 0
    nv = sampler._nvml
    result["state"] = "ok"
    result["driver"] = nv.nvmlSystemGetDriverVersion()
    result["nvml_version"] = nv.nvmlSystemGetNVMLVersion()
    result["pynvml_file"] = getattr(nv, "__file__", "")
    handles = sampler._handles
    result["gpu_count"] = len(handles)
    result["readings_idle"] = _readings(sampler)

    per_gpu = []
    for i, h in enumerate(handles):
        entry: dict[str, Any] = {"index": i}
        entry["read_gpu"] = _time(functools.partial(sampler.read_gpu, i, h), args.samples)
        entry["read_gpu_process_list_every_sample"] = _every_sample(sampler, i, h, args.samples)
        sampler.processes = False
        entry["read_gpu_without_processes"] = _time(functools.partial(sampler.read_gpu, i, h),
                                                    args.samples)
        sampler.processes = True
        entry["nvml_calls"] = _call_costs(sampler, h, args.samples)
        per_gpu.append(entry)
    result["cost_per_gpu"] = per_gpu
    result["cost_full_sample_all_gpus"] = _time(sampler.sample, args.samples)

    if args.load > 0:
        job = _start_load(args.load)
        if job is not None:
            time.sleep(min(args.load / 2, 6.0))  # let it allocate and spin up
            sampler._procs.clear()  # the cached process list predates the job
            result["readings_under_load"] = _readings(sampler)
            result["cost_per_gpu_under_load"] = [
                {"index": i,
                 "read_gpu": _time(functools.partial(sampler.read_gpu, i, h), args.samples),
                 "read_gpu_process_list_every_sample": _every_sample(sampler, i, h,
                                                                     args.samples),
                 "nvml_calls": _call_costs(sampler, h, args.samples)}
                for i, h in enumerate(handles)
            ]
            job.wait()
    sampler.stop()

    if shutil.which("nvidia-smi"):
        argv = [a for a in smi_argv(100) if a not in ("-lms", "100")]
        runs = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=False)
            runs.append(time.perf_counter() - t0)
        result["nvidia_smi_query_process_ms"] = round(statistics.median(runs) * 1e3, 1)
        result["smi_stream_check"] = asyncio.run(_smi_stream_check(1.5))
    else:
        result["nvidia_smi"] = "not installed"
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
