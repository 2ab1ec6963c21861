"""The line framer: partial lines, the over-long cut, byte caps, exact offsets, catch-up split."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.events import LineKind, LogLine
from eagle_tui.model.ingest.framing import (
    CUT_MARK,
    MAX_LINE_BYTES,
    Frame,
    LineFramer,
    held_to_contract,
    is_cut,
)
from eagle_tui.model.ingest.logfeed import LogFeed
from eagle_tui.model.ingest.parser import LogParser

SETTINGS = settings(max_examples=150, deadline=None)


def feed_all(framer: LineFramer, data: bytes, cuts: list[int]) -> list[Frame]:
    out: list[Frame] = []
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        out.extend(framer.feed(data[start:cut]))
        start = max(start, cut)
    return out


def assert_exact(frames: list[Frame], data: bytes, start: int = 0) -> None:
    """Frames cover ``data[start:]`` once, in order, each at its own offset."""
    pos = start
    for f in frames:
        assert f.start == pos
        assert data[f.start : f.end] == f.data
        if not f.single:
            assert f.data.endswith(b"\n") and f.data
        pos = f.end
    assert pos == len(data)


lines = st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=40)


@SETTINGS
@given(lines, st.lists(st.integers(0, 2000), max_size=12), st.booleans(),
       st.integers(0, 8), st.integers(1, 200))
def test_frames_are_the_bytes_once_in_order_whatever_the_cuts(
        body: list[bytes], cuts: list[int], tail: bool, tail_lines: int, tail_bytes: int) -> None:
    data = b"\n".join(body) + (b"\n" if tail else b"")
    framer = LineFramer(tail_lines=tail_lines, tail_bytes=tail_bytes, max_line=16)
    frames = feed_all(framer, data, cuts)
    assert framer.offset + framer.held[1] + framer.partial == len(data) == framer.read_to
    frames += framer.finish()
    assert_exact(frames, data)
    assert framer.offset == len(data) and framer.partial == 0 and framer.held == (0, 0)
    assert all(len(f.data) <= 16 for f in frames if f.single)  # the cut bounds every line
    assert all(len(ln) <= 16 for f in frames if not f.single for ln in f.data.split(b"\n"))


def test_a_partial_line_waits_for_its_newline() -> None:
    framer = LineFramer(visible_from=0)
    assert framer.feed(b"one\ntw") == [Frame(b"one\n", 0, True)]
    assert (framer.offset, framer.partial) == (4, 2)
    assert framer.feed(b"o") == []
    assert framer.feed(b"\nthree") == [Frame(b"two\n", 4, True)]
    assert framer.finish() == [Frame(b"three", 8, True, single=True)]
    assert framer.offset == 13


def test_an_over_long_line_is_cut_at_a_character_boundary_and_marked() -> None:
    framer = LineFramer(visible_from=0, max_line=10)
    data = b"abcdefghi\xc3\xa9xyz" + b"q" * 25 + b"\nok\n"  # a cut at 10 would split the "é"
    frames = framer.feed(data)
    assert_exact(frames, data)
    assert [f.data for f in frames if f.cut] == [b"abcdefghi", b"\xc3\xa9xyz" + b"q" * 5,
                                                 b"q" * 10]
    assert frames[-1] == Frame(b"q" * 10 + b"\nok\n", 29, True)
    p = LogParser()
    events = LogFeed(p, LineFramer(visible_from=0, max_line=10)).feed(data)
    texts = [(e.text, is_cut(e)) for e in events if isinstance(e, LogLine)]
    assert texts == [("abcdefghi" + CUT_MARK, True), ("éxyz" + "q" * 5 + CUT_MARK, True),
                     ("q" * 10 + CUT_MARK, True), ("q" * 10, False), ("ok", False)]
    # the same line arriving in pieces (its start held as the partial line) is cut the same
    framer = LineFramer(visible_from=0, max_line=10)
    assert [f.data for f in feed_all(framer, data, [3, 12, 20]) if f.cut] == \
        [b"abcdefghi", b"\xc3\xa9xyz" + b"q" * 5, b"q" * 10]
    assert p.lineno == 5


def test_a_file_without_newlines_does_not_grow_memory() -> None:
    framer = LineFramer(max_line=1000, tail_lines=50, tail_bytes=5000)  # catching up forever
    out = 0
    for _ in range(2000):
        out += sum(len(f.data) for f in framer.feed(b"x" * 777))
        assert framer.partial <= 1000 and framer.held[1] <= 5000
    assert out + framer.held[1] + framer.partial == 2000 * 777


def test_held_catch_up_is_capped_in_lines_and_bytes() -> None:
    framer = LineFramer(tail_lines=100, tail_bytes=3000)
    line = b"0123456789abcdefghi\n"  # 20 bytes
    for _ in range(500):
        framer.feed(line * 37)
        held_lines, held_bytes = framer.held
        assert held_bytes <= 3000 and held_lines <= 100 + 37
    frames = framer.caught_up()
    shown = b"".join(f.data for f in frames if f.visible)
    assert shown == line * 100 and len(shown) <= 3000
    framer2 = LineFramer(tail_lines=1000, tail_bytes=3000)
    for _ in range(50):
        framer2.feed(line * 37)
    shown = b"".join(f.data for f in framer2.caught_up() if f.visible)
    assert shown == line * 150  # the byte cap (3000 bytes) wins over 1000 lines


def test_caught_up_shows_exactly_the_last_tail_lines_then_reads_are_visible() -> None:
    data = b"".join(b"line %d\n" % i for i in range(1000))
    framer = LineFramer(tail_lines=30)
    frames = feed_all(framer, data, list(range(0, len(data), 333)))
    assert all(not f.visible for f in frames)
    frames += framer.caught_up()
    assert_exact(frames, data)
    shown = b"".join(f.data for f in frames if f.visible)
    assert shown.splitlines() == data.splitlines()[-30:]
    live = framer.feed(b"next\n")
    assert live == [Frame(b"next\n", len(data), True)]
    burst = b"".join(b"b%d\n" % i for i in range(100))  # a burst larger than the tail
    got = framer.feed(burst)
    assert [f.visible for f in got] == [False, True]
    assert got[1].data.splitlines() == burst.splitlines()[-30:]


def test_offset_is_exact_across_rewind_and_restart() -> None:
    data = b"".join(b"message %04d\n" % i for i in range(200))
    framer = LineFramer(tail_lines=50)
    frames = framer.feed(data[:1234])
    frames += framer.feed(data[1234:2000])
    framer.rewind()  # the reader failed: held and partial lines are read again
    assert framer.catching_up and framer.held == (0, 0) and framer.partial == 0
    assert data[framer.offset - 1 : framer.offset] == b"\n" or framer.offset == 0
    frames += framer.feed(data[framer.offset :])
    frames += framer.caught_up()
    assert_exact(frames, data)
    restarted = framer.restart()
    assert restarted == [] and framer.offset == 0 and framer.catching_up
    assert framer.feed(b"new\n") == [] and framer.caught_up() == [Frame(b"new\n", 0, True)]


def test_restart_releases_what_was_held_first() -> None:
    framer = LineFramer(tail_lines=2)
    framer.feed(b"a\nb\nc\npart")
    frames = framer.restart()
    assert [(f.data, f.visible) for f in frames] == [(b"a\n", False), (b"b\nc\n", True)]
    assert framer.offset == 0 and framer.partial == 0


def test_visible_from_splits_at_a_byte_offset_without_holding() -> None:
    data = b"".join(b"row %02d\n" % i for i in range(20))  # 7 bytes a line
    framer = LineFramer(visible_from=7 * 12 + 3)  # inside line 12: line 13 is the first shown
    frames = feed_all(framer, data, [10, 50, 100])
    assert framer.held == (0, 0)
    assert_exact(frames, data)
    shown = b"".join(f.data for f in frames if f.visible)
    assert shown == data[7 * 13 :]


def test_a_start_inside_a_line_skips_to_the_next_line() -> None:
    data = b"first line\nsecond\nthird\n"
    framer = LineFramer(4, mid_line=True, visible_from=0)
    frames = framer.feed(data[4:9]) + framer.feed(data[9:])
    assert_exact(frames, data, start=11)
    assert [f.data for f in frames] == [b"second\nthird\n"]


def test_log_feed_thins_catch_up_stats_and_keeps_visible_lines_exact() -> None:
    decode = (b"[2025-11-20 10:15:00] Decode batch, #running-req: 1, #token: 10, "
              b"token usage: 0.01, accept len: 2.00, accept rate: 0.50, cuda graph: True, "
              b"gen throughput (token/s): 100.00, #queue-req: 0\n")
    data = b"[2025-11-20 10:14:38] Init torch distributed begin.\n" + decode * 3000
    feed = LogFeed(LogParser(), LineFramer(tail_lines=10))
    events = feed.feed(data) + feed.caught_up()
    assert feed.thinner is not None and feed.thinner.dropped > 1000
    shown = [e for e in events if isinstance(e, LogLine)]
    assert [e.lineno for e in shown] == list(range(2992, 3002))
    ref = LogParser()
    expected = [e for line in data.splitlines() for e in ref.feed_line(line)
                if isinstance(e, LogLine) and e.lineno > 2991]
    assert shown == expected


def test_bad_arguments_and_incomplete_lines_are_refused() -> None:
    with pytest.raises(ValueError):
        LineFramer(max_line=2)
    with pytest.raises(ValueError, match="complete lines"):
        LogParser().feed_lines(b"no newline")


def test_a_foreign_log_line_is_held_to_the_parsers_contract() -> None:
    clean = LogLine(3, "plain text", LineKind.WARNING, "h")
    assert held_to_contract(clean) is clean
    tabbed = LogLine(3, "a\tb", LineKind.PLAIN)
    assert held_to_contract(tabbed) is tabbed
    bad = held_to_contract(LogLine(4, "x\x1b]0;title\x07y\x00z", LineKind.ERROR, "h"))
    assert bad == LogLine(4, "xy\ufffdz", LineKind.ERROR, "h")
    long = held_to_contract(LogLine(5, "é" * (MAX_LINE_BYTES + 5)))
    assert len(long.text) == MAX_LINE_BYTES + len(CUT_MARK) and is_cut(long)
