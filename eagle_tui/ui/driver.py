"""The terminal driver: Textual's Linux driver, with ``Esc`` reported in ~20 ms instead of ~100 ms.

A terminal sends the Esc key as a lone ``ESC`` byte, the byte that also starts every escape
sequence (arrow keys, mouse reports), so Textual's input parser waits for more bytes before it
reports Esc: ``ESCDELAY`` milliseconds, 100 by default. Its input thread, moreover, looks at that
wait only when ``select`` returns, and with no more input that is after its fixed 0.1 s timeout:
Esc reached the app 100-110 ms after the key whatever ``ESCDELAY`` said, and closing the log's
filter box could not meet the key→screen budget (issue 5: p99 ≤ 100 ms) before any work was done.

Here the input thread sleeps only until the parser's deadline, and the wait is
:data:`ESCAPE_WAIT` unless the user set ``ESCDELAY`` (which is then honoured as Textual honours
it). A terminal writes one key's sequence in one piece, and SSH forwards it in one packet, so a
short wait only mistakes a sequence for Esc on a link that delivers its bytes tens of ms apart
(tmux 3.5 lowered its own ``escape-time`` default to 10 ms for the same reason).

This reaches into Textual's private parser (``textual._xterm_parser``) and repeats its input
loop; ``tests/ui/test_ui_findbox.py`` checks both against the installed Textual.
"""

from __future__ import annotations

import os
import selectors
import time
from codecs import getincrementaldecoder

from textual._loop import loop_last
from textual._parser import ParseError, Read1
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

ESCAPE_WAIT = 0.02  # s the parser waits after a lone ESC for the rest of a sequence
IDLE_WAIT = 0.1  # s between the input thread's checks for exit when no key comes (Textual's)


def escape_wait() -> float | None:
    """The wait after a lone ESC; ``None``: the user set ``ESCDELAY``, Textual's wait stands."""
    return None if "ESCDELAY" in os.environ else ESCAPE_WAIT


class EscapeParser(XTermParser):
    """Textual's parser with its ESC wait capped, remembering when that wait runs out.

    The parser asks for its next character through ``read1``; only the ESC wait passes a
    timeout, so the last call tells whether a deadline is pending (``deadline``).
    """

    def __init__(self, debug: bool = False, wait: float | None = ESCAPE_WAIT) -> None:
        self.wait = wait
        self.deadline: float | None = None  # time.monotonic(), as the parser's own clock
        super().__init__(debug)

    def read1(self, timeout: float | None = None) -> Read1:  # type: ignore[override]
        if timeout is not None and self.wait is not None:
            timeout = min(timeout, self.wait)
        self.deadline = None if timeout is None else time.monotonic() + timeout
        return Read1(timeout)

    def select_timeout(self) -> float:
        """How long the input thread may block in ``select``: until the ESC deadline, if any."""
        if self.deadline is None:
            return IDLE_WAIT
        # a little past the deadline: tick() must find it expired, not call select(0) in a loop
        return min(IDLE_WAIT, max(0.0, self.deadline - time.monotonic()) + 0.001)


class EscapeDriver(LinuxDriver):
    """``LinuxDriver`` whose input thread uses :class:`EscapeParser` (see the module doc)."""

    def run_input_thread(self) -> None:
        """Textual's loop (``LinuxDriver.run_input_thread``), with the select timeout above."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        fileno = self.fileno
        EVENT_READ = selectors.EVENT_READ
        parser = EscapeParser(self._debug, escape_wait())
        feed = parser.feed
        tick = parser.tick
        decode = getincrementaldecoder("utf-8")().decode
        read = os.read

        def process_selector_events(
            selector_events: list[tuple[selectors.SelectorKey, int]], final: bool = False
        ) -> None:
            for last, (_selector_key, mask) in loop_last(selector_events):
                if mask & EVENT_READ:
                    unicode_data = decode(read(fileno, 1024 * 4), final=final and last)
                    if not unicode_data:
                        break  # stdin is piped
                    for event in feed(unicode_data):
                        self.process_message(event)
            for event in tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process_selector_events(selector.select(parser.select_timeout()))
            selector.unregister(self.fileno)
            process_selector_events(selector.select(IDLE_WAIT), final=True)
        finally:
            selector.close()
            try:
                for _event in feed(""):
                    pass
            except (EOFError, ParseError):
                pass


__all__ = ["ESCAPE_WAIT", "EscapeDriver", "EscapeParser", "escape_wait"]
