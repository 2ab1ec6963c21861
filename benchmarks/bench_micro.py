"""Small costs that comments once quoted, measured again: imports, class creation, psutil calls.

    python benchmarks/bench_micro.py             # three runs of each, one JSON object

What it reports (each figure as the list of its runs, so a loaded machine shows as spread):
the cumulative import time of ``paramiko``, ``textual.app``, ``httpx`` and ``tempfile`` in a
fresh interpreter (``python -X importtime``); the time to create one frozen, slotted dataclass
of five fields (what ``@record`` avoids repeating per class); and one ``psutil``
``is_running()`` + ``status()`` pair (the process watcher's liveness check). The results are in
docs/performance.md, "Figures from the source".
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time

MODULES = ("paramiko", "textual.app", "httpx", "tempfile")


def import_s(module: str) -> float:
    """Cumulative import time of ``module`` in a fresh interpreter, in seconds."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         capture_output=True, text=True, check=True).stderr
    for line in err.splitlines():
        fields = [f.strip() for f in line.split("|")]
        if len(fields) == 3 and fields[2] == module:
            return int(fields[1]) / 1e6
    raise LookupError(module)


def dataclass_ms(n: int = 30) -> float:
    fields = [("a", int), ("b", float), ("c", str), ("d", int), ("e", float)]
    t0 = time.perf_counter()
    for i in range(n):
        dataclasses.make_dataclass(f"C{i}", fields, frozen=True, slots=True)
    return (time.perf_counter() - t0) / n * 1e3


def liveness_us(n: int = 2000) -> float:
    import psutil

    proc = psutil.Process(os.getpid())
    t0 = time.perf_counter()
    for _ in range(n):
        proc.is_running()
        proc.status()
    return (time.perf_counter() - t0) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    out = {f"import_s {m}": [round(import_s(m), 3) for _ in range(runs)] for m in MODULES}
    out["dataclass_ms per class"] = [round(dataclass_ms(), 2) for _ in range(runs)]
    out["psutil is_running+status us"] = [round(liveness_us(), 1) for _ in range(runs)]
    out["load average"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
