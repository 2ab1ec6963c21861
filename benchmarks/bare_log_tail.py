"""The baseline for ``bench_tui.py``: a bare Textual ``Log`` tailing a file, done right.

No parsing, no state, no panes: a reader thread follows the file (from its start, like ``tail -n
+1 -F``) and queues lines; a 50 ms UI timer hands each batch to ``Log.write_lines`` in one call,
skipping ahead when a batch exceeds ``max_lines`` (never one ``call_from_thread`` per line: that
caps a bare ``Log`` at a few hundred lines a second). ``Log(highlight=True, max_lines=10_000)``
is the configuration compared in docs/performance.md. The header line
shows the line count and a ``w``-toggled flag so the benchmark can see keys land on screen.

    python benchmarks/bare_log_tail.py FILE
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.content import Content
from textual.widgets import Log, Static

MAX_LINES = 10_000
BATCH_S = 0.05


class BareTail(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [("w", "flip", "flip"), ("q", "quit", "quit")]
    CSS = "#head { height: 1; } Log { height: 1fr; }"

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.pending: deque[str] = deque()
        self.total = 0
        self.flag = False
        self._stop = threading.Event()

    def compose(self) -> ComposeResult:
        yield Static(id="head")
        yield Log(highlight=True, max_lines=MAX_LINES)

    def on_mount(self) -> None:
        self._header()
        threading.Thread(target=self._read, daemon=True).start()
        self.set_interval(BATCH_S, self._drain)

    def on_unmount(self) -> None:
        self._stop.set()

    def _header(self) -> None:
        flag = "wrap:on " if self.flag else "wrap:off"
        self.query_one("#head", Static).update(
            Content(f"bare Log tail · {flag} · {self.total:,} lines"))

    def _read(self) -> None:
        while not self.path.exists() and not self._stop.is_set():
            time.sleep(0.05)
        with self.path.open("rb") as fh:
            partial = b""
            while not self._stop.is_set():
                chunk = fh.read(1 << 20)
                if not chunk:
                    time.sleep(0.01)
                    continue
                data = partial + chunk
                cut = data.rfind(b"\n") + 1
                partial = data[cut:]
                lines = data[:cut].decode("utf-8", "replace").splitlines()
                self.pending.extend(lines)

    def _drain(self) -> None:
        if not self.pending:
            return
        batch = []
        while self.pending:
            batch.append(self.pending.popleft())
        self.total += len(batch)
        if len(batch) > MAX_LINES:
            batch = batch[-MAX_LINES:]
        self.query_one(Log).write_lines(batch)
        self._header()

    def action_flip(self) -> None:
        self.flag = not self.flag
        self._header()


if __name__ == "__main__":
    BareTail(Path(sys.argv[1])).run()
