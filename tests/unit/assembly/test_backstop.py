"""The backstop: a command that promised an end ends, hung or not, with exit 70 and the stacks
(in child processes: it ends the process it runs in)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def run_child(code: str, limit: float = 30.0) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=limit, cwd=ROOT)
    return done, time.monotonic() - t0


def test_a_hung_block_ends_at_its_end_plus_grace_with_70_and_the_stacks() -> None:
    done, took = run_child(
        "import time\n"
        "from eagle_tui.assembly.backstop import backstop\n"
        "print('before', flush=False)\n"  # (unflushed: the backstop flushes it)
        "with backstop(0.3, 'wait', grace=0.3):\n"
        "    time.sleep(60)\n")
    assert done.returncode == 70, done
    assert took < 10.0
    assert done.stdout == "before\n"
    err = done.stderr
    assert "time.sleep(60)" in err or "<string>" in err  # the main thread's stack
    last = err.strip().splitlines()[-1]
    assert last.startswith("eagle-tui wait: error: still running 0.3 s past its end (0.3 s)")


def test_a_block_that_ends_in_time_is_not_stopped() -> None:
    done, _ = run_child(
        "import time\n"
        "from eagle_tui.assembly.backstop import backstop\n"
        "with backstop(0.2, 'wait', grace=0.2):\n"
        "    pass\n"
        "time.sleep(1.0)\n"  # past the backstop's moment: it was cancelled
        "print('done')\n")
    assert done.returncode == 0 and done.stdout == "done\n", done


def test_wait_keeps_its_timeout_when_its_loop_hangs(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("starting\n")
    done, took = run_child(
        "import asyncio, time\n"
        "import eagle_tui.assembly.backstop as b\n"
        "b.GRACE_S = 0.5\n"
        "def hang(coro):\n"  # an event loop that never returns: the bug the backstop ends
        "    coro.close()\n"
        "    time.sleep(60)\n"
        "asyncio.run = hang\n"
        "from eagle_tui.cli import main\n"
        f"raise SystemExit(main(['wait', '--log', {str(log)!r}, '--timeout', '0.5']))\n")
    assert done.returncode == 70, done
    assert took < 10.0
    assert "eagle-tui wait: error: still running 0.5 s past its end" in done.stderr
