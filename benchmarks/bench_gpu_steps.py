"""GPU memory steps: how long after NVML sees one does the dashboard show it?

A child process (torch) allocates ``--steps`` blocks of ``--step-gib`` GiB on one GPU, one every
``--hold`` seconds, frees them one by one, allocates them all again and exits holding them (the
driver frees a process's memory when it exits). Meanwhile, all on one clock:

* an NVML poller reads the GPU's used memory every 2 ms (the "NVML sees it" time of each step);
* ``nvidia-smi --query-gpu=memory.used --format=csv -lms 50`` streams its readings;
* ``eagle-tui watch --log FILE --gpu nvml`` runs in tmux (160×48) and its screen is read
  5 ms after the previous capture: the GPU's ``used/total`` in the GPU pane.

For every step the report gives the time from NVML's first reading past the step's midpoint to
the first screen (and nvidia-smi line) past it: the target is ≤ 0.3 s on screen, allocations and
frees alike, and for the memory freed when the process exits.

    python benchmarks/bench_gpu_steps.py                 # GPU 0, 5 steps of 4 GiB
    python benchmarks/bench_gpu_steps.py --gpu 3 --step-gib 2 --steps 10 --json out.json
    python benchmarks/bench_gpu_steps.py --baseline /path/to/other/checkout   # A/B, one run

Needs only the standard library, eagle-tui's dependencies (pynvml: ``nvidia-ml-py``), torch for
the child, tmux and (optionally) nvidia-smi; no network.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import isolate  # noqa: F401  (eagle-tui runs with temporary folders)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tui import Pane, eagle_tui, write_big_log, write_section

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench_gpu_steps:begin -->", "<!-- bench_gpu_steps:end -->"
GIB = 1 << 30
MIB = 1 << 20
_SHOWN = re.compile(r"(\d+\.\d)/(\d+)G")
MERGE_S = 0.1  # NVML steps closer than this in the same direction count as one

CHILD = r"""
import os, sys, time, torch
step, n, hold = int(float(sys.argv[1]) * (1 << 30)), int(sys.argv[2]), float(sys.argv[3])
torch.cuda.init()
torch.empty(1, device="cuda")
torch.cuda.synchronize()
print("ready", flush=True)
sys.stdin.readline()
blocks = []
def say(what):
    print(what, time.monotonic(), flush=True)
for i in range(n):
    blocks.append(torch.empty(step, dtype=torch.uint8, device="cuda"))
    torch.cuda.synchronize()
    say(f"alloc {i}")
    time.sleep(hold)
while blocks:
    blocks.pop()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    say(f"free {len(blocks)}")
    time.sleep(hold)
for i in range(n):
    blocks.append(torch.empty(step, dtype=torch.uint8, device="cuda"))
torch.cuda.synchronize()
say("alloc all")
time.sleep(hold)
say("exit")
os._exit(0)
"""


@dataclass
class Trace:
    """``(monotonic time, used bytes)`` readings of one observer."""

    name: str
    points: list[tuple[float, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, t: float, used: float) -> None:
        with self.lock:
            if not self.points or self.points[-1][1] != used:
                self.points.append((t, used))

    def first_past(self, t0: float, before: float, after: float, until: float) -> float | None:
        """The first reading at or after ``t0`` (and before ``until``) nearer ``after``."""
        with self.lock:
            points = list(self.points)
        last = None
        for t, used in points:
            if t < t0:
                last = used
                continue
            if t > until:
                break
            if abs(used - after) < abs(used - before):
                return t
        if last is not None and abs(last - after) < abs(last - before):
            return t0  # already there (the observer read it before NVML's poller did)
        return None


def nvml_poller(handle: object, nv: object, trace: Trace, stop: threading.Event) -> None:
    get = nv.nvmlDeviceGetMemoryInfo  # type: ignore[attr-defined]
    v2 = getattr(nv, "nvmlMemory_v2", None)
    while not stop.is_set():
        try:
            mem = get(handle, version=v2) if v2 is not None else get(handle)
        except (TypeError, nv.NVMLError):  # type: ignore[attr-defined]
            mem = get(handle)
            v2 = None
        trace.add(time.monotonic(), float(mem.used))
        time.sleep(0.002)


def smi_reader(index: int, trace: Trace, stop: threading.Event) -> subprocess.Popen[str] | None:
    if shutil.which("nvidia-smi") is None:
        return None
    proc = subprocess.Popen(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,"
                             "nounits", "-lms", "50", "-i", str(index)], stdout=subprocess.PIPE,
                            text=True)

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if stop.is_set():
                break
            try:
                trace.add(time.monotonic(), float(line.strip()) * MIB)
            except ValueError:
                continue

    threading.Thread(target=read, daemon=True).start()
    return proc


def screen_reader(p: Pane, position: int, trace: Trace, stop: threading.Event) -> None:
    """The ``position``-th GPU row's used GiB, as the GPU pane shows it."""
    while not stop.is_set():
        t = time.monotonic()
        shown = _SHOWN.findall(p.capture())
        if len(shown) > position:
            trace.add(t, float(shown[position][0]) * GIB)
        time.sleep(0.005)


@dataclass
class Step:
    what: str
    t: float  # NVML's first reading past the midpoint
    before: float
    after: float


def nvml_steps(trace: Trace, min_step: float) -> list[Step]:
    """Steps in NVML's readings: a move of at least ``min_step`` that then holds."""
    steps: list[Step] = []
    pts = trace.points
    if not pts:
        return steps
    level = pts[0][1]
    for t, used in pts[1:]:
        if abs(used - level) >= min_step:
            what = "alloc" if used > level else "free"
            if steps and steps[-1].what == what and t - steps[-1].t < MERGE_S:
                steps[-1].after = used  # blocks allocated back to back: one step on screen
            else:
                steps.append(Step(what, t, level, used))
            level = used
        elif steps and abs(used - steps[-1].after) < min_step / 4:
            steps[-1].after = used  # the same step settling (a few MiB more or less)
    return steps


def run_once(label: str, command: str, args: argparse.Namespace, work: Path) -> dict[str, object]:
    import pynvml as nv

    nv.nvmlInit()
    handle = nv.nvmlDeviceGetHandleByIndex(args.gpu)
    uuid = nv.nvmlDeviceGetUUID(handle)
    uuid = uuid.decode() if isinstance(uuid, bytes) else uuid
    count = nv.nvmlDeviceGetCount()
    stop = threading.Event()
    nvml, smi, screen = Trace("nvml"), Trace("nvidia-smi"), Trace(label)
    log = work / f"{label}.log"
    write_big_log(log, 2_000)
    p = Pane(command.format(log=log))
    child: subprocess.Popen[str] | None = None
    smi_proc = None
    try:
        deadline = time.monotonic() + 60
        while len(_SHOWN.findall(p.capture())) < count:
            if time.monotonic() > deadline:
                raise SystemExit(f"{label}: the GPU pane never showed {count} GPU rows")
            time.sleep(0.05)
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=uuid)
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(args.step_gib),
                                  str(args.steps), str(args.hold)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, env=env)
        assert child.stdin is not None and child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            raise SystemExit("the torch child did not start")
        threading.Thread(target=nvml_poller, args=(handle, nv, nvml, stop), daemon=True).start()
        smi_proc = smi_reader(args.gpu, smi, stop)
        threading.Thread(target=screen_reader, args=(p, args.gpu, screen, stop),
                         daemon=True).start()
        time.sleep(max(2.0, args.hold))  # every observer has the level before the first step
        t_go = time.monotonic()
        child.stdin.write("go\n")
        child.stdin.flush()
        marks = [line.split() for line in child.stdout]
        child.wait()
        time.sleep(max(2.5, args.hold))  # the exit's free, seen by everyone
    finally:
        stop.set()
        if child is not None and child.poll() is None:
            child.kill()
        if smi_proc is not None:
            smi_proc.terminate()
        p.close()
        nv.nvmlShutdown()
    steps = [s for s in nvml_steps(nvml, args.step_gib * GIB / 2) if s.t >= t_go]
    exit_t = next((float(m[-1]) for m in marks if m and m[0] == "exit"), None)
    rows = []
    for i, s in enumerate(steps):
        until = steps[i + 1].t if i + 1 < len(steps) else s.t + 10
        what = "exit" if exit_t is not None and s.what == "free" and s.t >= exit_t else s.what
        row: dict[str, object] = {"step": what, "t_s": round(s.t - t_go, 3),
                                  "from_gib": round(s.before / GIB, 2),
                                  "to_gib": round(s.after / GIB, 2)}
        for tr in (screen, smi):
            seen = tr.first_past(s.t - 0.01, s.before, s.after, until)
            # (0: the observer had it first: NVML's poller, on a busy machine, ran late)
            row[f"{tr.name} ms"] = round(max(0.0, 1000 * (seen - s.t)), 1) if seen is not None \
                else None
        rows.append(row)
    if exit_t is not None:
        for r in rows:
            if r["step"] == "exit":
                r["after exit ms"] = round(1000 * (t_go + float(r["t_s"]) - exit_t), 1)  # type: ignore[arg-type]
    return {"label": label, "steps": rows}


def summary(results: list[dict[str, object]]) -> str:
    lines = []
    for res in results:
        label = str(res["label"])
        rows: list[dict[str, object]] = res["steps"]  # type: ignore[assignment]
        cols = ["step", "t_s", "from_gib", "to_gib", f"{label} ms", "nvidia-smi ms"]
        lines += [f"**{label}**: screen and nvidia-smi after NVML's first reading past each "
                  "step's midpoint", "", "| " + " | ".join(cols) + " |",
                  "|" + "---|" * len(cols)]
        for r in rows:
            lines.append("| " + " | ".join("—" if r.get(c) is None else str(r.get(c))
                                           for c in cols) + " |")
        for name in (f"{label} ms", "nvidia-smi ms"):
            vals = [float(r[name]) for r in rows if r.get(name) is not None]  # type: ignore[arg-type]
            missed = sum(r.get(name) is None for r in rows)
            if vals:
                lines.append("")
                who = name.removesuffix(" ms")
                lines.append(f"{who}: median {statistics.median(vals):.0f} ms, "
                             f"max {max(vals):.0f} ms over {len(vals)} steps"
                             + (f", {missed} never seen" if missed else ""))
        lines.append("")
    return "\n".join(lines)


def write_doc(body: str) -> None:
    write_section(body, BEGIN, END, "### GPU memory steps on screen")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--gpu", type=int, default=0, help="NVML index of the GPU (default 0)")
    ap.add_argument("--step-gib", type=float, default=4.0)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--hold", type=float, default=1.5, help="seconds between steps")
    ap.add_argument("--baseline", type=Path, metavar="DIR",
                    help="also run the dashboard of the checkout in DIR, right after")
    ap.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    ap.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = ap.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("bench_gpu_steps: tmux is required")
    runs = [("eagle-tui", f"env -u COLUMNS -u LINES {eagle_tui()} watch --log {{log}} --gpu nvml")]
    if args.baseline is not None:
        path = os.pathsep.join([str(args.baseline.resolve()), os.environ.get("PYTHONPATH", "")])
        # -C: ``python -m`` puts the working directory first on sys.path, ahead of PYTHONPATH
        runs.append(("baseline", f"env -u COLUMNS -u LINES -C {args.baseline.resolve()} "
                                 f"PYTHONPATH={path.rstrip(os.pathsep)} {sys.executable} -m "
                                 "eagle_tui watch --log {log} --gpu nvml"))
    with tempfile.TemporaryDirectory(prefix="eagle-gpu-steps-") as tmp:
        results = [run_once(label, cmd, args, Path(tmp)) for label, cmd in runs]
    import pynvml as nv

    nv.nvmlInit()
    name = nv.nvmlDeviceGetName(nv.nvmlDeviceGetHandleByIndex(args.gpu))
    driver = nv.nvmlSystemGetDriverVersion()
    nv.nvmlShutdown()
    head = (f"Measured on GPU {args.gpu} ({name if isinstance(name, str) else name.decode()}, "
            f"driver {driver if isinstance(driver, str) else driver.decode()}), "
            f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}, by `python "
            f"benchmarks/bench_gpu_steps.py {' '.join(sys.argv[1:])}` ({args.steps} steps of "
            f"{args.step_gib:g} GiB every {args.hold:g} s; NVML polled every 2 ms, the screen "
            "every ~5 ms).")
    text = head + "\n\n" + summary(results)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if args.write:
        write_doc(text.rstrip())
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
