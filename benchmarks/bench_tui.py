"""Benchmark the dashboard in a real terminal (tmux), side by side with a bare Textual ``Log`` tail.

Both contenders run in their own tmux server at 160×48 and follow the same file:

* ``dashboard``: ``eagle-tui watch --log FILE --gpu none`` (log tail → parser → session →
  reducer → the five panes);
* ``bare``: ``benchmarks/bare_log_tail.py FILE`` (a reader thread and ``Log.write_lines`` every
  50 ms, nothing else).

Scenarios (the targets are the dashboard's budgets):

* **flood**: a writer process appends SGLang EAGLE-3 lines (45 % ``Decode batch``, 45 %
  ``[EAGLE3-DEBUG]``, 10 % prefill/access) at 50,000 lines/s. Every 0.2 s the benchmark sends
  a key and polls ``tmux capture-pane`` until the toggle is on screen: key→screen latency
  (target p99 ≤ 100 ms). The dashboard's probe opens and closes the log's filter box
  (``/``, ``Esc``); the bare app's ``w`` toggles a header label. The line count on screen
  against the lines written since the writer began (it prints when) gives the lag; after the
  writer stops, the time until the screen shows every line is the catch-up. The last line
  written is a Decode line with unique numbers: the dashboard showing them proves the metric
  lines were still parsed to the end.
* **steady**: 200 lines/s; CPU of the app process over 10 s (target ≤ 10 % of a core), then idle
  for ``--idle-seconds`` (60 s; target ≤ 1 %).
* **open**: a 1,000,000-line log exists before the app starts; time until the first frame is on
  screen (target ≤ 0.5 s), and until every line is accounted for.

    python benchmarks/bench_tui.py                # all scenarios, prints a table
    python benchmarks/bench_tui.py --quick        # shorter runs
    python benchmarks/bench_tui.py --write        # and update docs/performance.md
    python benchmarks/bench_tui.py --baseline /tmp/base   # also the dashboard of another
                                                  # checkout (e.g. ``git worktree add``), A/B
    python benchmarks/bench_tui.py --repeat 5     # 5 interleaved rounds: median and range

With ``--repeat N`` each scenario runs N rounds, every contender once per round (one after
another, so a load change on a shared machine hits them alike), one table per round, then a
table of the median and the range (min–max) of each figure over the rounds.

With ``--baseline DIR`` a third contender, ``baseline``, runs ``python -m eagle_tui`` with
``PYTHONPATH=DIR`` (ahead of the editable install) right after the dashboard, under the same
load: on a shared machine, before/after numbers only compare within one run.

Results go into the "dashboard" section of ``docs/performance.md`` (between this script's
markers); the rest of that file belongs to other benchmarks and is left alone.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

if __package__ != "benchmarks":  # imported by a test as benchmarks.X, the suite isolates
    import isolate  # noqa: F401  (eagle-tui runs with temporary folders)
import psutil

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench_tui:begin -->", "<!-- bench_tui:end -->"
BARE = ROOT / "benchmarks" / "bare_log_tail.py"
SIZE = (160, 48)
FINAL_TPS, FINAL_ACCEPT = "4242.42", "7.77"

# --------------------------------------------------------------------------- the log


def line_pool(n: int = 20_000) -> list[bytes]:
    """A decode-heavy SGLang EAGLE-3 log mix; numbers vary so lines are not all identical."""
    out = []
    for i in range(n):
        ts = f"[2025-11-20 10:{15 + i // 3600 % 40:02d}:{i % 60:02d}"
        r = i % 20
        if r < 9:
            out.append(f"{ts} TP0] Decode batch, #running-req: {8 + i % 5}, "
                       f"#token: {1000 + i % 700}, token usage: 0.{10 + i % 80:02d}, "
                       f"accept len: 2.{i % 90:02d}, accept rate: "
                       f"0.{40 + i % 30}, cuda graph: True, gen throughput (token/s): "
                       f"{150 + i % 60}.{i % 100:02d}, #queue-req: {i % 3}, ")
        elif r < 18:
            out.append(f"[EAGLE3-DEBUG] hidden_states shape=torch.Size([{4 + i % 28}, 12288]) "
                       "dtype=torch.bfloat16")
        elif r == 18:
            out.append(f"{ts} TP0] Prefill batch, #new-seq: 1, #new-token: {40 + i % 200}, "
                       f"#cached-token: 0, token usage: 0.12, #running-req: 7, #queue-req: 0, ")
        else:
            out.append(f'{ts}] INFO:     127.0.0.1:{50000 + i % 9000} - "POST /generate HTTP/1.1" '
                       "200 OK")
    return [s.encode() + b"\n" for s in out]


FINAL_LINE = (f"[2025-11-20 11:00:00 TP0] Decode batch, #running-req: 9, #token: 999, token usage: "
              f"0.42, accept len: {FINAL_ACCEPT}, accept rate: 0.93, cuda graph: True, gen "
              f"throughput (token/s): {FINAL_TPS}, #queue-req: 0, \n").encode()


def writer_main(path: Path, rate: float, seconds: float, end: bytes | None = None,
                linger: float = 0.0) -> None:
    """Append ``rate`` lines/s for ``seconds`` (10 ms slices), then the final marker line
    (``end``; ``FINAL_LINE`` by default). Prints when it began (``time.monotonic()``, the
    system's clock: the lag is counted from there, not from the ``Popen``, which precedes the
    writer's interpreter start by a tenth of a second or more) and how many lines it wrote;
    then stays ``linger`` seconds with the log open, writing nothing: a quiet server."""
    pool = line_pool()
    n = 0
    tick = 0.01
    start = time.monotonic()
    print(f"{start!r}", flush=True)
    with path.open("ab", buffering=0) as fh:
        while (elapsed := time.monotonic() - start) < seconds:
            due = int(elapsed * rate) - n
            if due > 0:
                fh.write(b"".join(pool[(n + i) % len(pool)] for i in range(due)))
                n += due
            time.sleep(tick)
        fh.write(FINAL_LINE if end is None else end)
        n += 1
        print(n, flush=True)
        time.sleep(linger)


def write_big_log(path: Path, lines: int) -> None:
    pool = line_pool()
    with path.open("wb") as fh:
        for start in range(0, lines - 1, len(pool)):
            fh.write(b"".join(pool[: min(len(pool), lines - 1 - start)]))
        fh.write(FINAL_LINE)


# --------------------------------------------------------------------------- tmux


class Pane:
    """One app in its own tmux server (private socket); ``close()`` kills only that server."""

    def __init__(self, command: str) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            raise SystemExit("bench_tui: tmux is required")
        self.tmux = tmux
        self.sock = f"eagle-bench-{uuid.uuid4().hex[:8]}"
        self.t_start = time.monotonic()
        self._run("new-session", "-d", "-s", "b", "-x", str(SIZE[0]), "-y", str(SIZE[1]),
                  f"env -u COLUMNS -u LINES {command}")
        self.pid = int(self._run("display", "-p", "-t", "b", "#{pane_pid}").strip())

    def _run(self, *args: str) -> str:
        return subprocess.run([self.tmux, "-L", self.sock, *args], check=True,
                              capture_output=True, text=True, timeout=10).stdout

    def capture(self) -> str:
        return self._run("capture-pane", "-p", "-t", "b")

    def send(self, key: str) -> None:
        self._run("send-keys", "-t", "b", key)

    def cpu_seconds(self) -> float:
        proc = psutil.Process(self.pid)
        total = sum(proc.cpu_times()[:2])
        for child in proc.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                total += sum(child.cpu_times()[:2])
        return total

    def rss_mb(self) -> float:
        return psutil.Process(self.pid).memory_info().rss / 2**20

    def close(self) -> None:
        subprocess.run([self.tmux, "-L", self.sock, "kill-server"], capture_output=True,
                       timeout=10)


@contextlib.contextmanager
def pane(command: str) -> Iterator[Pane]:
    p = Pane(command)
    try:
        yield p
    finally:
        p.close()


@dataclass(frozen=True)
class Contender:
    name: str
    command: Callable[[Path], str]
    first_frame: str  # text that means the app has drawn
    toggled: Callable[[str], bool]  # is the key probe's toggle currently on?
    seen: Callable[[str], int | None]  # lines accounted for on screen
    keys: tuple[str, str]  # the key that turns the toggle on, and the one that turns it off


_DASH_COUNT = re.compile(r"· ([\d,]+) lines")
_BARE_COUNT = re.compile(r"· ([\d,]+) lines")


def _dash_seen(text: str) -> int | None:
    m = _DASH_COUNT.search(text)
    return int(m.group(1).replace(",", "")) if m else None


def _bare_seen(text: str) -> int | None:
    m = _BARE_COUNT.search(text)
    return int(m.group(1).replace(",", "")) if m else None


def eagle_tui() -> str:
    beside = Path(sys.executable).parent / "eagle-tui"
    return str(beside) if beside.exists() else f"{sys.executable} -m eagle_tui"


CONTENDERS = {
    # the dashboard's probe opens and closes the log's filter box (``/``, ``Esc``)
    "dashboard": Contender(
        "dashboard", lambda log: f"{eagle_tui()} watch --log {log} --gpu none", "─ Log",
        lambda t: "filter: show only" in t, _dash_seen, ("/", "Escape")),
    "bare": Contender(
        "bare", lambda log: f"{sys.executable} {BARE} {log}", "bare Log tail",
        lambda t: "wrap:on" in t, _bare_seen, ("w", "w")),
}


# A second probe of the same dashboard in the flood: PgUp pauses the log (the status line says
# "paused"), End follows again — scrolling the log, the most common key while a log streams.
SCROLL_PROBE = Contender(
    "dashboard-scroll", CONTENDERS["dashboard"].command, CONTENDERS["dashboard"].first_frame,
    lambda t: "⏸ paused" in t, _dash_seen, ("PPage", "End"))


def baseline_contender(tree: Path) -> Contender:
    """The dashboard of another checkout (``PYTHONPATH`` wins over the editable install)."""
    dash = CONTENDERS["dashboard"]
    # the tree first, then what the caller's PYTHONPATH holds (its dependencies, where they are
    # not installed, as on a machine with the wheels unpacked into a folder)
    path = os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH", "")) if p)
    return Contender(
        "baseline",
        # -C: ``python -m`` puts the working directory first on sys.path, ahead of PYTHONPATH
        lambda log: f"env -C {tree} PYTHONPATH={path} {sys.executable} -m eagle_tui watch "
                    f"--log {log} --gpu none",
        dash.first_frame, dash.toggled, dash.seen, dash.keys)


def wait_screen(p: Pane, ok: Callable[[str], bool], timeout: float) -> tuple[str, float | None]:
    start = time.monotonic()
    text = p.capture()
    while not ok(text):
        if time.monotonic() - start > timeout:
            return text, None
        time.sleep(0.002)
        text = p.capture()
    return text, time.monotonic() - start


# --------------------------------------------------------------------------- scenarios


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


FIRST_KEY_AFTER = 1_000  # lines on screen before the flood's first probe key


def flood(c: Contender, work: Path, rate: float, seconds: float) -> dict[str, float | str]:
    log = work / f"flood-{c.name}.log"
    log.write_bytes(b"")
    with pane(c.command(log)) as p:
        _, ready = wait_screen(p, lambda t: c.first_frame in t, 20)
        if ready is None:
            return {"error": "no first frame"}
        time.sleep(1.0)
        cpu0 = p.cpu_seconds()
        writer = subprocess.Popen([sys.executable, __file__, "--writer", str(log), str(rate),
                                   str(seconds)], stdout=subprocess.PIPE, text=True)
        assert writer.stdout is not None
        t0 = float(writer.stdout.readline())  # when the first lines went out
        latencies: list[float] = []
        lags: list[float] = []
        misses = 0
        state = False
        # the first key only once the log fills more than a screen: PgUp on a log that fits
        # (nothing to scroll) rightly stays in follow mode, and was counted as a lost key
        wait_screen(p, lambda t: (c.seen(t) or 0) >= FIRST_KEY_AFTER, 5.0)
        while writer.poll() is None:
            sent = time.monotonic()
            p.send(c.keys[1] if state else c.keys[0])
            want = not state

            def flipped(t: str, want: bool = want) -> bool:
                return c.toggled(t) == want

            text, took = wait_screen(p, flipped, 2.0)
            if took is None:
                misses += 1
            else:
                latencies.append(time.monotonic() - sent)
                state = not state
            seen = c.seen(text)
            if seen is not None:
                lags.append(max(0.0, rate * (time.monotonic() - t0) - seen) / rate)
            time.sleep(0.2)
        written = int((writer.stdout.read() if writer.stdout else "0").strip() or 0)
        t_end = time.monotonic()
        cpu = (p.cpu_seconds() - cpu0) / (t_end - t0)
        def caught_up(t: str) -> bool:
            # the dashboard's source may skip the *text* of lines it is behind on (their
            # metrics are still parsed): it has caught up when the last line's numbers show
            if c.name != "bare":
                return FINAL_TPS[:6] in t and FINAL_ACCEPT in t
            return (c.seen(t) or 0) >= written

        text, catch_up = wait_screen(p, caught_up, 120)
        if catch_up is None and os.environ.get("BENCH_TUI_DEBUG"):
            print(f"{c.name}: never caught up to {written}; last screen:\n{text}", flush=True)
        out: dict[str, float | str] = {
            "written": written,
            "key p50 ms": 1000 * pct(latencies, 0.5),
            "key p99 ms": 1000 * pct(latencies, 0.99),
            "key max ms": 1000 * max(latencies, default=float("nan")),
            "keys lost": misses,
            "lag p50 s": pct(lags, 0.5),
            "lag max s": max(lags, default=float("nan")),
            "catch-up s": catch_up if catch_up is not None else float("nan"),
            "cpu %": 100 * cpu,
            "rss MB": p.rss_mb(),
        }
        if c.name != "bare":
            out["last metric shown"] = "yes" if catch_up is not None else "NO"
        return out


def steady(c: Contender, work: Path, rate: float, seconds: float,
           idle_s: float) -> dict[str, float | str]:
    log = work / f"steady-{c.name}.log"
    log.write_bytes(b"")
    with pane(c.command(log)) as p:
        if wait_screen(p, lambda t: c.first_frame in t, 20)[1] is None:
            return {"error": "no first frame"}
        time.sleep(1.0)
        writer = subprocess.Popen([sys.executable, __file__, "--writer", str(log), str(rate),
                                   str(seconds + 4)], stdout=subprocess.DEVNULL)
        time.sleep(3.0)  # warm up
        cpu0, t0 = p.cpu_seconds(), time.monotonic()
        time.sleep(seconds)
        busy = (p.cpu_seconds() - cpu0) / (time.monotonic() - t0)
        writer.wait()
        time.sleep(3.0)
        cpu0, t0 = p.cpu_seconds(), time.monotonic()
        time.sleep(idle_s)
        idle = (p.cpu_seconds() - cpu0) / (time.monotonic() - t0)
        return {f"cpu % at {rate:g} lines/s": 100 * busy, "cpu % idle": 100 * idle,
                "rss MB": p.rss_mb()}


def open_big(c: Contender, big: Path, lines: int) -> dict[str, float | str]:
    """First frame, then "done": every line shown (bare) or parsed to the end (dashboard: the
    last line's numbers are on screen; older lines take the parser's fast path, unbuffered)."""
    def done(t: str) -> bool:
        if c.name != "bare":
            return FINAL_TPS[:6] in t and FINAL_ACCEPT in t
        return (c.seen(t) or 0) >= lines

    with pane(c.command(big)) as p:
        _, first = wait_screen(p, lambda t: c.first_frame in t, 30)
        first_s = (time.monotonic() - p.t_start) if first is not None else float("nan")
        _, finished = wait_screen(p, done, 180)
        return {"first frame s": first_s,
                "to the end s": (time.monotonic() - p.t_start) if finished is not None
                else float("nan"),
                "rss MB": p.rss_mb()}


# --------------------------------------------------------------------------- report


def fmt(v: float | str) -> str:
    if isinstance(v, str):
        return v
    if v != v:  # NaN
        return "—"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}" if abs(v) < 10 else f"{v:.1f}"


def table(title: str, rows: dict[str, dict[str, float | str]]) -> str:
    keys: list[str] = []
    for r in rows.values():
        keys += [k for k in r if k not in keys]
    names = list(rows)
    lines = [f"**{title}**", "", "| metric | " + " | ".join(names) + " | dashboard / bare |",
             "|---|" + "---|" * (len(names) + 1)]
    for k in keys:
        vals = [rows[n].get(k, "—") for n in names]
        ratio = "—"
        d, b = median_of(rows.get("dashboard", {}), k), median_of(rows.get("bare", {}), k)
        if isinstance(d, float | int) and isinstance(b, float | int) and b >= 0.01 and d == d:
            ratio = f"{d / b:.2f}×"
        lines.append(f"| {k} | " + " | ".join(fmt(v) for v in vals) + f" | {ratio} |")
    return "\n".join(lines)


def machine() -> str:
    import textual

    tmux = subprocess.run(["tmux", "-V"], text=True, capture_output=True).stdout.strip()
    load = os.getloadavg()[0]
    return (f"{os.cpu_count()} cores ({platform.machine()}, {cpu_model()}), load average "
            f"{load:.1f} at the start, Python {platform.python_version()}, Textual "
            f"{textual.__version__}, {tmux}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def command_line(script: str) -> str:
    """The command as run (its arguments as given), for the record beside the figures."""
    return shlex.join([f"benchmarks/{script}", *sys.argv[1:]])


Rows = dict[str, dict[str, float | str]]


def summarize(rounds: list[Rows]) -> Rows:
    """Median and range over interleaved rounds: each figure becomes ``median (min–max)``;
    a figure that is not a number in every round keeps its words (joined when they differ)."""
    out: Rows = {}
    for name in dict.fromkeys(n for r in rounds for n in r):
        keys = list(dict.fromkeys(k for r in rounds for k in r.get(name, {})))
        row: dict[str, float | str] = {}
        for k in keys:
            vals = [r[name][k] for r in rounds if k in r.get(name, {})]
            nums = sorted(v for v in vals if isinstance(v, int | float) and v == v)
            if any(isinstance(v, str) for v in vals) or not nums:
                row[k] = " / ".join(dict.fromkeys(fmt(v) for v in vals))
                continue
            mid = len(nums) // 2
            med = nums[mid] if len(nums) % 2 else (nums[mid - 1] + nums[mid]) / 2
            cell = fmt(med) if len(nums) == 1 else f"{fmt(med)} ({fmt(nums[0])}–{fmt(nums[-1])})"
            missing = len(vals) - len(nums)  # rounds without the figure (a NaN: not measured)
            row[k] = cell + (f", {missing} of {len(vals)} rounds —" if missing else "")
        out[name] = row
    return out


def median_of(row: dict[str, float | str], key: str) -> float | str | None:
    """The median of a :func:`summarize` cell, for the ratio column."""
    v = row.get(key)
    if isinstance(v, str):
        try:
            return float(v.split(" (")[0].replace(",", ""))
        except ValueError:
            return v
    return v


def write_section(body: str, begin: str = BEGIN, end: str = END,
                  heading: str = "## Dashboard") -> None:
    """Put ``body`` between a benchmark's markers in docs/performance.md (under ``heading``,
    at the end, the first time); the rest of the file belongs to the other benchmarks."""
    section = f"{begin}\n{body}\n{end}"
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Performance\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + section + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + f"\n\n{heading}\n\n" + section + "\n"
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")


def write_doc(body: str) -> None:
    write_section(body)


def warm_bytecode(trees: list[Path]) -> None:
    """Time the apps as installed: with their bytecode compiled (pip compiles at install time).

    Some machines set ``PYTHONDONTWRITEBYTECODE``; an editable checkout then compiles every
    module of ``eagle_tui`` at every start (a delay of the first frame), while the installed
    Textual has its ``.pyc`` files. ``compileall`` writes the checkout's ``__pycache__`` (git
    ignores it) once; the apps read it even with ``PYTHONDONTWRITEBYTECODE`` set.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",
                                                              "PYTHONPYCACHEPREFIX")}
    for tree in [ROOT, *trees]:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "eagle_tui")],
                       check=True, env=env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="shorter runs")
    ap.add_argument("--write", action="store_true", help="update docs/performance.md")
    ap.add_argument("--only", choices=("flood", "steady", "open"), action="append")
    ap.add_argument("--flood-rate", type=float, default=50_000)
    ap.add_argument("--open-lines", type=int, default=1_000_000)
    ap.add_argument("--baseline", type=Path, metavar="DIR",
                    help="also run the dashboard of the checkout in DIR (A/B in one run)")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="run each scenario N times, contenders interleaved (one table each, "
                         "then the median and range)")
    ap.add_argument("--idle-seconds", type=float, metavar="S",
                    help="the idle window after the steady tail (default 60; --quick 5)")
    ap.add_argument("--no-bytecode-cache", action="store_true",
                    help="keep PYTHONDONTWRITEBYTECODE as it is (every start compiles eagle_tui)")
    args = ap.parse_args()
    contenders = dict(CONTENDERS)
    if args.baseline is not None:
        contenders = {"dashboard": CONTENDERS["dashboard"],
                      "baseline": baseline_contender(args.baseline.resolve()),
                      "bare": CONTENDERS["bare"]}
    flood_s, steady_s, idle_s = (4.0, 6.0, 5.0) if args.quick else (10.0, 10.0, 60.0)
    if args.idle_seconds is not None:
        idle_s = args.idle_seconds
    wanted = args.only or ["flood", "steady", "open"]
    sections = [f"Measured on {machine()} by `python {command_line('bench_tui.py')}` (tmux "
                f"{SIZE[0]}×{SIZE[1]}, "
                f"{'no bytecode cache' if args.no_bytecode_cache else 'bytecode cached'}, "
                f"{args.repeat} interleaved round{'s' if args.repeat > 1 else ''})."]
    print(sections[0], flush=True)

    def rounds(title: str, run: Callable[[], Rows]) -> None:
        got: list[Rows] = []
        for i in range(args.repeat):
            got.append(run())
            label = f" (round {i + 1} of {args.repeat})" if args.repeat > 1 else ""
            sections.append(table(title + label, got[-1]))
            print(sections[-1], "\n", flush=True)
        if args.repeat > 1:
            sections.append(table(f"{title}: median (min–max) of {args.repeat} rounds",
                                  summarize(got)))
            print(sections[-1], "\n", flush=True)
    with tempfile.TemporaryDirectory(prefix="eagle-bench-") as tmp:
        work = Path(tmp)
        if not args.no_bytecode_cache:
            warm_bytecode([args.baseline] if args.baseline else [])
        if "flood" in wanted:
            probes = {**contenders, SCROLL_PROBE.name: SCROLL_PROBE}
            rounds(f"Flood: {args.flood_rate:,.0f} lines/s for {flood_s:g} s",
                   lambda: {n: flood(c, work, args.flood_rate, flood_s)
                            for n, c in probes.items()})
        if "steady" in wanted:
            rounds(f"Tailing 200 lines/s for {steady_s:g} s, then idle for {idle_s:g} s",
                   lambda: {n: steady(c, work, 200, steady_s, idle_s)
                            for n, c in contenders.items()})
        if "open" in wanted:
            big = work / "big.log"
            write_big_log(big, args.open_lines)
            rounds(f"Opening a {args.open_lines:,}-line log",
                   lambda: {n: open_big(c, big, args.open_lines) for n, c in contenders.items()})
    if args.write:
        write_doc("\n\n".join(sections))
        print(f"wrote {DOC}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--writer":
        writer_main(Path(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]))
    else:
        main()
