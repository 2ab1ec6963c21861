"""The dashboard's CPU while it watches an idle, ready server: its URL polled, its log followed.

``eagle-tui watch --log LOG --url URL --gpu none`` runs in tmux (160×48) against a server that
is up and has no request; after ``--warm`` seconds (past the quiet ticks' 30 s) each thread's
CPU ticks (``/proc/PID/task``) are summed over ``--seconds``. With several ``--repo`` the
checkouts run one after another, ``--rounds`` times, alternating; the median and range of
each is printed. Start the server first (the real SGLang or vLLM CPU server, or ``python -m
eagle_tui.sim``, whose healthy scenario is not idle).

    python benchmarks/bench_idle_server.py --url http://127.0.0.1:31555 --log /tmp/s/server.log
    python benchmarks/bench_idle_server.py --url URL --log LOG --repo /work/main --repo DIR \\
        --rounds 3 --warm 60 --seconds 60
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOCKET = "eagle-idle-server"
TICK = os.sysconf("SC_CLK_TCK")


def thread_ticks(pid: int) -> dict[str, int]:
    """Each thread's user + system CPU ticks so far, by thread id."""
    out: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        out[task.name] = int(fields[11]) + int(fields[12])
    return out


def one(repo: Path, url: str, log: str, warm: float, seconds: float) -> list[int]:
    """One run: the CPU ticks of each thread over the window, the busiest first."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "EAGLE_TUI_DATA_DIR": f"{tmp}/data", "XDG_CONFIG_HOME": f"{tmp}/c",
               "XDG_CACHE_HOME": f"{tmp}/k", "XDG_STATE_HOME": f"{tmp}/s",
               "PYTHONPATH": str(repo)}
        env.pop("COLUMNS", None)
        env.pop("LINES", None)
        cmd = [sys.executable, "-m", "eagle_tui", "watch", "--log", log, "--url", url,
               "--gpu", "none"]
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True, check=False)
        # (run from the temporary folder: ``python -m`` puts its working directory first on
        # the path, ahead of PYTHONPATH, and a checkout there would be the one measured)
        subprocess.run(["tmux", "-L", SOCKET, "new-session", "-d", "-x", "160", "-y", "48",
                        "-c", tmp, *cmd], env=env, cwd=tmp, check=True)
        try:
            time.sleep(warm)
            pid = int(subprocess.run(["tmux", "-L", SOCKET, "list-panes", "-F",
                                      "#{pane_pid}"], capture_output=True, text=True,
                                     check=True).stdout.split()[0])
            before = thread_ticks(pid)
            time.sleep(seconds)
            after = thread_ticks(pid)
        finally:
            subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True,
                           check=False)
    return sorted((after[t] - before.get(t, 0) for t in after), reverse=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--repo", type=Path, action="append", default=None)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--warm", type=float, default=60.0)
    p.add_argument("--seconds", type=float, default=60.0)
    args = p.parse_args(argv)
    if shutil.which("tmux") is None:
        print("tmux is needed", file=sys.stderr)
        return 2
    repos = args.repo or [ROOT]
    runs: dict[Path, list[float]] = {r: [] for r in repos}
    print(f"# {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}; {args.warm:g} s warm, {args.seconds:g} s "
          f"window, % of a core (threads' ticks)", flush=True)
    for rnd in range(args.rounds):
        for repo in repos:
            ticks = one(repo, args.url, args.log, args.warm, args.seconds)
            pct = 100 * sum(ticks) / TICK / args.seconds
            runs[repo].append(pct)
            print(f"round {rnd + 1} {repo}: {pct:.2f} % (threads {ticks[:3]})", flush=True)
    for repo, pcts in runs.items():
        print(f"{repo}: median {statistics.median(pcts):.2f} % "
              f"({min(pcts):.2f}-{max(pcts):.2f}), {len(pcts)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
