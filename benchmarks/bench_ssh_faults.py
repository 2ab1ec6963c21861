"""The SSH fault matrix of docs/reliability.md: 20 of each fault at 10,000 lines/s.

Runs ``tests/ssh/test_ssh_tail_faults.py`` (a private sshd on 127.0.0.1, a writer appending
numbered 50-byte lines at 10,000 lines/s, ``SshTransport.tail()`` following it) with
``EAGLE_TUI_FAULTS_EACH=N``: N killed sessions, N sshd restarts and N frozen hosts (SIGSTOP of
the session), shuffled, and prints the table: per fault kind the lines lost and duplicated while
recovering from it, and the time to notice and to recover (median, max). The test itself fails
on one line lost, repeated or damaged. CI runs the same test with its default 20 mixed faults
(7 / 6 / 7); this script is the full-size matrix (a few minutes).

    python benchmarks/bench_ssh_faults.py            # 20 of each
    python benchmarks/bench_ssh_faults.py --each 5   # a quicker look
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST = "tests/ssh/test_ssh_tail_faults.py"


def run(each: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "faults.txt"
        env = dict(os.environ, EAGLE_TUI_FAULTS_EACH=str(each),
                   EAGLE_TUI_FAULT_REPORT=str(report), EAGLE_TUI_REQUIRE_SSHD="1")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-s", TEST], cwd=ROOT, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-2000:])
            raise SystemExit(f"the fault test failed (exit {proc.returncode})")
        return report.read_text()


def table(report: str) -> str:
    """The test's report lines → a markdown table by fault kind."""
    rows: dict[str, dict[str, str]] = {}
    head = report.splitlines()[0]
    for line in report.splitlines()[1:]:
        words = line.split()
        label, kind = words[0], words[1]
        row = rows.setdefault(kind, {})
        for w in words[2:]:
            key, _, value = w.partition("=")
            row[f"{label}.{key}"] = value
    out = [head, "", "| fault | n | lost | duplicated | noticed, median | noticed, max "
           "| recovered, median | recovered, max |", "| --- | ---: | ---: | ---: | ---: | ---: "
           "| ---: | ---: |"]
    for kind in ("kill", "restart", "freeze"):
        r = rows.get(kind, {})
        out.append(f"| {kind} | {r.get('recovered.n', '?')} | {r.get('damage.lost', '?')} "
                   f"| {r.get('damage.dup', '?')} | {r.get('noticed.median', '?')} "
                   f"| {r.get('noticed.max', '?')} | {r.get('recovered.median', '?')} "
                   f"| {r.get('recovered.max', '?')} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--each", type=int, default=20, help="faults of each kind (default 20)")
    args = ap.parse_args()
    print(table(run(args.each)))


if __name__ == "__main__":
    main()
