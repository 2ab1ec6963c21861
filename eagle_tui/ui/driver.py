"""The terminal driver: Textual's Linux driver, with ``Esc`` reported promptly.

A terminal sends the Esc key as a lone ``ESC`` byte, the byte that also starts every escape
sequence (arrow keys, mouse reports), so Textual's input parser waits ``ESCDELAY`` for more bytes
before it reports Esc. Its input thread, moreover, looks at that wait only when ``select``
returns, and with no more input that is after its fixed timeout: Esc reached the app well after
the key whatever ``ESCDELAY`` said, too late for the key→screen budget of closing the log's
filter box before any work was done.

More in docs/architecture.md, "Module notes", ``ui/driver``.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any

from textual.drivers.linux_driver import LinuxDriver

from eagle_tui.ui.textual_private import IDLE_WAIT, EscapeParser, run_input_loop

ESCAPE_WAIT = 0.02  # s the parser waits after a lone ESC for the rest of a sequence


def escape_wait() -> float | None:
    """The wait after a lone ESC; ``None``: the user set ``ESCDELAY``, Textual's wait stands."""
    return None if "ESCDELAY" in os.environ else ESCAPE_WAIT


class _WakingEvent(threading.Event):
    """The driver's ``exit_event``: setting it also makes a pipe readable, which wakes the
    input thread's ``select`` at once (it need not wake 10 times a second to look)."""

    def __init__(self) -> None:
        super().__init__()
        self.read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)
        os.set_blocking(self.read_fd, False)
        self._open = True

    def set(self) -> None:
        super().set()
        if self._open:  # (a closed pipe's numbers may belong to another file by now)
            with contextlib.suppress(BlockingIOError, OSError):
                os.write(self._write_fd, b"x")

    def clear(self) -> None:
        super().clear()
        if not self._open:
            return
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self.read_fd, 64):  # drained: the next set() wakes the next thread
                pass

    def close(self) -> None:
        if not self._open:
            return
        self._open = False
        for fd in (self.read_fd, self._write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


class EscapeDriver(LinuxDriver):
    """``LinuxDriver`` whose input thread uses :class:`EscapeParser` (see the module doc) and is
    woken by the exit instead of polling for it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exit_event = _WakingEvent()

    def run_input_thread(self) -> None:
        """Textual's loop (``LinuxDriver.run_input_thread``), with the select timeout above;
        woken by the exit when the exit event can (a plain ``Event``: Textual's 0.1 s polls)."""
        wake = self.exit_event if isinstance(self.exit_event, _WakingEvent) else None
        run_input_loop(self, escape_wait(), wake.read_fd if wake is not None else None)

    def close(self) -> None:
        super().close()
        if isinstance(self.exit_event, _WakingEvent):
            self.exit_event.close()


__all__ = ["ESCAPE_WAIT", "IDLE_WAIT", "EscapeDriver", "EscapeParser", "escape_wait"]
