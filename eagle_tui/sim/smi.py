"""The fake ``nvidia-smi``: the real CLI's query output, fed by the simulator's state file.

Supported, with the real output format (``fixtures/nvml/nvidia-smi-query.txt``):
``--query-gpu=F1,F2,... --format=csv[,noheader][,nounits]``, ``--query-compute-apps=...``,
``-lms N`` / ``--loop-ms=N`` / ``-l N`` / ``--loop=N`` (stream a sample every interval until
killed), ``-i/--id``, ``-L`` and a bare ``nvidia-smi``. Unknown fields and options fail the way
the real tool does (message + exit 2); a missing state file (the simulator is gone) reads as a
missing driver (exit 9). A loop also ends when its parent dies, so it can never be orphaned.

Stdlib only and started with ``python -S``: a watcher may spawn it every second.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

from eagle_tui.errors import UsageError
from eagle_tui.model.boundary.loaders import load_json

NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
             "sure that the latest NVIDIA driver is installed and running.")
BAD_ARGS = "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help."
DRIVER = "580.159.04"
CUDA = "13.0"

Getter = Callable[[dict[str, Any]], str]
# field -> (header, unit or "", value getter)
GPU_FIELDS: dict[str, tuple[str, str, Getter]] = {
    "index": ("index", "", lambda g: str(g["index"])),
    "uuid": ("uuid", "", lambda g: g["uuid"]),
    "name": ("name", "", lambda g: g["name"]),
    "pci.bus_id": ("pci.bus_id", "", lambda g: f"00000000:{0x18 + 0x10 * g['index']:02X}:00.0"),
    "driver_version": ("driver_version", "", lambda g: DRIVER),
    "count": ("count", "", lambda g: str(g["_count"])),
    "memory.used": ("memory.used", "MiB", lambda g: str(g["memory_used"])),
    "memory.total": ("memory.total", "MiB", lambda g: str(g["memory_total"])),
    "memory.free": ("memory.free", "MiB",
                    lambda g: str(g["memory_total"] - g["memory_used"] - 615)),
    "utilization.gpu": ("utilization.gpu", "%", lambda g: str(g["util_gpu"])),
    "utilization.memory": ("utilization.memory", "%", lambda g: str(g["util_mem"])),
    "temperature.gpu": ("temperature.gpu", "", lambda g: str(g["temperature"])),
    "power.draw": ("power.draw", "W", lambda g: f"{g['power_draw']:.2f}"),
    "power.limit": ("power.limit", "W", lambda g: f"{g['power_limit']:.2f}"),
    "clocks.sm": ("clocks.current.sm", "MHz", lambda g: str(g["clocks_sm"])),
    "clocks.current.sm": ("clocks.current.sm", "MHz", lambda g: str(g["clocks_sm"])),
    "fan.speed": ("fan.speed", "%", lambda g: "[N/A]"),
    "pstate": ("pstate", "", lambda g: "P0"),
    "timestamp": ("timestamp", "", lambda g: g["_stamp"]),
}
APP_FIELDS: dict[str, tuple[str, str, Getter]] = {
    "pid": ("pid", "", lambda a: str(a["pid"])),
    "process_name": ("process_name", "", lambda a: "python3"),
    "used_gpu_memory": ("used_gpu_memory", "MiB", lambda a: str(a["used"])),
    "used_memory": ("used_gpu_memory", "MiB", lambda a: str(a["used"])),
    "gpu_uuid": ("gpu_uuid", "", lambda a: a["uuid"]),
    "gpu_bus_id": ("gpu_bus_id", "", lambda a: f"00000000:{0x18 + 0x10 * a['index']:02X}:00.0"),
}


class SmiUsageError(UsageError):
    """A command line the fake nvidia-smi refuses; printed like the real one's, exit 2."""


def _read(state_path: str) -> list[dict[str, Any]] | None:
    for _ in range(3):
        try:
            with open(state_path, encoding="utf-8") as f:
                data = load_json(f.read(), f"the GPU state file {state_path}")
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            time.sleep(0.01)  # replaced under us: read again
            continue
        gpus: list[dict[str, Any]] = data["gpus"]
        now = time.time()
        stamp = (time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(now))
                 + f".{int(now % 1 * 1000):03d}")
        for g in gpus:
            g["_count"], g["_stamp"] = len(gpus), stamp
        return gpus
    return None


def _table(fields: list[str], spec: dict[str, tuple[str, str, Getter]], rows: list[dict[str, Any]],
           header: bool, units: bool) -> list[str]:
    out = []
    if header:
        out.append(", ".join(spec[f][0] + (f" [{spec[f][1]}]" if spec[f][1] else "")
                             for f in fields))
    for row in rows:
        vals = []
        for f in fields:
            value = spec[f][2](row)
            unit = spec[f][1]
            if units and unit and value != "[N/A]":
                value = f"{value} {unit}" if unit != "%" else f"{value} %"
            vals.append(value)
        out.append(", ".join(vals))
    return out


def _parse(argv: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {"gpu": None, "apps": None, "fmt": None, "loop_s": None, "ids": None,
                            "list": False}
    it = iter(argv)
    for arg in it:
        key, _, val = arg.partition("=")
        if key == "--query-gpu":
            opts["gpu"] = [f.strip() for f in val.split(",") if f.strip()]
        elif key == "--query-compute-apps":
            opts["apps"] = [f.strip() for f in val.split(",") if f.strip()]
        elif key == "--format":
            opts["fmt"] = {p.strip() for p in val.split(",")}
        elif key in ("-lms", "--loop-ms", "-l", "--loop", "-i", "--id"):
            if not val:
                val = next(it, "")
            if key in ("-i", "--id"):
                opts["ids"] = {int(v) for v in val.split(",") if v.strip().isdigit()}
                continue
            try:
                n = float(val)
            except ValueError as e:
                raise SmiUsageError(BAD_ARGS) from e
            opts["loop_s"] = max(0.01, n / 1000 if key in ("-lms", "--loop-ms") else n)
        elif key in ("-L", "--list-gpus"):
            opts["list"] = True
        else:
            raise SmiUsageError(BAD_ARGS)
    for fields, spec in ((opts["gpu"], GPU_FIELDS), (opts["apps"], APP_FIELDS)):
        for f in fields or ():
            if f not in spec:
                raise SmiUsageError(f'Field "{f}" is not a valid field to query.')
    if (opts["gpu"] or opts["apps"]) and not opts["fmt"]:
        raise SmiUsageError(BAD_ARGS)
    return opts


def _render(opts: dict[str, Any], gpus: list[dict[str, Any]]) -> list[str]:
    if opts["ids"] is not None:
        gpus = [g for g in gpus if g["index"] in opts["ids"]]
    if opts["list"]:
        return [f"GPU {g['index']}: {g['name']} (UUID: {g['uuid']})" for g in gpus]
    fmt = opts["fmt"] or set()
    header, units = "noheader" not in fmt, "nounits" not in fmt
    if opts["gpu"]:
        return _table(opts["gpu"], GPU_FIELDS, gpus, header, units)
    if opts["apps"]:
        apps = [{"pid": p, "used": g["memory_used"], "uuid": g["uuid"], "index": g["index"]}
                for g in gpus for p in g["pids"]]
        return _table(opts["apps"], APP_FIELDS, apps, header, units)
    lines = [time.strftime("%a %b %d %H:%M:%S %Y"),
             f"| NVIDIA-SMI {DRIVER}             Driver Version: {DRIVER}     CUDA Version: "
             f"{CUDA}     |"]
    for g in gpus:
        lines.append(f"|   {g['index']}  {g['name']:<24} On | {g['memory_used']:>6}MiB / "
                     f"{g['memory_total']}MiB | {g['util_gpu']:>3}%  {g['power_draw']:>4.0f}W / "
                     f"700W | {g['temperature']}C |")
    return lines


def main(argv: list[str], state_path: str) -> int:
    try:
        opts = _parse(argv)
    except SmiUsageError as e:
        print(e, file=sys.stderr if "valid field" not in str(e) else sys.stdout)
        return 2
    parent = os.getppid()
    next_at = time.monotonic()
    while True:
        gpus = _read(state_path)
        if gpus is None:
            print(NO_DRIVER)
            return 9
        try:
            sys.stdout.write("\n".join(_render(opts, gpus)) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            # the reader went away; point stdout at /dev/null so the interpreter's final flush
            # does not print a second BrokenPipeError
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        if opts["loop_s"] is None:
            return 0
        next_at += opts["loop_s"]
        time.sleep(max(0.0, next_at - time.monotonic()))
        if os.getppid() != parent:
            return 0
