"""The filter/search box drawn in the log's status row, its line editor, and the fast Esc key."""

from __future__ import annotations

import os
import pty
import queue
import threading
import time
import tty

import pytest
from textual import events
from textual.message import Message

from eagle_tui.ui.driver import ESCAPE_WAIT, IDLE_WAIT, EscapeDriver, EscapeParser, escape_wait
from eagle_tui.ui.widgets.logpane import FindBox, find_box_content
from eagle_tui.ui.widgets.logtext import QueryLine
from tests.support.ui_helpers import make_app

# ---------------------------------------------------------------------------- the line editor


def test_query_line_edits_like_a_shell_line() -> None:
    line = QueryLine()
    assert line.insert("decode") and line.cursor == 6
    line.move(0)
    line.insert("[")
    assert (line.text, line.cursor) == ("[decode", 1)
    assert line.delete() and line.text == "[ecode"
    assert line.backspace() and (line.text, line.cursor) == ("ecode", 0)
    assert not line.backspace()
    line.move(99)
    assert line.cursor == 5 and not line.delete()
    line.insert(" batch  ")
    assert line.delete_word() and line.text == "ecode "  # "batch" and the spaces after it
    line.move(2)
    assert line.delete_to_end() and line.text == "ec"
    assert line.delete_to_start() and (line.text, line.cursor) == ("", 0)
    assert not line.delete_word()


def test_query_line_takes_printable_text_only() -> None:
    line = QueryLine()
    assert line.insert("warn\x1b[2J\x07\tx\nsecond line")  # a paste: its first line only
    assert line.text == "warn[2Jx"
    assert not line.insert("\x1b") and not line.insert("")
    line.set("a\x00b")
    assert (line.text, line.cursor) == ("ab", 2)


def test_an_opened_query_is_selected_until_edited() -> None:
    line = QueryLine()
    line.set("debug", select=True)
    assert line.selected
    assert line.insert("x") and line.text == "x" and not line.selected  # typing replaces it
    line.set("debug", select=True)
    assert line.backspace() and line.text == ""
    line.set("debug", select=True)
    assert line.move(2) and not line.selected and line.text == "debug"  # a cursor key edits it
    line.set("", select=True)
    assert not line.selected


# ---------------------------------------------------------------------------- drawing the box


def styled(content: object) -> list[tuple[str, str]]:
    """The content's text per span style (plain text for unstyled runs)."""
    from textual.content import Content

    assert isinstance(content, Content)
    return [(content.plain[s.start:s.end], str(s.style)) for s in content.spans]


def test_empty_box_shows_its_hint_with_the_cursor_on_it() -> None:
    content = find_box_content(FindBox("filter", "", 0), 80)
    assert content.plain == "filter: show only matching lines (regex or text)"
    assert ("s", "reverse") in styled(content)
    search = find_box_content(FindBox("search", "", 0), 80)
    assert search.plain == "search: Enter jumps to the next match, then n / N"


def test_query_is_plain_text_with_a_cursor_cell() -> None:
    content = find_box_content(FindBox("filter", "[b]x[/b]", 8, note="  (3 shown)"), 80)
    assert content.plain == "filter: [b]x[/b]   (3 shown)"  # never markup
    assert (" ", "reverse") in styled(content)  # the cursor after the text
    mid = find_box_content(FindBox("filter", "abc", 1), 80)
    assert mid.plain == "filter: abc" and ("b", "reverse") in styled(mid)
    selected = find_box_content(FindBox("search", "abc", 3, selected=True), 80)
    assert ("abc", "reverse") in styled(selected)


def test_a_long_query_scrolls_to_keep_the_cursor_visible() -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(100))
    at_end = find_box_content(FindBox("filter", text, 100, note="  (1 shown)"), 40)
    assert at_end.cell_length <= 40 and at_end.plain.startswith("filter: …")
    assert at_end.plain.endswith(text[-30:] + " ")  # the end of the query, then the cursor
    at_start = find_box_content(FindBox("filter", text, 0), 40)
    assert at_start.cell_length <= 40 and at_start.plain.endswith("…")
    assert at_start.plain.startswith("filter: " + text[:30])
    middle = find_box_content(FindBox("filter", text, 50), 40)
    assert middle.cell_length <= 40 and middle.plain.count("…") == 2
    assert (text[50], "reverse") in styled(middle)
    wide = find_box_content(FindBox("filter", "日本語" * 20, 60), 30)
    assert wide.cell_length <= 30


# ---------------------------------------------------------------------------- the Esc key


def test_parser_reports_a_lone_esc_after_the_short_wait() -> None:
    parser = EscapeParser(wait=ESCAPE_WAIT)
    assert parser.select_timeout() == IDLE_WAIT
    assert list(parser.feed("\x1b")) == []
    assert 0 < parser.select_timeout() <= ESCAPE_WAIT + 0.002
    time.sleep(ESCAPE_WAIT + 0.005)
    keys = [e.key for e in parser.tick() if isinstance(e, events.Key)]
    assert keys == ["escape"]
    assert [e.key for e in parser.feed("\x1b[A") if isinstance(e, events.Key)] == ["up"]
    assert parser.deadline is None and parser.select_timeout() == IDLE_WAIT


def test_escdelay_set_by_the_user_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ESCDELAY", raising=False)
    assert escape_wait() == ESCAPE_WAIT
    monkeypatch.setenv("ESCDELAY", "300")
    assert escape_wait() is None
    parser = EscapeParser(wait=None)
    list(parser.feed("\x1b"))
    assert parser.deadline is not None and parser.deadline - time.monotonic() > 0.05


class KeyRecorder(EscapeDriver):
    """The driver's input loop on a pseudo-terminal, recording the keys it reports."""

    def __init__(self, fd: int) -> None:  # no terminal set-up: only the input loop runs
        self.fileno = fd
        self.exit_event = threading.Event()
        self._debug = False
        self.keys: queue.Queue[tuple[float, str]] = queue.Queue()

    def process_message(self, message: Message) -> None:
        if isinstance(message, events.Key):
            self.keys.put((time.monotonic(), message.key))


def test_input_loop_reports_esc_without_waiting_for_its_idle_timeout() -> None:
    """Textual's own loop reports a lone Esc only when its 0.1 s ``select`` times out."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    driver = KeyRecorder(slave)
    thread = threading.Thread(target=driver.run_input_thread, daemon=True)
    thread.start()
    try:
        latencies = []
        for _ in range(3):
            sent = time.monotonic()
            os.write(master, b"\x1b")
            at, key = driver.keys.get(timeout=2)
            assert key == "escape"
            latencies.append(at - sent)
            time.sleep(0.05)
        assert min(latencies) < 0.08
        os.write(master, b"\x1b[Ax")
        assert [driver.keys.get(timeout=2)[1] for _ in range(2)] == ["up", "x"]
    finally:
        driver.exit_event.set()
        thread.join(2)
        os.close(master)
        os.close(slave)
    assert not thread.is_alive()


def test_the_app_uses_the_escape_driver_on_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    assert make_app([]).get_driver_class() is EscapeDriver
