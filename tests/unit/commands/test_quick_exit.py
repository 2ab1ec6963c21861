"""``cli.entry``: a local ``report`` ends with ``os._exit`` after flushing, losing nothing.

The process skips Python's teardown (an ``atexit`` hook shows it: it runs for other commands
and for a report over SSH, not for a local report); its output through a pipe is the same bytes
as :func:`main` gives in-process, its exit code the same, big output included.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from eagle_tui.cli import main
from eagle_tui.commands.report import quick_exit

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "samples"
CHILD = """
import atexit, sys
mark = sys.argv[1]
atexit.register(lambda: open(mark, "w").close())
sys.argv = ["eagle-tui", *sys.argv[2:]]
from eagle_tui.cli import entry
entry()
"""


def _entry(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[bytes], bool]:
    mark = tmp_path / "teardown-ran"
    mark.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(mark), *args],
                          capture_output=True, timeout=120, check=False)
    return proc, mark.exists()


def _in_process(*args: str) -> tuple[int, bytes]:
    out = io.BytesIO()
    text = io.TextIOWrapper(out, encoding="utf-8", newline="")
    with contextlib.redirect_stdout(text):
        rc = main(list(args))
    text.flush()
    return rc, out.getvalue()


@pytest.mark.parametrize("log, json", [
    ("sglang-eagle3-launch-decode.log", True),
    ("sglang-oom-cuda-graph.log", True),  # a crash: its own exit code
    ("vllm-eagle3-launch-stats.log", False),
])
def test_a_local_report_skips_the_teardown_and_loses_nothing(
        tmp_path: Path, log: str, json: bool) -> None:
    args = ["report", *(["--json"] if json else []), str(SAMPLES / log)]
    proc, teardown = _entry(tmp_path, *args)
    rc, expected = _in_process(*args)
    assert not teardown
    assert proc.returncode == rc
    assert proc.stdout == expected
    assert proc.stdout.strip()


def test_big_output_through_a_pipe_is_whole(tmp_path: Path) -> None:
    """More than a pipe holds (64 KiB): the flush before ``os._exit`` writes it all."""
    line = (SAMPLES / "sglang-eagle3-launch-decode.log").read_text().splitlines()[-1]
    log = tmp_path / "big.log"
    odd = "".join(f"[2025-11-20 10:00:00] odd line {i} {'x' * 200}\n" for i in range(3000))
    log.write_text((SAMPLES / "sglang-oom-cuda-graph.log").read_text() + odd + line + "\n")
    args = ["report", str(log)]
    proc, teardown = _entry(tmp_path, *args)
    rc, expected = _in_process(*args)
    assert not teardown and proc.returncode == rc
    assert proc.stdout == expected


def test_other_commands_keep_the_teardown(tmp_path: Path) -> None:
    proc, teardown = _entry(tmp_path, "lint", "--", "python", "-m", "sglang.launch_server",
                            "--model-path", "x")
    assert teardown and proc.returncode == 1  # (the model path is not there: an error)


def test_bad_input_still_says_one_line_and_exits_2(tmp_path: Path) -> None:
    proc, _ = _entry(tmp_path, "report", str(tmp_path / "missing.log"))
    assert proc.returncode == 2
    assert len(proc.stderr.decode().strip().splitlines()) == 1
    assert b"missing.log" in proc.stderr


def test_a_report_over_ssh_or_from_a_container_exits_as_python_does() -> None:
    local = argparse.Namespace(ssh=None, container=None)
    assert quick_exit(local)
    assert not quick_exit(argparse.Namespace(ssh=["host"], container=None))
    assert not quick_exit(argparse.Namespace(ssh=None, container="c1"))
