"""The sparse line index, the range reader and the file window (file-backed scrollback)."""

from __future__ import annotations

import random

import pytest

from eagle_tui.model.buffers.lineindex import LineIndex, RangeLines
from eagle_tui.model.buffers.linewindow import FileWindow, LinesRead, ReadLines, decode_lines
from eagle_tui.model.events import LineKind
from eagle_tui.model.ingest.framing import CUT_MARK


def _log(n: int, seed: int = 1) -> tuple[list[bytes], bytes]:
    rnd = random.Random(seed)
    lines = [b"line %d " % i + b"x" * rnd.randint(0, 80) for i in range(n)]
    return lines, b"\n".join(lines) + b"\n"


def _read(index: LineIndex, data: bytes, first: int, count: int) -> list[bytes]:
    offset, skip = index.seek(first)
    end = index.end_of(first + count - 1)
    rl = RangeLines(skip, count)
    rl.feed(data[offset:end])
    return rl.kept


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20])
def test_index_finds_every_line_whatever_the_chunks(chunk: int) -> None:
    lines, data = _log(3000)
    index = LineIndex(stride=16)
    for i in range(0, len(data), chunk):
        index.feed(data[i:i + chunk])
    assert index.lines == 3000 and index.scanned == len(data)
    assert index.tail_start == len(data)
    for first in (0, 1, 15, 16, 17, 1234, 2999):
        count = min(40, 3000 - first)
        assert _read(index, data, first, count) == lines[first:first + count]


def test_index_memory_is_bounded_whatever_the_file_size() -> None:
    lines, data = _log(200_000)
    index = LineIndex(stride=4, max_bytes=1024)  # 128 marks at most
    for i in range(0, len(data), 65536):
        index.feed(data[i:i + 65536])
    assert index.nbytes <= 1024
    assert index.stride > 4  # coarsened, and still exact
    for first in (0, 99_999, 199_990):
        assert _read(index, data, first, 10) == lines[first:first + 10]


def test_index_partial_last_line_is_not_a_line() -> None:
    index = LineIndex(stride=2)
    index.feed(b"a\nb\nc\npart")
    assert index.lines == 3
    assert index.tail_start == 6
    assert index.end_of(2) == 6
    with pytest.raises(IndexError):
        index.seek(4)


def test_range_lines_cuts_an_over_long_line_as_the_framer() -> None:
    rl = RangeLines(0, 3, max_line=10)
    for piece in (b"short\n", b"0123456789abc", b"def\n", b"\xc3\xa9" * 8 + b"\nend\n"):
        rl.feed(piece)
    assert rl.kept[0] == b"short"
    assert rl.kept[1] == b"0123456789"
    assert rl.kept[2] == b"\xc3\xa9" * 5  # backed up to a character boundary
    assert rl.cut == {1, 2}
    assert rl.done


def test_range_lines_stops_at_its_byte_budget() -> None:
    rl = RangeLines(1, 100, max_bytes=20)
    rl.feed(b"skipped\n" + b"x" * 15 + b"\n" + b"y" * 15 + b"\nz\n")
    assert rl.kept == [b"x" * 15, b"y" * 15]
    assert rl.done


def test_decode_lines_is_the_parsers_sanitizing_and_kinds() -> None:
    raw = [b"[2026-01-01 00:00:00] [EAGLE3-DEBUG] aux hidden",
           b"\x1b[31mERROR: boom\x1b[0m",
           b"x" * 10]
    lines = decode_lines(raw, 41, "h", cut={2})
    assert [ln.lineno for ln in lines] == [42, 43, 44]
    assert lines[0].kind is LineKind.DEBUG
    assert lines[1].kind is LineKind.ERROR and "\x1b" not in lines[1].text
    assert lines[2].text.endswith(CUT_MARK)
    assert all(ln.host == "h" for ln in lines)


def test_window_asks_once_and_fills() -> None:
    w = FileWindow("p", "", 100, read_lines=10)
    asks = w.wanted(0, 25, limit=30)
    assert asks == [ReadLines("p", "", 0, 10), ReadLines("p", "", 10, 10),
                    ReadLines("p", "", 20, 10)]
    assert w.wanted(0, 25) == []  # under way
    assert w.line(3) is None
    assert w.fill(LinesRead("p", "", 0, 10, decode_lines([b"a%d" % i for i in range(10)], 0)))
    assert w.line(3) is not None and w.line(3).text == "a3"  # type: ignore[union-attr]
    # a short answer: the rest is asked for again
    assert w.fill(LinesRead("p", "", 10, 10, decode_lines([b"b"] * 4, 10)))
    assert w.wanted(0, 20) == [ReadLines("p", "", 14, 6)]
    # an answer for a read the window forgot is ignored
    assert not w.fill(LinesRead("p", "", 500, 10, decode_lines([b"c"], 500)))
    assert w.fill(LinesRead("p", "", 20, 10, error="gone")) is False
    assert w.error == "gone"


def test_window_is_bounded_in_bytes() -> None:
    w = FileWindow("p", "", 0, max_bytes=10_000, read_lines=50)
    for first in range(0, 5000, 50):
        (ask,) = w.wanted(first, first + 50)
        w.fill(LinesRead("p", "", ask.first, ask.count,
                         decode_lines([b"y" * 100] * ask.count, ask.first)))
        assert w.bytes <= 10_000 + 50 * 200  # the newest piece always stays
    assert w.line(4999) is not None  # the newest is kept, the oldest went
    assert w.line(0) is None


def test_search_lines_first_last_and_sanitized() -> None:
    from eagle_tui.model.buffers.linewindow import search_lines
    from eagle_tui.userpattern import compile_query

    raw = [b"alpha", b"beta x", b"gamma", b"beta y", b"\x1b[31mdelta\x1b[0m"]
    pat = compile_query("beta")
    assert pat is not None
    assert search_lines(pat, raw) == 1
    assert search_lines(pat, raw, backward=True) == 3
    nope = compile_query("zeta")
    assert nope is not None and search_lines(nope, raw) is None
    across = compile_query(r"x\sgamma")  # matches across a newline only: no line matches
    assert across is not None and search_lines(across, raw) is None
    red = compile_query("delta")
    assert red is not None and search_lines(red, raw) == 4
    anchored = compile_query(r"^beta y$")
    assert anchored is not None and search_lines(anchored, raw) == 3
