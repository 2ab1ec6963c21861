"""CPU of following a log over SSH: eagle-tui's side and the host's, against a local follow.

A private OpenSSH ``sshd`` on a free port of 127.0.0.1 (the tests' ``tests/ssh/conftest.py``
daemon: its own host key, client key, ``authorized_keys`` and ``known_hosts`` in a temporary
folder; ``~/.ssh`` and an agent are never used). ``bench_tui``'s writer appends its line pool
(SGLang EAGLE-3) at 200 lines/s (under ``nice -n 10``) to a log on the "host" (this machine).
Contenders, one at a time, interleaved over ``--repeats`` rounds:

* ``eagle ssh``: ``eagle-tui watch --ssh USER@127.0.0.1:PORT --log PATH --gpu none`` in tmux
  (160×48);
* ``eagle local``: ``eagle-tui watch --log PATH --gpu none`` of the same kind of file;
* ``ssh tail -F`` (the floor): OpenSSH's ``ssh USER@127.0.0.1 tail -F -n 0 PATH > /dev/null``.

After the first frame (or the connection) and ``--warm`` seconds of writing, CPU over
``--window`` seconds, % of one core: *local* (the viewer's processes, or the ``ssh`` client)
and *host* (the sshd listener, every session under it and what they run — ``tail`` and its
shell — including children they reaped). Each figure: median (min–max) over the repeats.

    python benchmarks/bench_ssh_follow.py                 # 3 repeats, 20 s windows
    python benchmarks/bench_ssh_follow.py --repeats 5 --window 30
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

if __package__ != "benchmarks":  # imported by a test as benchmarks.X, the suite isolates
    import isolate  # noqa: F401  (eagle-tui runs with temporary folders)
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from bench_soak import LineCounter  # noqa: E402
from bench_tui import SIZE, _dash_seen, eagle_tui, pane, write_big_log  # noqa: E402

from tests.ssh.conftest import Sshd, new_sshd  # noqa: E402

BENCH_TUI = ROOT / "benchmarks" / "bench_tui.py"
RATE = 200.0
CONTENDERS = ("eagle ssh", "eagle local", "ssh tail -F")


def tree_cpu(pid: int) -> float:
    """User + system CPU seconds of ``pid``, its live descendants and the children they reaped."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for q in procs:
        with contextlib.suppress(psutil.Error):
            t = q.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


class Setup:
    """The daemon, the client's files and the command lines of the contenders."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.sshd: Sshd = new_sshd(work)
        self.user = getpass.getuser()
        self.empty_config = work / "ssh_config"
        self.empty_config.write_text("")

    def viewer(self, name: str, log: Path) -> str:
        base = f"env -u SSH_AUTH_SOCK -u COLUMNS -u LINES {eagle_tui()} watch --log {log} " \
               "--gpu none"
        if name == "eagle local":
            return base
        s = self.sshd
        return (f"{base} --ssh {self.user}@127.0.0.1:{s.port} --identity {s.client_key} "
                f"--known-hosts {s.known_hosts} --ssh-config {self.empty_config}")

    def floor(self, log: Path) -> list[str]:
        s = self.sshd
        return ["ssh", "-F", "/dev/null", "-p", str(s.port), "-i", str(s.client_key),
                "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
                "-o", f"UserKnownHostsFile={s.known_hosts}", "-o", "GlobalKnownHostsFile=/dev/null",
                f"{self.user}@127.0.0.1", "tail", "-F", "-n", "0", str(log)]


@contextlib.contextmanager
def writing(log: Path, seconds: float) -> Iterator[None]:
    writer = subprocess.Popen(["nice", "-n", "10", sys.executable, str(BENCH_TUI), "--writer",
                               str(log), str(RATE), str(seconds)], stdout=subprocess.DEVNULL)
    try:
        yield
    finally:
        writer.terminate()
        writer.wait()


def measure(local_pid: int, host_pid: int, warm: float, window: float) -> dict[str, float]:
    time.sleep(warm)
    l0, h0, t0 = tree_cpu(local_pid), tree_cpu(host_pid), time.monotonic()
    time.sleep(window)
    dt = time.monotonic() - t0
    local, host = (tree_cpu(local_pid) - l0) / dt, (tree_cpu(host_pid) - h0) / dt
    return {"local": 100 * local, "host": 100 * host, "total": 100 * (local + host)}


def one(setup: Setup, name: str, n: int, warm: float, window: float) -> dict[str, float]:
    log = setup.work / f"follow-{n}-{name.replace(' ', '-')}.log"
    write_big_log(log, 2_000)  # a screenful and more already there, as on a running server
    assert setup.sshd.proc is not None
    host = setup.sshd.proc.pid
    if name == "ssh tail -F":
        client = subprocess.Popen(setup.floor(log), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                  env={k: v for k, v in os.environ.items()
                                       if k != "SSH_AUTH_SOCK"})
        try:
            time.sleep(1.0)
            if client.poll() is not None:
                err = client.stderr.read() if client.stderr else b""
                raise SystemExit(f"bench_ssh_follow: ssh exited: {err.decode(errors='replace')}")
            with writing(log, warm + window + 2):
                return measure(client.pid, host, warm, window)
        finally:
            client.terminate()
            client.wait()
    with pane(setup.viewer(name, log)) as p:
        deadline = time.monotonic() + 30
        while (_dash_seen(text := p.capture()) or 0) < 2_000:
            if time.monotonic() > deadline:
                raise SystemExit(f"bench_ssh_follow: {name} never showed the log:\n{text}")
            time.sleep(0.1)
        time.sleep(1.0)
        counter = LineCounter(log)
        with writing(log, warm + window + 2):
            out = measure(p.pid, host, warm, window)
            written, shown = counter.count(), _dash_seen(p.capture()) or 0
            out["behind s"] = max(0, written - shown) / RATE
        return out


def fmt(values: list[float]) -> str:
    return (f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"
            if values else "—")


def table(rows: dict[str, list[dict[str, float]]]) -> str:
    keys = ("local", "host", "total")
    lines = ["| contender | eagle-tui / ssh client CPU % | host CPU % (sshd + tail) "
             "| total CPU % | total / floor |", "|---|---:|---:|---:|---:|"]
    floor = statistics.median(r["total"] for r in rows["ssh tail -F"]) \
        if rows.get("ssh tail -F") else float("nan")
    for name, runs in rows.items():
        total = statistics.median(r["total"] for r in runs)
        ratio = f"{total / floor:.1f}×" if floor > 0.05 else "—"
        lines.append(f"| {name} | " + " | ".join(fmt([r[k] for r in runs]) for k in keys)
                     + f" | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--window", type=float, default=20.0, help="seconds measured (default 20)")
    ap.add_argument("--warm", type=float, default=5.0,
                    help="seconds of writing before the window (default 5)")
    args = ap.parse_args()
    for tool in ("tmux", "ssh"):
        if shutil.which(tool) is None:
            raise SystemExit(f"bench_ssh_follow: {tool} is required")
    rows: dict[str, list[dict[str, float]]] = {n: [] for n in CONTENDERS}
    head = (f"Measured on {os.cpu_count()} cores ({platform.machine()}), load average "
            f"{os.getloadavg()[0]:.1f} at the start, Python {platform.python_version()}, "
            f"{subprocess.run(['ssh', '-V'], capture_output=True, text=True).stderr.strip()}, "
            f"{time.strftime('%Y-%m-%d %H:%M %Z')}, by `python benchmarks/bench_ssh_follow.py "
            f"{' '.join(sys.argv[1:])}` ({RATE:g} lines/s, {args.window:g} s windows after "
            f"{args.warm:g} s, {args.repeats} rounds, contenders interleaved, tmux "
            f"{SIZE[0]}×{SIZE[1]}); median (min–max) over the rounds.")
    print(head, flush=True)
    with tempfile.TemporaryDirectory(prefix="eagle-ssh-follow-") as tmp:
        setup = Setup(Path(tmp))
        try:
            for n in range(args.repeats):
                for name in CONTENDERS:
                    rows[name].append(one(setup, name, n, args.warm, args.window))
                    print(name, {k: round(v, 2) for k, v in rows[name][-1].items()}, flush=True)
        finally:
            setup.sshd.stop()
    behind = "; ".join(f"{n} {fmt([r['behind s'] for r in rows[n]])} s"
                       for n in CONTENDERS[:2])
    print(f"\n{head}\n\n{table(rows)}\n\nScreen behind the log at the window's end: {behind}.",
          flush=True)


if __name__ == "__main__":
    main()
