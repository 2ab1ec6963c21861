"""Where a followed log's CPU goes, thread by thread and step by step, in a real terminal.

``eagle-tui watch --log FILE --gpu none`` runs in tmux (160×48) while ``bench_viewers``'s writer
appends 200 lines/s; after a warm-up, each thread's CPU (``/proc/PID/task``) and the thread CPU
time (``time.thread_time``) spent in the dashboard's repaint steps and the session's fold are
summed over a window, through wrappers put around those functions in the dashboard's process
(``--inner``: this file is that process's entry point). Nothing is sampled: every call is
timed, so the figures add up (a step's time includes the steps it calls).

    python benchmarks/bench_follow_threads.py                  # main, 30 s window
    python benchmarks/bench_follow_threads.py --repo DIR --seconds 60 --json out.json
    python benchmarks/bench_follow_threads.py --repo A --repo B --rounds 4 --seconds 20 --warm 8

The wrappers cost about a microsecond a call; compare runs of this script, not its figures
with ``bench_viewers``'s.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SOCKET = "eagle-follow-threads"
ORDER = ["ui: screen update", "ui:   compositor pass", "ui:     log rows",
         "ui:     rows of LogStatusBar", "ui:     rows of MetricsPane", "ui:     rows of Stepper",
         "ui:     rows of StatusLine", "ui:     strips cut at the widgets' edges",
         "ui:   to terminal text", "ui:   write",
         "ui: log repaint (with held batches and panes)", "ui:   batch", "ui:   pane update",
         "session: parse", "session: fold and hand over", "session:   hand over",
         "session:     run history"]


def _inner(argv: list[str]) -> int:
    """The dashboard, timed: SIGUSR1 zeroes the sums, SIGUSR2 writes them to $BUCKETS_OUT."""
    tt = time.thread_time
    sums: dict[str, list[float]] = {}
    main_ident = threading.main_thread().ident

    def add(key: str, dt: float) -> None:
        entry = sums.setdefault(key, [0.0, 0])
        entry[0] += dt
        entry[1] += 1

    def wrap(cls: Any, name: str, key: str, on_main: bool = True) -> None:
        orig: Callable[..., Any] = getattr(cls, name)

        @functools.wraps(orig)
        def timed(*a: Any, **k: Any) -> Any:
            if (threading.get_ident() == main_ident) != on_main:
                return orig(*a, **k)
            t = tt()
            try:
                return orig(*a, **k)
            finally:
                add(key, tt() - t)

        setattr(cls, name, timed)

    import textual._compositor
    import textual.app
    import textual.screen
    import textual.strip
    import textual.widget

    from eagle_tui import session
    from eagle_tui.history import recorder
    from eagle_tui.model.ingest import logfeed
    from eagle_tui.ui import app, textual_private
    from eagle_tui.ui.widgets import logscroll, logview

    wrap(textual.screen.Screen, "_compositor_refresh", "ui: screen update")
    wrap(textual_private.RowCompositor, "render_partial_update", "ui:   compositor pass")
    wrap(logview.LogView, "render_lines", "ui:     log rows")
    wrap(textual.strip.Strip, "divide", "ui:     strips cut at the widgets' edges")
    wrap(textual._compositor.ChopsUpdate, "render_segments", "ui:   to terminal text")
    wrap(textual.app.App, "_display", "ui:   write")
    wrap(logscroll.Scroller, "paint", "ui: log repaint (with held batches and panes)")
    wrap(app.EagleApp, "_update_panes", "ui:   pane update")
    wrap(app.EagleApp, "_on_batch", "ui:   batch")
    original = textual.widget.Widget.render_lines

    def render_lines(self: Any, crop: Any) -> Any:
        t = tt()
        try:
            return original(self, crop)
        finally:
            add(f"ui:     rows of {type(self).__name__}", tt() - t)

    textual.widget.Widget.render_lines = render_lines  # type: ignore[method-assign]
    try:  # (a checkout before the one-row widgets: Textual's render_lines, timed above)
        from eagle_tui.ui.widgets import onerow
    except ImportError:
        pass
    else:
        wrap(onerow.OneRow, "render_lines", "ui:     rows of LogStatusBar")
    wrap(session.Session, "_apply", "session: fold and hand over", on_main=False)
    wrap(session.Session, "_notify", "session:   hand over", on_main=False)
    wrap(recorder.HistoryRecorder, "on_batch", "session:     run history", on_main=False)
    wrap(logfeed.LogFeed, "feed", "session: parse", on_main=False)
    began = [tt(), time.monotonic()]

    def zero(*_a: object) -> None:
        sums.clear()
        began[:] = [tt(), time.monotonic()]

    def dump(*_a: object) -> None:
        wall = time.monotonic() - began[1]
        Path(os.environ["BUCKETS_OUT"]).write_text(json.dumps(
            {"wall_s": wall, "ui_thread_s": tt() - began[0], "steps": sums}))

    signal.signal(signal.SIGUSR1, zero)
    signal.signal(signal.SIGUSR2, dump)
    from eagle_tui.cli import main
    return main(argv)


def _threads(pid: int) -> dict[str, float]:
    """CPU seconds of each thread of ``pid`` (``tid name`` → seconds)."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").iterdir():
        stat = (task / "stat").read_text()
        fields = stat.rpartition(")")[2].split()
        out[f"{task.name} {(task / 'comm').read_text().strip()}"] = (
            int(fields[11]) + int(fields[12])) / tick
    return out


def run(repo: Path, seconds: float, warm: float) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="follow-threads-"))
    log, out = work / "server.log", work / "buckets.json"
    log.write_text("")
    env = {**os.environ, "EAGLE_TUI_DATA_DIR": str(work / "data"),
           "XDG_CONFIG_HOME": str(work / "cfg"), "XDG_CACHE_HOME": str(work / "cache"),
           "XDG_STATE_HOME": str(work / "state"), "PYTHONPATH": str(repo),
           "BUCKETS_OUT": str(out)}
    writer = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "bench_viewers.py"),
                               "--writer", str(log), "200", str(warm + seconds + 10), "5"],
                              stdout=subprocess.DEVNULL, env=env)
    cmd = (f"env -u COLUMNS -u LINES {sys.executable} {Path(__file__).resolve()} --inner "
           f"watch --log {log} --gpu none")
    tmux = ["tmux", "-L", SOCKET]
    subprocess.run([*tmux, "kill-server"], capture_output=True, check=False)
    subprocess.run([*tmux, "new-session", "-d", "-x", "160", "-y", "48", cmd], env=env,
                   check=True)
    try:
        time.sleep(3)
        pid = int(subprocess.run([*tmux, "list-panes", "-F", "#{pane_pid}"],
                                 capture_output=True, text=True, check=True).stdout.split()[0])
        time.sleep(warm)
        before = _threads(pid)
        os.kill(pid, signal.SIGUSR1)
        t0 = time.monotonic()
        time.sleep(seconds)
        os.kill(pid, signal.SIGUSR2)
        after, wall = _threads(pid), time.monotonic() - t0
        for _ in range(100):
            if out.exists():
                break
            time.sleep(0.05)
        steps = json.loads(out.read_text())
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, check=False)
        writer.kill()
        writer.wait()
        shutil.rmtree(work, ignore_errors=True)
    threads = {k: 100 * (after[k] - before.get(k, 0.0)) / wall for k in after}
    return {"threads_pct": threads, **steps}


def report(result: dict[str, Any]) -> str:
    wall = result["wall_s"]
    lines = [f"window {wall:.1f} s; threads, % of a core: " + ", ".join(
        f"{k} {v:.2f}" for k, v in sorted(result["threads_pct"].items(), key=lambda x: -x[1])
        if v > 0), f"UI thread (timed) {1000 * result['ui_thread_s'] / wall:.2f} ms/s", "",
        "| step | ms/s | calls | ms/call |", "|---|---:|---:|---:|"]
    steps = result["steps"]
    order = [k for k in ORDER if k in steps] + sorted(set(steps) - set(ORDER))
    for key in order:
        total, calls = steps[key]
        lines.append(f"| {key} | {1000 * total / wall:.2f} | {calls} | "
                     f"{1000 * total / max(calls, 1):.3f} |")
    return "\n".join(lines)


def medians(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One result of several runs of one checkout: each figure's median (a step's calls too)."""
    def med(values: list[float]) -> float:
        return statistics.median(values)

    keys = {k for r in results for k in r["steps"]}
    threads = {k for r in results for k in r["threads_pct"]}
    return {"wall_s": med([r["wall_s"] for r in results]),
            "ui_thread_s": med([r["ui_thread_s"] for r in results]),
            "threads_pct": {"all": med([sum(r["threads_pct"].values()) for r in results])}
            if len(results) > 1 else {k: results[0]["threads_pct"][k] for k in threads},
            "steps": {k: [med([r["steps"].get(k, [0.0, 0])[i] for r in results]) for i in (0, 1)]
                      for k in keys}}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--inner":
        return _inner(sys.argv[2:])
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repo", type=Path, action="append",
                   help="an eagle-tui checkout to time (repeat: A/B, runs alternating)")
    p.add_argument("--rounds", type=int, default=1, help="runs of each checkout")
    p.add_argument("--seconds", type=float, default=30.0, help="the window")
    p.add_argument("--warm", type=float, default=12.0, help="seconds of following before it")
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args()
    repos = [r.resolve() for r in (args.repo or [ROOT])]
    runs: dict[Path, list[dict[str, Any]]] = {r: [] for r in repos}
    for i in range(args.rounds):
        for repo in repos if i % 2 == 0 else repos[::-1]:
            runs[repo].append(run(repo, args.seconds, args.warm))
    out = {str(r): medians(v) for r, v in runs.items()}
    if args.json:
        args.json.write_text(json.dumps(out if len(repos) > 1 else out[str(repos[0])],
                                        indent=1))
    for repo, result in out.items():
        if len(repos) > 1:
            print(f"\n{repo} (medians of {args.rounds} runs)")
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
