"""Log viewers side by side in tmux: eagle-tui against lnav, toolong and a bare ``Log``.

One command, one run, the same files, each viewer in its own tmux server at 160×48:

* ``eagle watch``: ``eagle-tui watch --log FILE --gpu none`` (follows the file);
* ``eagle replay``: ``eagle-tui replay FILE`` (the raw log read through the dashboard; it does
  not follow, so it is left out of the tailing scenario);
* ``lnav``: Debian's ``lnav FILE`` (``--lnav PATH``, else on ``PATH``, else ``apt-get install
  lnav`` when missing, as root, and the network allows; left out, and said so, where absent);
* ``toolong``: PyPI's ``tl FILE`` in its own virtual environment (it pins an old Textual):
  ``~/.cache/eagle-tui-bench/toolong-venv``, created with ``pip install toolong`` when missing
  and the network allows, or ``--toolong-venv PATH``; left out, and said so, where absent;
* ``bare Log``: ``benchmarks/bare_log_tail.py FILE``, a bare Textual ``Log`` tail done right.

Scenarios:

* **open** a 1 M-line and a 5 M-line log of ``bench_tui``'s line pool (SGLang EAGLE-3: 45 %
  ``Decode batch``, 45 % ``[EAGLE3-DEBUG]``, 10 % prefill/access): *first frame* (the screen
  shows two non-blank lines), *first log text* (the file's last line, a unique access line, is
  on screen: the last screenful is shown), *CPU settled* (the end of the last 0.25 s window in
  which the viewer's processes used more than 10 % of a core, i.e. it stopped working on the
  file), all from the moment tmux started the viewer;
* **keys while opening** the 1 M-line log: from the first frame on, a key every 0.2 s for a
  few seconds, key → screen latency until ``capture-pane`` shows the change (eagle-tui and lnav
  ``/`` opens the search/filter prompt, ``Escape`` closes it; toolong ``ctrl+l`` toggles line
  numbers; the bare app's ``w`` flips a label). ``ESCDELAY=25`` for every viewer (ncurses waits
  a second after a lone Esc otherwise);
* **tail** 200 lines/s: CPU of the viewer's processes over 10 s (user + system of the viewer,
  its descendants and the children it reaped, % of one core), then **idle** over
  ``--idle-seconds`` (60 s) from 65 s after the viewer started (a clock may tick every second
  in its first minute) with the writer alive and silent, its log open (a quiet server: a
  viewer that watches the server's process watches it then too), and how long after the
  writer's last line that line was on screen.

``--repeat N`` runs each scenario N rounds, every viewer once per round (one after another: a
load change on a shared machine hits them alike), a table per round, then the median and the
range (min–max) of each figure over the rounds. With no network (the GPU machine) give the
peers' paths: ``--lnav PATH --toolong-venv PATH``.

    python benchmarks/bench_viewers.py                 # everything (~10 min on 2 cores)
    python benchmarks/bench_viewers.py --quick         # 1 M lines only, shorter windows
    python benchmarks/bench_viewers.py --only tail --write   # and update docs/performance.md
    python benchmarks/bench_viewers.py --toolong-venv /opt/tl-venv --lnav /usr/bin/lnav
    python benchmarks/bench_viewers.py --only tail --repeat 5 --baseline /work/main

With no network (the GPU machine) the peers come carried: ``benchmarks/peers/prepare.sh``
gathers them (here, with network) into ``.gl/peers`` (Debian's lnav with its libraries' packages,
toolong's wheels); there ``bash .gl/peers/setup.sh`` unpacks lnav into ``/tmp/lnav-root`` and
installs toolong into a venv ``/tmp/toolong-venv``; then ``--no-install --lnav
/tmp/lnav-root/lnav --toolong-venv /tmp/toolong-venv``.

CPU numbers on a shared machine are noisy: compare the columns of one run, not runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

if __package__ != "benchmarks":  # imported by a test as benchmarks.X, the suite isolates
    import isolate  # noqa: F401  (eagle-tui runs with temporary folders)
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tui import (
    BARE,
    SIZE,
    Pane,
    Rows,
    command_line,
    cpu_model,
    eagle_tui,
    fmt,
    median_of,
    pane,
    pct,
    summarize,
    warm_bytecode,
    write_big_log,
    write_section,
)
from bench_tui import (
    writer_main as tui_writer,
)

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- bench_viewers:begin -->", "<!-- bench_viewers:end -->"
TOOLONG_VENV = Path.home() / ".cache" / "eagle-tui-bench" / "toolong-venv"
END_MARK = "eagle-bench-end"
END_LINE = (f'[2025-11-20 11:00:01] INFO:     127.0.0.1:4242 - "GET /{END_MARK} HTTP/1.1" '
            "200 OK\n").encode()
IDLE_AFTER_S = 65.0  # idle is measured from this long after the viewer started
BUSY_CORE = 0.10  # a 0.25 s window above this share of a core: the viewer is still working
SETTLE_WINDOW = 0.25


@dataclass(frozen=True)
class Viewer:
    name: str
    command: Callable[[Path], str]
    toggled: Callable[[str], bool]  # is the key probe's toggle on?
    keys: tuple[str, str]  # on, off
    follows: bool = True


def _has_line_numbers(text: str) -> bool:
    """toolong's ``ctrl+l``: every log row starts with its number after the border."""
    rows = [r for r in text.splitlines() if r.startswith("┃") and END_MARK in r]
    return any(r[1:].lstrip()[:1].isdigit() for r in rows)


def viewers(lnav: str | None, toolong: Path | None,
            baseline: Path | None = None) -> tuple[dict[str, Viewer], list[str]]:
    env = "env -u COLUMNS -u LINES ESCDELAY=25"
    out = {
        "eagle watch": Viewer("eagle watch",
                              lambda f: f"{env} {eagle_tui()} watch --log {f} --gpu none",
                              lambda t: "filter: show only" in t, ("/", "Escape")),
    }
    if baseline is not None:  # the same dashboard from another checkout, e.g. main: A/B
        path = os.pathsep.join([str(baseline), os.environ.get("PYTHONPATH", "")])
        out["eagle watch (baseline)"] = Viewer(
            "eagle watch (baseline)",
            # -C: ``python -m`` puts the working directory first on sys.path, ahead of
            # PYTHONPATH: started in this checkout it would import this checkout's eagle_tui
            lambda f: f"env -C {baseline} -u COLUMNS -u LINES ESCDELAY=25 "
                      f"PYTHONPATH={path.rstrip(os.pathsep)} {sys.executable} -m eagle_tui "
                      f"watch --log {f} --gpu none",
            lambda t: "filter: show only" in t, ("/", "Escape"))
    out |= {
        "eagle replay": Viewer("eagle replay", lambda f: f"{env} {eagle_tui()} replay {f}",
                               lambda t: "filter: show only" in t, ("/", "Escape"),
                               follows=False),
    }
    notes = []
    if lnav is not None:
        out["lnav"] = Viewer("lnav", lambda f: f"{env} {lnav} {f}",
                             lambda t: "Search for:" in t, ("/", "Escape"))
    else:
        notes.append("lnav: not installed here, its column is left out")
    if toolong is not None:
        # -u PYTHONPATH: a PYTHONPATH holding eagle-tui's dependencies (the device machine's
        # carried wheels) would give toolong a Textual it does not run on
        bare = env.replace("env ", "env -u PYTHONPATH ", 1)  # (env's options before its K=V)
        out["toolong"] = Viewer("toolong", lambda f: f"{bare} {toolong} {f}",
                                _has_line_numbers, ("C-l", "C-l"))
    else:
        notes.append("toolong: no virtual environment with it here (and none could be made), "
                     "its column is left out")
    out["bare Log"] = Viewer("bare Log", lambda f: f"{env} {sys.executable} {BARE} {f}",
                             lambda t: "wrap:on" in t, ("w", "w"))
    return out, notes


def find_lnav(path: str | None, install: bool) -> tuple[str | None, str]:
    """lnav: ``path``, else on ``PATH``, else Debian's package installed with ``apt-get`` (as
    root, where apt-get is and the network answers); ``None`` and why where none."""
    if path:
        return (path, "") if Path(path).exists() else (None, f"no {path}")
    if found := shutil.which("lnav"):
        return found, ""
    apt = shutil.which("apt-get")
    if not install or apt is None or os.geteuid() != 0:
        return None, "not installed here" + ("" if install else " (--no-install)")
    # (no network, as on the GPU machine: no retries, 10 s per connection, then left out)
    quick = ["-q", "-o", "Acquire::Retries=0", "-o", "Acquire::http::Timeout=10",
             "-o", "Acquire::https::Timeout=10"]
    install_cmd = [apt, *quick, "install", "-y", "--no-install-recommends", "lnav"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for steps in ([install_cmd], [[apt, *quick, "update"], install_cmd]):  # stale lists: update
        try:
            for step in steps:
                subprocess.run(step, check=True, capture_output=True, timeout=300, env=env)
        except (subprocess.SubprocessError, OSError) as exc:
            why = f"could not install Debian's lnav with apt-get: {type(exc).__name__}"
            continue
        found = shutil.which("lnav")
        return (found, "") if found else (None, "apt-get installed no lnav")
    return None, why


def find_toolong(venv: Path, install: bool) -> tuple[Path | None, str]:
    """toolong's ``tl`` in ``venv``; created (``pip install toolong``) when missing."""
    tl = venv / "bin" / "tl"
    if tl.exists():
        return tl, ""
    if not install:
        return None, f"no {tl}"
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True,
                       capture_output=True, timeout=300)
        # (no network, as on the GPU machine: one try, 10 s, then the column is left out)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--retries", "0",
                        "--timeout", "10", "toolong"], check=True, capture_output=True,
                       timeout=600)
    except (subprocess.SubprocessError, OSError) as exc:
        return None, f"could not install toolong into {venv}: {type(exc).__name__}"
    return (tl, "") if tl.exists() else (None, "toolong installed no tl")


def versions(lnav: str | None, toolong: Path | None) -> str:
    import textual

    parts = [f"Textual {textual.__version__}"]
    if lnav:
        out = subprocess.run([lnav, "-V"], capture_output=True, text=True).stdout.strip()
        parts.append(out or "lnav ?")
    if toolong:
        py = toolong.parent / "python"
        code = ("import importlib.metadata as m; print(m.version('toolong'), "
                "m.version('textual'))")
        clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        got = subprocess.run([str(py), "-c", code], capture_output=True, text=True,
                             env=clean).stdout
        tl, tx = [*got.split(), "?", "?"][:2]
        parts.append(f"toolong {tl} (Textual {tx})")
    tmux = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()
    return ", ".join([*parts, tmux])


# --------------------------------------------------------------------------- measuring


def cpu_seconds(p: Pane) -> float:
    """User + system CPU of the viewer, its live descendants and the children it reaped (a
    viewer that runs a helper process now and then pays for it too)."""
    total = 0.0
    try:
        proc = psutil.Process(p.pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0.0
    for q in procs:
        try:
            t = q.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


@contextlib.contextmanager
def viewer_pane(command: str) -> Iterator[Pane]:
    """:func:`bench_tui.pane`, retried: on a loaded machine tmux now and then reports its new
    server gone before the session is listed (``server exited unexpectedly``)."""
    for attempt in range(3):
        try:
            ctx = pane(command)
            p = ctx.__enter__()
        except (ValueError, subprocess.SubprocessError):
            if attempt == 2:
                raise
            time.sleep(1.0)
            continue
        try:
            yield p
        finally:
            ctx.__exit__(None, None, None)
        return


def nonblank(text: str) -> int:
    return sum(1 for r in text.splitlines() if r.strip())


class Watch:
    """Screen and CPU of one pane, polled together: the CPU's busy windows give "settled"."""

    def __init__(self, p: Pane) -> None:
        self.p = p
        self.cpu = cpu_seconds(p)
        self.window_t = time.monotonic()
        self.busy_until = 0.0  # end of the last busy window, since the start

    def tick(self) -> str:
        now = time.monotonic()
        if now - self.window_t >= SETTLE_WINDOW:
            cpu = cpu_seconds(self.p)
            if (cpu - self.cpu) / (now - self.window_t) > BUSY_CORE:
                self.busy_until = now - self.p.t_start
            self.cpu, self.window_t = cpu, now
        return self.p.capture()


def open_log(v: Viewer, log: Path, timeout: float) -> dict[str, float | str]:
    with viewer_pane(v.command(log)) as p:
        w = Watch(p)
        first = text_at = None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = w.tick()
            t = time.monotonic() - p.t_start
            if first is None and nonblank(text) >= 2:
                first = t
            if text_at is None and END_MARK in text:
                text_at = t
            busy_for = t - max(w.busy_until, text_at or t)
            if text_at is not None and t > 1.0 and busy_for > 1.0:
                break  # shown, and a second with no busy window
            time.sleep(0.005 if text_at is None else 0.05)
        else:
            return {"first frame s": first or float("nan"),
                    "first log text s": text_at or float("nan"),
                    "CPU settled s": float("nan"), "rss MB": p.rss_mb(),
                    "note": f"not settled in {timeout:g} s"}
        return {"first frame s": first if first is not None else float("nan"),
                "first log text s": text_at if text_at is not None else float("nan"),
                "CPU settled s": max(w.busy_until, text_at or 0.0), "rss MB": p.rss_mb()}


def keys_while_opening(v: Viewer, log: Path, seconds: float) -> dict[str, float | str]:
    with viewer_pane(v.command(log)) as p:
        t0 = time.monotonic()
        while nonblank(p.capture()) < 2:
            if time.monotonic() - t0 > 30:
                return {"note": "no first frame"}
            time.sleep(0.005)
        start = time.monotonic()
        latencies: list[float] = []
        lost = 0
        state = False
        while time.monotonic() - start < seconds:
            sent = time.monotonic()
            p.send(v.keys[1] if state else v.keys[0])
            want = not state
            while (ok := v.toggled(p.capture()) == want) is False:
                if time.monotonic() - sent > 2.0:
                    break
                time.sleep(0.002)
            if ok:
                latencies.append(time.monotonic() - sent)
                state = want
            else:
                lost += 1
            time.sleep(0.2)
        return {"keys": float(len(latencies)), "key p50 ms": 1000 * pct(latencies, 0.5),
                "key p99 ms": 1000 * pct(latencies, 0.99),
                "key max ms": 1000 * max(latencies, default=float("nan")),
                "keys lost": float(lost)}


def _result(job: Future[dict[str, float | str]]) -> dict[str, float | str]:
    """A side-by-side viewer's row; one whose pane died is a note, the others' rows stand."""
    try:
        return job.result()
    except (subprocess.SubprocessError, psutil.Error) as exc:
        return {"note": f"its pane ended ({type(exc).__name__})"}


def writer_main(path: Path, rate: float, seconds: float, linger: float) -> None:
    """``bench_tui``'s writer, ending with this benchmark's unique end line."""
    tui_writer(path, rate, seconds, END_LINE, linger)


def tail(v: Viewer, work: Path, rate: float, seconds: float,
         idle_s: float) -> dict[str, float | str]:
    log = work / f"tail-{re.sub(r'[^a-z0-9]+', '-', v.name.lower()).strip('-')}.log"
    write_big_log(log, 2_000)  # a screenful and more already there, as on a running server
    with viewer_pane(v.command(log)) as p:
        t0 = time.monotonic()
        while nonblank(p.capture()) < 2:
            if time.monotonic() - t0 > 30:
                return {"note": "no first frame"}
            time.sleep(0.01)
        time.sleep(2.0)
        # the writer stays, silent, through the idle window: a quiet server is alive, its log
        # open (a viewer that watches the server's process watches it then too)
        linger = IDLE_AFTER_S + idle_s + 30.0
        writer = subprocess.Popen([sys.executable, __file__, "--writer", str(log), str(rate),
                                   str(seconds + 3), str(linger)],
                                  stdout=subprocess.PIPE, text=True)
        try:
            return _tail_rounds(p, writer, rate, seconds, idle_s)
        finally:
            writer.kill()
            writer.wait()


def _tail_rounds(p: Pane, writer: subprocess.Popen[str], rate: float, seconds: float,
                 idle_s: float) -> dict[str, float | str]:
    """The busy window, the last line's lag and the idle window of one viewer's pane."""
    time.sleep(3.0)  # warm up
    cpu0, t1 = cpu_seconds(p), time.monotonic()
    time.sleep(seconds)
    busy = (cpu_seconds(p) - cpu0) / (time.monotonic() - t1)
    assert writer.stdout is not None
    writer.stdout.readline()  # when it began
    writer.stdout.readline()  # how many lines: the end line is written
    t_end = time.monotonic()
    shown = float("nan")
    while time.monotonic() - t_end < 5.0:
        if END_MARK in p.capture():
            shown = time.monotonic() - t_end
            break
        time.sleep(0.01)
    # idle from IDLE_AFTER_S on: a viewer's clock may tick every second for its first minute
    time.sleep(max(3.0, IDLE_AFTER_S - (time.monotonic() - p.t_start)))
    cpu0, t1 = cpu_seconds(p), time.monotonic()
    time.sleep(idle_s)
    idle = (cpu_seconds(p) - cpu0) / (time.monotonic() - t1)
    return {f"cpu % at {rate:g} lines/s": 100 * busy, "cpu % idle": 100 * idle,
            "last line shown s": shown, "rss MB": p.rss_mb()}


# --------------------------------------------------------------------------- tables


def table(title: str, rows: dict[str, dict[str, float | str]], ratio_to: str = "bare Log") -> str:
    keys: list[str] = []
    for r in rows.values():
        keys += [k for k in r if k not in keys and k != "note"]
    names = list(rows)
    head = "| metric | " + " | ".join(names) + f" | eagle watch / {ratio_to} |"
    lines = [f"**{title}**", "", head, "|---|" + "---:|" * (len(names) + 1)]
    for k in keys:
        vals = [rows[n].get(k, "—") for n in names]
        d, b = median_of(rows.get("eagle watch", {}), k), median_of(rows.get(ratio_to, {}), k)
        ratio = "—"
        if isinstance(d, float | int) and isinstance(b, float | int) and b > 0.005 and d == d:
            ratio = f"{d / b:.2f}×"
        lines.append(f"| {k} | " + " | ".join(fmt(x) for x in vals) + f" | {ratio} |")
    notes = [f"{n}: {r['note']}" for n, r in rows.items() if "note" in r]
    if notes:
        lines += ["", "; ".join(notes) + "."]
    return "\n".join(lines)


def write_doc(body: str) -> None:
    write_section(body, BEGIN, END, "## Viewers side by side (issue 15)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 M lines only, shorter windows")
    ap.add_argument("--write", action="store_true", help="update docs/performance.md")
    ap.add_argument("--only", choices=("open", "keys", "tail"), action="append")
    ap.add_argument("--lines", type=int, nargs="+", metavar="N",
                    help="log sizes to open (default 1,000,000 and 5,000,000)")
    ap.add_argument("--viewer", action="append", metavar="NAME",
                    help="only these viewers (repeatable; e.g. 'eagle watch', lnav)")
    ap.add_argument("--lnav", metavar="PATH",
                    help="lnav binary (default: on PATH, else installed with apt-get)")
    ap.add_argument("--toolong-venv", type=Path, default=TOOLONG_VENV, metavar="PATH",
                    help=f"virtual environment with toolong (default {TOOLONG_VENV}; created "
                         "with pip when missing)")
    ap.add_argument("--no-install", action="store_true",
                    help="never install a missing peer (lnav with apt-get, toolong with pip)")
    ap.add_argument("--baseline", type=Path, metavar="DIR",
                    help="also run the dashboard of the checkout in DIR (e.g. main), same run")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="N interleaved rounds of each scenario, then the median and range")
    ap.add_argument("--side-by-side", action="store_true",
                    help="tail: each round runs the viewers at the same time, each in its own "
                    "tmux server with its own log and writer (a machine with a core per viewer "
                    "and more: the idle windows of a round then cost one window)")
    ap.add_argument("--idle-seconds", type=float, metavar="S",
                    help="the idle window of the tail scenario (default 60; --quick 6)")
    args = ap.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("bench_viewers: tmux is required")
    lnav, lnav_why = find_lnav(args.lnav, not args.no_install)
    toolong, why = find_toolong(args.toolong_venv, not args.no_install)
    contenders, notes = viewers(lnav, toolong, args.baseline.resolve() if args.baseline else None)
    if lnav is None:
        notes[0] = f"lnav: {lnav_why}; its column is left out"
    if why and toolong is None:
        notes[-1] = f"toolong: {why}; its column is left out"
    if args.viewer:
        contenders = {n: v for n, v in contenders.items() if n in args.viewer}
    sizes = args.lines or ([1_000_000] if args.quick else [1_000_000, 5_000_000])
    tail_s, idle_s, keys_s = (6.0, 6.0, 4.0) if args.quick else (10.0, 60.0, 8.0)
    if args.idle_seconds is not None:
        idle_s = args.idle_seconds
    wanted = args.only or ["open", "keys", "tail"]
    cmd = command_line("bench_viewers.py")
    sections = [f"Measured on {os.cpu_count()} cores ({platform.machine()}, "
                f"{cpu_model()}), load average "
                f"{os.getloadavg()[0]:.1f} at the start, Python {platform.python_version()}, "
                f"{versions(lnav, toolong)}, "
                f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, by `python {cmd}` "
                f"(tmux {SIZE[0]}×{SIZE[1]}, one run, viewers one after another"
                f"{' (tail: side by side)' if args.side_by_side else ''}, "
                f"{args.repeat} interleaved round{'s' if args.repeat > 1 else ''})."]
    if notes:
        sections.append("Left out: " + "; ".join(notes) + ".")
    print(sections[0], *sections[1:], sep="\n", flush=True)

    def rounds(title: str, ratio_to: str, run: Callable[[], Rows]) -> None:
        got: list[Rows] = []
        for i in range(args.repeat):
            got.append(run())
            label = f" (round {i + 1} of {args.repeat})" if args.repeat > 1 else ""
            sections.append(table(title + label, got[-1], ratio_to))
            print(sections[-1], "\n", flush=True)
        if args.repeat > 1:
            sections.append(table(f"{title}: median (min–max) of {args.repeat} rounds",
                                  summarize(got), ratio_to))
            print(sections[-1], "\n", flush=True)
    warm_bytecode([args.baseline] if args.baseline else [])
    with tempfile.TemporaryDirectory(prefix="eagle-viewers-") as tmp:
        work = Path(tmp)
        logs: dict[int, Path] = {}
        for n in sizes if ("open" in wanted or "keys" in wanted) else []:
            logs[n] = work / f"open-{n}.log"
            write_big_log(logs[n], n - 1)
            with logs[n].open("ab") as fh:
                fh.write(END_LINE)
        peer = "lnav" if "lnav" in contenders else "bare Log"
        if "open" in wanted:
            for n, log in logs.items():
                mb = log.stat().st_size / 1e6

                def opened(log: Path = log, n: int = n) -> Rows:
                    return {name: open_log(v, log, 60 + n / 20_000)
                            for name, v in contenders.items()}

                rounds(f"Opening a {n:,}-line log ({mb:,.0f} MB)", peer, opened)
        if "keys" in wanted:
            n = sizes[0]
            rounds(f"Keys for {keys_s:g} s from the first frame, opening the {n:,}-line log",
                   peer, lambda: {name: keys_while_opening(v, logs[n], keys_s)
                                  for name, v in contenders.items()})
        if "tail" in wanted:
            followers = {name: v for name, v in contenders.items() if v.follows}

            def tailed() -> Rows:
                if not args.side_by_side:
                    return {name: tail(v, work, 200, tail_s, idle_s)
                            for name, v in followers.items()}
                with ThreadPoolExecutor(len(followers)) as pool:
                    jobs = {name: pool.submit(tail, v, work, 200, tail_s, idle_s)
                            for name, v in followers.items()}
                    return {name: _result(job) for name, job in jobs.items()}

            rounds(f"Tailing 200 lines/s for {tail_s:g} s, then idle for {idle_s:g} s"
                   + (" (viewers side by side)" if args.side_by_side else ""), peer, tailed)
    if args.write:
        write_doc("\n\n".join(sections))
        print(f"wrote {DOC}")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--writer":
        writer_main(Path(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]))
    else:
        main()
