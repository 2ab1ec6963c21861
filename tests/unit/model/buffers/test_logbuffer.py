"""The model's log buffer: bounds (lines and bytes), rows, filter, search, hosts, first error."""

from __future__ import annotations

import pytest

from eagle_tui.model.buffers.logbuffer import (
    ENTRY_BYTES,
    LogBuffer,
    is_error_line,
)
from eagle_tui.model.buffers.query import literal_query
from eagle_tui.model.events import LineKind, LogLine
from eagle_tui.userpattern import compile_query


def lines(start: int, n: int, kind: LineKind = LineKind.PLAIN, text: str = "line",
          host: str = "") -> list[LogLine]:
    return [LogLine(i, f"{text} {i}", kind, host) for i in range(start, start + n)]


def cut3(text: str, width: int) -> list[tuple[int, int]]:
    return [(i, min(i + width, len(text))) for i in range(0, max(1, len(text)), width)]


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LogBuffer(0)
    with pytest.raises(ValueError):
        LogBuffer(10, max_bytes=0)


def test_prunes_by_lines_and_skips_ahead_on_a_huge_batch() -> None:
    b = LogBuffer(100)
    assert b.append([]) is None
    for start in range(1, 251, 50):
        b.append(lines(start, 50))
    assert b.line_count == 100 and b.dropped == 150 and b.skipped == 0
    assert b.lines[0].lineno == 151 and b.end_seq == 250
    done = b.append(lines(251, 130))
    assert done is not None and b.skipped == 30 and b.line_count == 100
    assert b.lines[0].lineno == 281 and b.lines[-1].lineno == 380


def test_prunes_by_bytes_and_always_keeps_the_newest_line() -> None:
    size = len("line 1") + ENTRY_BYTES
    b = LogBuffer(1000, max_bytes=3 * size)
    b.append(lines(1, 5))
    assert [e.lineno for e in b.lines] == [3, 4, 5] and b.bytes == 3 * size
    b.append([LogLine(6, "x" * 10_000)])  # one line bigger than the whole budget
    assert [e.lineno for e in b.lines] == [6] and b.dropped == 5
    assert b.bytes == 10_000 + ENTRY_BYTES


def test_a_file_without_newlines_cannot_grow_the_buffer() -> None:
    b = LogBuffer(1_000_000, max_bytes=1 << 20)
    for i in range(100):
        b.append([LogLine(i + 1, "y" * 100_000)])
    assert b.bytes <= 1 << 20 and b.line_count == 10


def test_rows_filter_and_wrap() -> None:
    b = LogBuffer(100)
    b.append([LogLine(1, "alpha one"), LogLine(2, "beta two"), LogLine(3, "ALPHA three")])
    assert b.rows is None and b.row_count == 3 and b.row_text(1) == "beta two"
    assert b.set_filter("alpha") and not b.set_filter("alpha")
    assert b.narrowed and b.row_count == 2 and b.row_text(1) == "ALPHA three"
    b.add_special("──── marker ────")
    assert b.row_count == 3  # separators are never filtered out
    b.set_wrap(True, 4, cut3)
    assert b.row_count == 3 + 3 + 4 and b.row(0) == (0, 0, 4) and b.row(1) == (0, 4, 8)
    b.set_filter("")
    b.set_wrap(False, 0)
    assert b.rows is None and b.row_count == 4
    assert b.row_of_seq(2) == 2 and b.row_of_seq(9) is None


def test_rows_are_pruned_with_their_entries() -> None:
    b = LogBuffer(3)
    b.set_filter("line")
    b.append(lines(1, 3))
    done = b.append(lines(4, 2))
    assert done is not None and done.added_rows == 2 and done.removed_rows == 2
    assert b.rows == [(2, 0, 6), (3, 0, 6), (4, 0, 6)]
    assert b.visible_seqs() == [2, 3, 4]


def test_find_wraps_and_skips_separators() -> None:
    b = LogBuffer(100)
    b.append([LogLine(1, "hit a"), LogLine(2, "miss"), LogLine(3, "hit b")])
    b.add_special("hit marker")
    assert b.find(True, -1) == (None, False)  # no query yet
    assert b.set_search("hit")
    assert b.find(True, -1) == (0, False)
    assert b.find(True, 0) == (2, False)
    assert b.find(True, 2) == (0, True)  # past the separator, around to the top
    assert b.find(False, 0) == (2, True)
    b.cursor = 2
    assert b.cursor_lineno == 3


def test_hosts_selection_and_stream_count() -> None:
    b = LogBuffer(100)
    done = b.append(lines(1, 2, host="node-a"))
    assert done is not None and done.new_host and b.hosts.seen == ["node-a"]
    called: list[int] = []
    done = b.append([*lines(1, 2, host="node-b"), *lines(3, 1, host="node-a")],
                    lambda: called.append(1))
    assert done is not None and done.new_host and called == [1]
    assert b.hosts.seen == ["node-a", "node-b"] and b.hosts.multi and b.hosts.stream == 3 + 2
    b.add_special("restart of no host")
    b.select_host("node-b")
    b.rebuild_rows()
    assert [b.entry(s).text for s in b.visible_seqs()] == ["line 1", "line 2",
                                                           "restart of no host"]
    assert b.hosts.following() is None and b.hosts.label == "node-b"
    b.select_host("unknown")
    assert b.hosts.selected is None and b.hosts.following() == "node-a"
    assert b.seq_of_lineno(1) == 2  # the newest line 1 (node-b's)
    b.select_host("node-a")
    assert b.seq_of_lineno(1) == 0 and b.seq_of_lineno(99) is None


def test_first_error_is_the_first_buffered_error_until_pruned() -> None:
    b = LogBuffer(4)
    b.append(lines(1, 2))
    assert b.first_error is None
    b.append([LogLine(3, "Traceback", LineKind.TRACEBACK), LogLine(4, "boom", LineKind.ERROR)])
    assert b.first_error == 2 and is_error_line(b.entry(2)) and is_error_line(b.entry(3))
    b.append(lines(5, 2))
    assert b.first_error == 2
    b.append(lines(7, 1))
    assert b.first_error is None  # pruned: the state's first_error_line still names it


def test_compile_query_is_smart_case_and_literal_when_not_a_regex() -> None:
    assert compile_query("") is None
    pat = compile_query("[EAGLE3")
    assert pat is not None and pat.search("x [EAGLE3-DEBUG]")
    pat = compile_query("Error")
    assert pat is not None and not pat.search("ERROR")


def test_a_buffer_searches_with_the_compiler_it_is_given() -> None:
    """The model's default takes every query literally; the view hands in the RE2 compiler,
    and a query it refuses hides nothing, finds nothing and keeps its reason."""
    b = LogBuffer(10)
    assert b.compile is literal_query
    b.append(lines(0, 3, text="a.c"))
    b.set_filter("a.c")
    assert b.row_count == 3
    b.set_filter("x.z")
    assert b.row_count == 0
    b = LogBuffer(10, compile=compile_query)
    b.append(lines(0, 3, text="abc"))
    b.set_filter("a.c")
    assert b.row_count == 3 and b.filter_error == ""
    b.set_filter("(?<=a)bc")
    assert b.filter is None and "lookaround" in b.filter_error and b.row_count == 3
    b.set_search(r"(a)\1")
    assert b.search is None and "backreferences" in b.search_error
    assert b.find(True, -1) == (None, False)
