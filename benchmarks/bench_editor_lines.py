"""What the relaunch editor computes per keystroke, at its bound and at a usual size.

    python benchmarks/bench_editor_lines.py      # one line per figure, ms per call

A command of ``MAX_TOKENS`` words (``--port 30000`` a thousand times: a thousand lines) and one
of 22 lines: ``command_lines`` (on open), ``lines_argv`` (on Enter) and ``diff_lines`` (on every
edit, the live diff). The results are in docs/performance.md, "The command editor".
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eagle_tui.model.launching.cmdline import MAX_TOKENS
from eagle_tui.model.launching.cmdlines import command_lines, diff_lines, lines_argv
from eagle_tui.model.launching.flags import FlagTable
from eagle_tui.probe.tables import load_tables


def main() -> None:
    tables = load_tables()
    entry = ["python", "-m", "sglang.launch_server"]
    big = entry + ["--port", "30000"] * ((MAX_TOKENS - len(entry)) // 2)
    usual = [*entry, "--model-path", "m"] + [w for i in range(20)
                                             for w in ("--speculative-num-steps", str(i))]
    for argv in (big, usual):
        measure(argv, tables)


def measure(argv: list[str], tables: dict[str, FlagTable]) -> None:
    lines = command_lines(argv, tables)
    text = "\n".join(lines)
    for name, call in (("command_lines", lambda: command_lines(argv, tables)),
                       ("lines_argv", lambda: lines_argv(text, tables)),
                       ("diff_lines", lambda: diff_lines(lines, text.split("\n")))):
        runs = 20
        ms = min(timeit.repeat(call, number=runs, repeat=3)) / runs * 1000
        print(f"{name}: {ms:.2f} ms ({len(argv)} words, {len(lines)} lines)")

if __name__ == "__main__":
    main()
