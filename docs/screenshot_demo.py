"""Export the README's picture: ``eagle-tui demo`` on a terminal, saved by Textual as SVG.

    python docs/screenshot_demo.py                      # docs/img/demo-160x48.svg after 35 s
    python docs/screenshot_demo.py --delay 50 --size 120x40 --out /tmp/demo.svg

The demo runs as a user starts it (``python -m eagle_tui demo``) on a pseudo-terminal of the
given size, with data, config, state and cache folders of its own (nothing lands in the user's
run history). Textual's ``TEXTUAL_SCREENSHOT`` saves the screen after DELAY seconds and ends the
app; the demo then stops its simulated server as it does on ``q``.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=int, default=35,
                        help="seconds after the start (the demo is serving after ~20 s)")
    parser.add_argument("--size", default="160x48", help="terminal COLUMNSxLINES")
    parser.add_argument("--out", type=Path, default=None,
                        help="the SVG file (default docs/img/demo-SIZE.svg)")
    parser.add_argument("demo_args", nargs="*", help="more arguments for eagle-tui demo")
    args = parser.parse_args()
    cols, rows = (int(n) for n in args.size.split("x"))
    out = (args.out or HERE / "img" / f"demo-{args.size}.svg").resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="eagle-tui-screenshot-") as base:
        env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor",
               "COLUMNS": str(cols), "LINES": str(rows),
               "TEXTUAL_SCREENSHOT": str(args.delay),
               "TEXTUAL_SCREENSHOT_LOCATION": str(out.parent),
               "TEXTUAL_SCREENSHOT_FILENAME": out.name,
               "EAGLE_TUI_DATA_DIR": f"{base}/data/eagle-tui"}
        for var, sub in (("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"),
                         ("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache")):
            Path(base, sub).mkdir()
            env[var] = f"{base}/{sub}"
        env.pop("NO_COLOR", None)
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        before = out.stat().st_mtime if out.exists() else None
        proc = subprocess.Popen([sys.executable, "-m", "eagle_tui", "demo", *args.demo_args],
                                stdin=slave, stdout=slave, stderr=slave, env=env, cwd=base,
                                start_new_session=True)
        os.close(slave)
        deadline = time.monotonic() + args.delay + 60
        while proc.poll() is None and time.monotonic() < deadline:
            # the terminal's output is read and dropped: a full pty would block the app
            if select.select([master], [], [], 0.5)[0]:
                try:
                    os.read(master, 1 << 16)
                except OSError:
                    break
        if proc.poll() is None:
            proc.terminate()
        proc.wait(30)
        os.close(master)
    if not out.exists() or out.stat().st_mtime == before:
        print(f"no screenshot was written (demo exit {proc.returncode})", file=sys.stderr)
        return 1
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
