"""``wait``, ``watch --json`` and ``replay --headless`` on a log bigger than the end read first
(issue 15): a crash far above the tail is still the verdict, with the file's own line number,
and the JSON lines carry the background summary's progress."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EAGLE_TUI = [sys.executable, "-m", "eagle_tui"]


def crashed_then_quiet(tmp_path: Path) -> tuple[Path, int]:
    """A startup that crashed (CUDA OOM), then 1 MiB of lines that say nothing: the crash is
    only in the lines before the tail; and the crash's line number in the file."""
    head = (FIXTURES / "wait" / "sglang-oom-cuda-graph.log").read_bytes()
    body = b"".join(b"[2025-11-20 10:15:00] nothing to see here, line %06d\n" % i
                    for i in range(20_000))
    log = tmp_path / "server.log"
    log.write_bytes(head + body)
    report = subprocess.run([*EAGLE_TUI, "report", "--json", str(log)], capture_output=True,
                            text=True, check=True, timeout=60)
    crash = json.loads(report.stdout)["crash"]
    assert crash["kind"] == "cuda_oom"
    return log, int(crash["line"])


def test_wait_reports_a_crash_before_the_tail(tmp_path: Path) -> None:
    log, line = crashed_then_quiet(tmp_path)
    res = subprocess.run([*EAGLE_TUI, "wait", "--log", str(log), "--gpu", "none", "--json",
                          "--timeout", "60"], capture_output=True, text=True, timeout=90)
    assert res.returncode == 1, res.stdout + res.stderr
    lines = [json.loads(x) for x in res.stdout.splitlines() if x.startswith("{")]
    result = lines[-1]
    assert result["event"] == "result" and result["status"] == "crashed"
    assert result["crash"]["kind"] == "cuda_oom" and result["crash"]["lineno"] == line
    progress = [x for x in lines if x["event"] == "progress"]
    assert progress[0]["summary"] is not None and progress[0]["summary"]["start"] > 0
    assert any(x["summary"]["finished"] for x in progress)


def test_replay_headless_of_a_big_raw_log(tmp_path: Path) -> None:
    log, _ = crashed_then_quiet(tmp_path)
    res = subprocess.run([*EAGLE_TUI, "replay", "--headless", str(log)], capture_output=True,
                         text=True, timeout=90)
    assert res.returncode == 1, res.stdout + res.stderr  # the crash is far above the tail
    first, *_, last = res.stdout.splitlines()
    assert "summarizing the earlier lines" in first and "CRASHED" not in first
    assert "CRASHED (cuda_oom)" in last and "earlier lines summarized" in last
