"""``eagle-tui watch --headless --json`` on one server, its JSON lines read in a thread: the
hold tests (simulated and real servers) wait on its progress lines."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.procs import end_process


class Watch:
    """``eagle-tui watch --headless --json --url URL --log LOG`` until :meth:`stop`."""

    def __init__(self, url: str, log: Path, duration_s: float = 90.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "eagle_tui", "watch", "--headless", "--json", "--gpu", "none",
             "--url", url, "--log", str(log), "--duration", str(duration_s)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with contextlib.suppress(ValueError):
                self.lines.put(json.loads(line))

    def until(self, ok: Callable[[dict[str, Any]], bool], within_s: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + within_s
        seen: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                obj = self.lines.get(timeout=0.5)
                seen.append(obj)
                if obj.get("event") == "progress" and ok(obj):
                    return obj
        last = [(o.get("numbers", {}).get("state"), o.get("hold")) for o in seen[-5:]]
        raise AssertionError(f"not seen within {within_s} s; last: {last}")

    def stop(self) -> None:
        end_process(self.proc)


def hold_state(obj: dict[str, Any]) -> str | None:
    """The server state a progress line gives (``paused``, ``sleeping``, ``ready``...)."""
    state = obj.get("numbers", {}).get("state")
    return state if isinstance(state, str) else None
