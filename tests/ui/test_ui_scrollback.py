"""File-backed scrollback in the dashboard: a 200k-line log opened at its end scrolls back to
line 1, End follows again, memory stays bounded (the real app, a real line store)."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from eagle_tui.model.buffers.lineindex import DEFAULT_INDEX_BYTES
from eagle_tui.model.events import LineKind, LogLine, LogOpened, LogPrefixCounted
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.session import Session
from eagle_tui.sources.linestore import Scrollback
from eagle_tui.sources.scripted import ScriptedSource
from eagle_tui.transport.local import LocalTransport
from eagle_tui.ui.app import EagleApp
from eagle_tui.ui.app_factory import build_app
from eagle_tui.ui.config import UiConfig
from eagle_tui.ui.textual_private import screen_text
from eagle_tui.ui.widgets.logpane import status_content
from eagle_tui.ui.widgets.logview import LogView
from tests.support.ui_scenarios import FROZEN_CLOCK

LINES = 200_000
TAIL = 5_000  # lines the tail parsed (relative numbers 1..TAIL)
KEPT = 2_000  # of which the buffer keeps the newest


def _text(i: int) -> bytes:
    """Line ``i`` (1-based): some are EAGLE3 debug lines and errors, to check their kinds."""
    if i % 1000 == 7:
        return b"[2026-01-01 00:00:00] [EAGLE3-DEBUG] line %d aux_hidden_states 4096" % i
    if i == 3:
        return b"Traceback (most recent call last):"
    return b"[2026-01-01 00:00:00 TP0] INFO line %d plain text of the log" % i


def _log(tmp: Path) -> tuple[Path, int, list[LogLine]]:
    path = tmp / "big.log"
    lines = [_text(i) for i in range(1, LINES + 1)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    start = sum(len(ln) + 1 for ln in lines[:LINES - TAIL])
    tail = b"\n".join(lines[LINES - TAIL:]) + b"\n"
    parsed = [ev for ev in LogParser().feed_lines(tail) if type(ev) is LogLine]
    return path, start, parsed


def _app(tmp: Path, *, count: bool = False) -> tuple[EagleApp, Scrollback, Session, Path]:
    path, start, tail = _log(tmp)
    opened: list[LogOpened | LogPrefixCounted | LogLine] = [
        LogOpened(str(path), "", start, path.stat().st_size)]
    if count:  # the summarizer counted first (i15-open's LogPrefixCounted)
        opened.append(LogPrefixCounted(str(path), "", LINES - TAIL))
    session = Session([ScriptedSource([*opened, *tail], hold=True)], tick_interval=None,
                      batch_interval=0.0)
    store = Scrollback()
    store.attach([LocalTransport()])  # on this loop: the app's (run_test shares it)
    app = build_app(UiConfig(max_lines=KEPT), session=session, file_lines=store,
                    clock=lambda: FROZEN_CLOCK)
    return app, store, session, path


async def _until(pilot: Pilot[int], cond: object, what: str) -> None:
    for _ in range(1000):
        if callable(cond) and cond():
            await pilot.pause()
            return
        await pilot.pause(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def test_scrolling_back_reaches_line_1_of_the_file(tmp_path: Path) -> None:
    app, store, _session, _path = _app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.query_one(LogView)
        await _until(pilot, lambda: view.file_rows == LINES - KEPT, "the index")
        assert view.row_count == LINES and view.follow
        await pilot.press("home")
        await _until(pilot, lambda: view.row_text(0) == _text(1).decode(), "line 1")
        assert not view.follow
        await pilot.pause()
        screen = screen_text(app)
        assert "INFO line 1 plain text" in screen and "Traceback (most recent" in screen
        assert "line 1 of 200,000 (file)" in screen
        first = view.file.line(6) if view.file is not None else None  # line 7: debug
        assert first is not None and first.kind is LineKind.DEBUG
        error = view.file.line(2) if view.file is not None else None
        assert error is not None and error.kind is LineKind.TRACEBACK
        live = LogParser().feed_line(_text(3))[0]  # exactly as the live tail classifies it
        assert isinstance(live, LogLine) and live.kind is error.kind
        # page down through the file part, line by line it matches the file
        for _ in range(3):
            await pilot.press("pagedown")
        top = int(view.scroll_y)
        await _until(pilot, lambda: view.row_text(top) == _text(top + 1).decode(), "a page")
        # the file part meets the buffer with no gap and no overlap
        edge = view.file_rows
        view.scroll_to(y=edge - 5, animate=False)
        await _until(pilot, lambda: view.row_text(edge - 1) == _text(edge).decode(), "the edge")
        assert view.row_text(edge) == _text(edge + 1).decode()
        # memory: the index and the window stay within their bounds, the buffer too
        assert view.file is not None and view.file.bytes <= view.file.max_bytes
        assert store._stores and all(s.index.nbytes <= DEFAULT_INDEX_BYTES
                                     for s in store._stores.values())
        assert view.line_count <= KEPT


async def test_end_follows_again_while_lines_are_appended(tmp_path: Path) -> None:
    app, _store, session, _path = _app(tmp_path, count=True)
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.query_one(LogView)
        await _until(pilot, lambda: view.file_rows == LINES - KEPT, "the prefix count")
        await pilot.press("home")
        await _until(pilot, lambda: view.row_text(0) == _text(1).decode(), "line 1")
        # paused at line 1: appended lines prune the buffer, the view stays on line 1
        session.post(*(LogLine(TAIL + i, f"appended {i}", LineKind.PLAIN)
                       for i in range(1, 301)))
        await _until(pilot, lambda: view.file_rows == LINES - KEPT + 300, "the prune")
        assert int(view.scroll_y) == 0 and view.row_text(0) == _text(1).decode()
        assert view.unseen == 300
        await pilot.press("end")
        assert view.follow
        session.post(LogLine(TAIL + 301, "appended last", LineKind.PLAIN))
        await _until(pilot, lambda: view.row_text(view.row_count - 1) == "appended last",
                     "the new line")
        await _until(pilot, lambda: not app.render_pending, "the repaint")
        assert view.scroll_y == view.max_scroll_y
        assert "appended last" in screen_text(app)


async def test_filter_covers_the_buffer_and_says_so(tmp_path: Path) -> None:
    app, _store, _session, _path = _app(tmp_path, count=True)
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.query_one(LogView)
        await _until(pilot, lambda: view.file_rows == LINES - KEPT, "the prefix count")
        view.set_filter("EAGLE3")
        assert view.file_rows == 0
        text = status_content(view.status()).plain
        assert f"filter: last {KEPT:,} lines" in text
        view.set_filter("")
        assert view.file_rows == LINES - KEPT


async def test_a_jump_to_a_line_before_the_buffer_goes_into_the_file(tmp_path: Path) -> None:
    app, _store, _session, _path = _app(tmp_path, count=True)
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.query_one(LogView)
        await _until(pilot, lambda: view.file_rows == LINES - KEPT, "the prefix count")
        # the tail numbers its lines from its start: line 10 of the file is 10 - prefix
        assert view.jump_to_lineno(10 - (LINES - TAIL))
        assert not view.follow and view.file_cursor == 9
        assert int(view.scroll_y) <= 9 < int(view.scroll_y) + view.size.height
        await _until(pilot, lambda: view.row_text(9) == _text(10).decode(), "line 10")
        # a pruned tail line (relative 100) is in the file part too
        assert view.jump_to_lineno(100)
        assert view.file_cursor == LINES - TAIL + 99
        assert not view.jump_to_lineno(10 - LINES)  # before line 1: nowhere
        await pilot.press("end")
        assert view.follow and view.file_cursor is None


async def test_search_goes_on_into_the_whole_file(tmp_path: Path) -> None:
    app, _store, _session, _path = _app(tmp_path, count=True)
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.query_one(LogView)
        await _until(pilot, lambda: view.file_rows == LINES - KEPT, "the prefix count")
        view.set_search(r"line 4200 plain|line 199500 plain")  # one in the file, one in memory
        assert view.find(forward=True) == (True, False)  # past the buffer's end: the file
        await _until(pilot, lambda: view.file_cursor == 4199, "the match in the file")
        await _until(pilot, lambda: view.row_text(4199) == _text(4200).decode(), "its text")
        await pilot.press("n")  # on down the file: none, so the buffer's match
        await _until(pilot, lambda: view.cursor_lineno == 199_500 - (LINES - TAIL), "buffer")
        assert view.file_cursor is None
        await pilot.press("n")  # past the buffer's end again: wraps into the file
        await _until(pilot, lambda: view.file_cursor == 4199, "wrapped into the file")
        await pilot.press("N")  # up the file: none before it, so wrap to the buffer's match
        await _until(pilot, lambda: view.cursor_lineno == 199_500 - (LINES - TAIL), "back")
        view.set_search("no such line anywhere")
        view.find(forward=False)
        assert "searching the file" in status_content(view.status()).plain
        await _until(pilot, lambda: "searching" not in status_content(view.status()).plain,
                     "the search's end")
