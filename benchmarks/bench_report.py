"""Benchmark ``eagle-tui report --json`` against ``grep -c`` on generated SGLang EAGLE-3 logs.

The log is what a decode-heavy SGLang EAGLE-3 server with an ``[EAGLE3-DEBUG]`` print writes,
modelled on the simulator (``eagle_tui.sim``): the real startup sequence, then requests at a
few-way concurrency; each request logs a ``Prefill batch`` line, a debug line and, when it ends,
a uvicorn access line; every ``decode_log_interval`` steps the scheduler logs a ``Decode batch``
line (late-2025 format, trailing ``", "``) followed by a debug line. Of the lines, 45 % are
Decode lines, 45 % debug lines, 10 % prefill and access lines.

For each size the same file is measured with ``grep -c "Decode batch"``, ``grep -c ''`` and
``wc -l`` (what reading the file costs a C program), lnav's ``count(*)`` of its messages where
lnav is found (``--lnav PATH``), and with ``python -m eagle_tui report --json
FILE`` (fresh process, startup included, output to a file — not ``/dev/null``, where GNU grep
stops at the first match), alternately: best wall time of ``--runs`` runs each, best CPU time
(user + system of the process and the workers it reaped: the cost "on one core"), the ratio of
``report``'s wall time to ``grep -c "Decode batch"``'s, and the peak memory: ``wait4``'s peak
RSS, or for a ``report`` that has ``--debug-rss`` its own peak RSS plus each forked worker's
peak private memory (the tree's memory, every page counted once at most; ``wait4`` alone shows
only the largest process of the tree), and beside it the plain sum of every process's peak RSS
(pages a worker shares with the parent counted in each: an overstatement). The table is
printed and, with ``--write``, put into the "report" section of ``docs/performance.md``. By
default ``report`` runs with ``--workers 1`` and with its own default process count, one row
each; ``--workers 1 2 4 8`` measures those counts instead (0: the default).

Python's bytecode cache is on, in a private temporary folder warmed by one untimed run, as for
an installed package (pip compiles it at install time); ``--no-bytecode-cache`` measures with
``PYTHONDONTWRITEBYTECODE=1`` instead, i.e. every module compiled at every start.
``--src DIR`` measures the ``eagle_tui`` of another checkout (before/after).

    python benchmarks/bench_report.py                     # 1 M and 5 M lines
    python benchmarks/bench_report.py --compare ../base   # and another checkout, alternately
    python benchmarks/bench_report.py --lines 200000 --runs 1
    python benchmarks/bench_report.py --save a.json       # on another machine, then here:
    python benchmarks/bench_report.py --load a.json --write
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ != "benchmarks":  # imported by a test as benchmarks.X, the suite isolates
    import isolate  # noqa: F401  (eagle-tui runs with temporary folders)

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench_report:begin -->", "<!-- bench_report:end -->"

STARTUP = "\n".join([
    "Max running requests is reset to 48 for speculative decoding. You can override this by "
    "explicitly setting --max-running-requests.",
    "[{d} 10:14:31] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', "
    "tokenizer_path='meta-llama/Llama-3.1-8B-Instruct', host='0.0.0.0', port=30000, "
    "mem_fraction_static=0.8, max_running_requests=48, tp_size=1, decode_log_interval=40, "
    "speculative_algorithm='EAGLE3', speculative_draft_model_path='yuhuili/EAGLE3-LLaMA3.1-"
    "Instruct-8B', speculative_num_steps=3, speculative_eagle_topk=1, "
    "speculative_num_draft_tokens=4)",
    "[{d} 10:14:38] Init torch distributed begin.",
    "[{d} 10:14:39] Init torch distributed ends. mem usage=0.00 GB",
    "[{d} 10:14:40] Load weight begin. avail mem=78.58 GB",
    "Loading safetensors checkpoint shards:   0% Completed | 0/4 [00:00<?, ?it/s]",
    "Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:04<00:00,  1.09s/it]",
    "[{d} 10:14:45] Load weight end. elapsed=5.12 s, type=LlamaForCausalLM, dtype=torch.bfloat16,"
    " avail mem=63.44 GB, mem usage=15.14 GB.",
    "[{d} 10:14:46] KV Cache is allocated. #tokens: 363000, K size: 22.16 GB, V size: 22.16 GB",
    "[{d} 10:14:46] Memory pool end. avail mem=18.87 GB",
    "[{d} 10:14:47] Capture cuda graph begin. This can take up to several minutes. avail mem="
    "18.55 GB",
    "Capturing batches (bs=1 avail_mem=17.96 GB): 100%|██████████| 14/14 [00:04<00:00,  3.21it/s]",
    "[{d} 10:14:51] Capture cuda graph end. Time elapsed: 4.57 s. mem usage=0.61 GB. avail mem="
    "17.94 GB.",
    "[{d} 10:14:52] Load weight begin. avail mem=17.94 GB",
    "[{d} 10:14:53] Load weight end. elapsed=0.87 s, type=LlamaForCausalLMEagle3, dtype=torch."
    "bfloat16, avail mem=16.07 GB, mem usage=1.87 GB.",
    "[{d} 10:14:53] Capture draft cuda graph begin. This can take up to several minutes. avail "
    "mem=14.66 GB",
    "[{d} 10:14:57] Capture draft cuda graph end. Time elapsed: 3.95 s. mem usage=0.28 GB. avail "
    "mem=14.38 GB.",
    "[{d} 10:14:59] max_total_num_tokens=363000, chunked_prefill_size=8192, max_prefill_tokens="
    "16384, max_running_requests=48, context_len=131072, available_gpu_mem=14.21 GB",
    "[{d} 10:15:00] INFO:     Started server process [41873]",
    "[{d} 10:15:00] INFO:     Waiting for application startup.",
    "[{d} 10:15:00] INFO:     Application startup complete.",
    "[{d} 10:15:00] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)",
    "[{d} 10:15:02] The server is fired up and ready to roll!",
]) + "\n"


def generate(path: Path, lines: int, seed: int = 1) -> int:
    """Write a ``lines``-line log to ``path``; return its size in bytes."""
    rng = random.Random(seed)
    day = "2025-11-20"
    head = STARTUP.format(d=day).splitlines(keepends=True)
    out: list[str] = list(head)
    n = len(out)
    t = 36_000.0
    running = 4
    tokens = 2000
    with path.open("w", encoding="utf-8") as f:
        while n < lines:
            t += rng.uniform(0.05, 0.4)
            s = int(t)
            stamp = f"[{day} {s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}] "
            r = rng.random()
            if r < 0.1:
                new = rng.randint(20, 3000)
                out.append(f"{stamp}Prefill batch, #new-seq: 1, #new-token: {new}, #cached-token: "
                           f"{rng.randint(0, 64)}, token usage: 0.01, #running-req: {running}, "
                           "#queue-req: 0, \n")
                out.append(f"[EAGLE3-DEBUG] hidden_states shape=torch.Size([{new}, 21504])\n")
                out.append(f'{stamp}INFO:     10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)}:'
                           f'{rng.randint(1024, 65535)} - "POST /v1/chat/completions HTTP/1.1" '
                           "200 OK\n")
                n += 3
                continue
            accept = min(4.0, max(1.0, rng.gauss(3.0, 0.25)))
            tokens = max(100, tokens + rng.randint(-300, 400))
            out.append(f"{stamp}Decode batch, #running-req: {running}, #token: {tokens}, token "
                       f"usage: {tokens / 363000:.2f}, accept len: {accept:.2f}, accept rate: "
                       f"{accept / 4:.2f}, cuda graph: True, gen throughput (token/s): "
                       f"{rng.uniform(250.0, 900.0):.2f}, #queue-req: 0, \n")
            out.append(f"[EAGLE3-DEBUG] hidden_states shape=torch.Size([{running * 4}, 21504])\n")
            n += 2
            if len(out) > 50_000:
                f.writelines(out)
                out.clear()
        f.writelines(out)
    return path.stat().st_size


def _run_once(argv: list[str], env: dict[str, str], cwd: Path
              ) -> tuple[float, int, int, float]:
    """Wall time (s), peak memory and summed peak RSS (KiB) of one fresh process and the
    workers it forks, and their CPU time (s: user + system; ``wait4`` counts the children the
    process reaped).

    ``wait4``'s RSS is, for a process tree, the *largest* process's peak; a ``report`` run with
    ``--debug-rss`` prints its own peak RSS and each worker's peak RSS and private memory: the
    memory is then its own peak plus the workers' private peaks (``tree``), and the sum adds
    every RSS (pages shared after ``fork`` counted in every process).
    """
    ok = (0, 1) if argv[0] == "grep" else (0,)  # grep -c exits 1 when it counts nothing
    # a real file, not /dev/null: GNU grep stops at the first match when its output is
    # /dev/null, which would time nothing
    with tempfile.TemporaryFile() as sink, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=sink, stderr=err, cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
    if proc.returncode not in ok:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {text}")
    total = re.search(r"peak RSS KiB: .* sum (\d+)", text)
    tree = re.search(r"peak RSS KiB: .* tree (\d+)", text) or total
    return (wall, int(tree.group(1)) if tree else usage.ru_maxrss,
            int(total.group(1)) if total else usage.ru_maxrss, usage.ru_utime + usage.ru_stime)


def supports_debug_rss(src: Path, env: dict[str, str]) -> bool:
    """Whether ``src``'s ``report`` has ``--debug-rss`` (older checkouts do not)."""
    out = subprocess.run([sys.executable, "-m", "eagle_tui", "report", "--help"], cwd=src,
                         env=env, capture_output=True, text=True, check=False).stdout
    return "--debug-rss" in out


def report_env(src: Path, pycache: Path | None) -> dict[str, str]:
    """The environment ``report`` runs in: ``src`` first on the path (before what the caller's
    ``PYTHONPATH`` holds: on the device machine, the dependencies carried as wheels), bytecode
    cache on or off."""
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, (str(src), os.environ.get("PYTHONPATH"))))}
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


BASELINES = (["grep", "-c", "Decode batch"], ["grep", "-c", ""], ["wc", "-l"])


def lnav_count(lnav: str) -> list[str]:
    """lnav's own count of the file's log messages (it indexes every line first): the peer
    that reads a log the way a viewer must."""
    return [lnav, "-n", "-c", ";SELECT count(*) FROM all_logs"]


def measure(path: Path, runs: int, reports: list[tuple[Path, dict[str, str], list[str]]],
            peers: tuple[list[str], ...] = ()) -> list[dict[str, float]]:
    """Best wall and CPU time and peak RSS of each of ``BASELINES`` (first, in that order),
    of each of ``peers`` and of ``report --json`` from each checkout in ``reports`` (with its
    extra arguments) on ``path``, all run alternately (a busy machine slows all alike)."""
    jobs = [([*argv, str(path)], ROOT, dict(os.environ)) for argv in (*BASELINES, *peers)]
    jobs += [([sys.executable, "-m", "eagle_tui", "report", "--json", *extra, str(path)], src,
              env) for src, env, extra in reports]
    best = [{"s": float("inf"), "cpu": float("inf"), "kb": 0.0, "sum_kb": 0.0} for _ in jobs]
    for _ in range(runs):
        for (argv, cwd, env), b in zip(jobs, best, strict=True):
            wall, kb, sum_kb, cpu = _run_once(argv, env, cwd)
            b["s"], b["kb"] = min(b["s"], wall), max(b["kb"], kb)
            b["sum_kb"], b["cpu"] = max(b["sum_kb"], sum_kb), min(b["cpu"], cpu)
    return best


def run(sizes: list[int], runs: int, workdir: Path, srcs: list[tuple[str, Path]],
        bytecode_cache: bool = True, workers: list[int] | None = None,
        lnav: str | None = None) -> list[dict[str, Any]]:
    """Measure ``report`` from each ``(label, checkout)`` of ``srcs`` against ``grep -c``
    (``workers``: each a ``EAGLE_TUI_REPORT_WORKERS`` for checkouts that read it, one row
    each)."""
    reports = []
    warm = workdir / "warm.log"
    generate(warm, 200)
    contenders: list[tuple[str, Path]] = []
    for i, (label, src) in enumerate(srcs):
        for w in workers or [1, 0]:
            env = report_env(src, workdir / f"pycache{i}" if bytecode_cache else None)
            env.pop("EAGLE_TUI_REPORT_WORKERS", None)
            if w:
                env["EAGLE_TUI_REPORT_WORKERS"] = str(w)
            procs = f"{w} proc" if w else f"default ({default_procs()} proc)"
            name = " ".join(x for x in (label, procs) if x)
            contenders.append((name, src))
            _run_once([sys.executable, "-m", "eagle_tui", "report", "--json", str(warm)], env,
                      src)
            reports.append((src, env, ["--debug-rss"] if supports_debug_rss(src, env) else []))
    srcs = contenders
    rows = []
    for lines in sizes:
        path = workdir / f"sglang-eagle3-{lines}.log"
        size = generate(path, lines)
        peers = (lnav_count(lnav),) if lnav else ()
        grep, grep_all, wc, *timed = measure(path, runs, reports, peers)
        path.unlink()
        lnav_s = timed.pop(0)["s"] if lnav else None
        for (label, _), m in zip(srcs, timed, strict=True):
            r: dict[str, Any] = {"lines": lines, "mb": size / 1e6, "grep_s": grep["s"],
                 "grep_cpu_s": grep["cpu"], "grep_all_s": grep_all["s"], "wc_s": wc["s"],
                 "grep_mb": grep["kb"] / 1024, "report_s": m["s"], "report_cpu_s": m["cpu"],
                 "report_mb": m["kb"] / 1024, "report_sum_mb": m["sum_kb"] / 1024,
                 "label": label}
            if lnav_s is not None:
                r["lnav_s"] = lnav_s
            rows.append(r)
            print(f"{lines:>10,} lines {r['mb']:7.1f} MB  grep -c {r['grep_s']:6.3f} s  "
                  f"grep -c '' {r['grep_all_s']:6.3f} s  wc -l {r['wc_s']:6.3f} s  report "
                  f"{r['report_s']:6.3f} s ({r['report_s'] / r['grep_s']:4.1f}x, CPU "
                  f"{r['report_cpu_s']:6.3f} s)  memory {r['report_mb']:5.1f} MB (RSS sum "
                  f"{r['report_sum_mb']:5.1f})  {label}"
                  + (f"  lnav count(*) {lnav_s:6.3f} s" if lnav_s is not None else ""),
                  flush=True)
    return rows


def default_procs() -> int:
    """The process count ``report`` picks here for a big file (``parallel.default_workers``)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 12))


def table(rows: list[dict[str, Any]]) -> str:
    """The results as a Markdown table (rows saved by older versions lack some columns)."""
    code = any(r.get("label") for r in rows)
    total = any("report_sum_mb" in r for r in rows)
    more = any("grep_all_s" in r for r in rows)  # grep -c '', wc -l and CPU times measured
    peer = any("lnav_s" in r for r in rows)
    out = ["| lines | file | " + ("code | " if code else "") + "`grep -c` | "
           + ("`grep -c ''` | `wc -l` | " if more else "")
           + ("lnav `count(*)` | " if peer else "") + "`report --json` | ratio | "
           + ("CPU report | CPU ratio | " if more else "") + "peak memory report | "
           + ("RSS sum report | " if total else "") + "peak RSS grep |",
           "|---:|---:|" + (":--|" if code else "") + "---:|" + ("---:|---:|" if more else "")
           + ("---:|" if peer else "") + "---:|---:|" + ("---:|---:|" if more else "") + "---:|"
           + ("---:|" if total else "") + "---:|"]
    for r in rows:
        label = f"{r.get('label') or ''} | " if code else ""
        rss_sum = f"{r.get('report_sum_mb', r['report_mb']):.0f} MB | " if total else ""
        base = (f"{r['grep_all_s']:.3f} s | {r['wc_s']:.3f} s | " if "grep_all_s" in r else
                "– | – | ") if more else ""
        cpu = (f"{r['report_cpu_s']:.3f} s | {r['report_cpu_s'] / r['grep_cpu_s']:.1f}× | "
               if "report_cpu_s" in r and r["grep_cpu_s"] > 0 else "– | – | ") if more else ""
        lnav = (f"{r['lnav_s']:.3f} s | " if "lnav_s" in r else "– | ") if peer else ""
        out.append(f"| {int(r['lines']):,} | {r['mb']:.0f} MB | {label}{r['grep_s']:.3f} s | "
                   f"{base}{lnav}{r['report_s']:.3f} s | {r['report_s'] / r['grep_s']:.1f}× | {cpu}"
                   f"{r['report_mb']:.0f} MB | {rss_sum}{r['grep_mb']:.0f} MB |")
    return "\n".join(out)


def machine() -> str:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip() + ", "
                break
    return (f"{cpu}{platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}")


def heading(r: dict[str, Any]) -> str:
    """A run's table heading: the command, the machine and date, how it was measured."""
    return (f"Measured by `python benchmarks/bench_report.py` on {r['machine']} (best of "
            f"{r['runs']} runs, fresh process each{r.get('note', '')}):")


def write_doc(runs: list[dict[str, Any]]) -> None:
    """Replace the benchmark block of docs/performance.md (one table per measured run)."""
    parts = [f"{heading(r)}\n\n{table(r['rows'])}" for r in runs]
    block = BEGIN + "\n" + "\n\n".join(parts) + "\n" + END
    text = DOC.read_text() if DOC.exists() else "# Performance\n"
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip() + "\n\n## report\n\n" + block + "\n"
    DOC.write_text(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lines", type=int, nargs="+", default=[1_000_000, 5_000_000])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--write", action="store_true", help="update docs/performance.md")
    p.add_argument("--save", type=Path, help="also save the results as JSON to this file")
    p.add_argument("--load", type=Path, nargs="*", default=[],
                   help="results saved by --save (e.g. on another machine) to add to --write")
    p.add_argument("--no-run", action="store_true", help="only --write what --load gives")
    p.add_argument("--workdir", type=Path, default=None)
    p.add_argument("--src", type=Path, default=ROOT,
                   help="checkout whose eagle_tui to measure (default: this one)")
    p.add_argument("--compare", type=Path, metavar="DIR",
                   help="also measure this checkout's eagle_tui, alternately on the same files")
    p.add_argument("--labels", nargs=2, default=("after", "before"), metavar=("SRC", "COMPARE"),
                   help="names of --src and --compare in the table (with --compare)")
    p.add_argument("--no-bytecode-cache", action="store_true",
                   help="PYTHONDONTWRITEBYTECODE=1: compile every module at every start")
    p.add_argument("--note", default="", help="added to the table's heading")
    p.add_argument("--workers", type=int, nargs="+", default=None,
                   help="EAGLE_TUI_REPORT_WORKERS for report, one row per value, 0 for its own "
                        "choice (default: 1 and 0)")
    p.add_argument("--lnav", metavar="PATH", default=shutil.which("lnav"),
                   help="lnav binary for its count(*) column (default: lnav on PATH; none: "
                        "left out)")
    args = p.parse_args(argv)
    if any(n < 100 for n in args.lines) or args.runs < 1:
        p.error("--lines must be ≥ 100 and --runs ≥ 1")
    results = [json.loads(path.read_text()) for path in args.load]
    if not args.no_run:
        with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
            srcs = [("", args.src.resolve())]
            if args.compare:
                srcs = [(args.labels[0], srcs[0][1]), (args.labels[1], args.compare.resolve())]
            rows = run(args.lines, args.runs, Path(tmp), srcs, not args.no_bytecode_cache,
                       args.workers, args.lnav)
        note = ", no bytecode cache" if args.no_bytecode_cache else ", bytecode cached"
        note += f", {args.note}" if args.note else ""
        results.append({"machine": machine(), "runs": args.runs, "rows": rows, "note": note})
        # the rows docs/performance.md takes, with their machine and date (the device machine
        # has no network: this and --save are how its figures come back)
        print(f"\n{heading(results[-1])}\n\n{table(rows)}")
        if args.save:
            args.save.write_text(json.dumps(results[-1], indent=1) + "\n")
    if args.write:
        write_doc(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
