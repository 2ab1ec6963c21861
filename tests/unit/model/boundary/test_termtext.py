"""The one sanitizer (``model/termtext.inert``): generated text of every control and escape family.

Properties, for any string: no ESC, no C0 but TAB (and LF where allowed), no DEL, no C1, no bidi
override/isolate in the output; ``inert`` is idempotent; printable text is unchanged (the same
object). The three former sanitizers (log lines, widgets, the standard streams) are this one, so
the same properties hold for each entry. Work is linear: 8x the input costs ~8x, never ~64x.
"""

from __future__ import annotations

import json
import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.headless import streams
from eagle_tui.model.boundary.termtext import REPLACEMENT, inert, inert_json, is_inert
from eagle_tui.model.ingest import normalize
from eagle_tui.ui import safety

C0 = [chr(c) for c in range(0x20)] + ["\x7f"]
C1 = [chr(c) for c in range(0x80, 0xA0)]
SPOOF = ["\u2028", "\u2029", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))]
# Escape families, whole and cut short: CSI, OSC with BEL / ST / none, DCS, SOS, PM, APC, their
# 8-bit forms, two-byte escapes, a lone ESC, and the sequences that broke a terminal before.
FAMILIES = ["\x1b[2J", "\x1b[?1049l", "\x1b[38;5;1m", "\x1b[", "\x1b[12", "\x9b2J", "\x9b",
            "\x1b]0;PWNED\x07", "\x1b]0;PWNED\x1b\\", "\x1b]0;PWNED", "\x9d0;PWNED\x9c",
            "\x1b]8;;http://x\x1b\\", "\x1bPq#0\x1b\\", "\x1bP", "\x90q\x9c", "\x1bX sos \x1b\\",
            "\x98sos", "\x1b^pm\x1b\\", "\x9epm", "\x1b_apc\x1b\\", "\x9fapc", "\x1bc", "\x1b(B",
            "\x1b7", "\x1b#8", "\x1b", "\x07", "\r", "\n", "\t", "\x1b\x1b[", "\x1b]\x1b]"]
ALPHABET = st.sampled_from(C0 + C1 + SPOOF + FAMILIES + ["a", "Z", " ", "0", ";", "[", "]", "é",
                                                          "→", "漢", "\u200f", "\ufffd"])
TEXTS = st.one_of(st.lists(ALPHABET, max_size=40).map("".join), st.text(max_size=60))
BAD_LINE = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f{''.join(SPOOF)}]")
BAD_MULTI = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{''.join(SPOOF)}]")


@settings(max_examples=600, deadline=None)
@given(TEXTS)
def test_one_line_output_holds_nothing_a_terminal_acts_on(text: str) -> None:
    for out in (inert(text), normalize.sanitize(text), safety.inert(text)):
        assert "\x1b" not in out
        assert BAD_LINE.search(out) is None, ascii(out)
        assert is_inert(out)
        assert inert(out) == out  # idempotent


@settings(max_examples=600, deadline=None)
@given(TEXTS)
def test_several_lines_keep_newlines_and_tabs_only(text: str) -> None:
    for out in (inert(text, newlines=True), streams.inert(text)):
        assert BAD_MULTI.search(out) is None, ascii(out)
        assert inert(out, newlines=True) == out
        assert out.count("\n") <= text.count("\n")


@given(st.text(max_size=60).filter(str.isprintable))
def test_printable_text_is_returned_unchanged(text: str) -> None:
    assert inert(text) is text
    assert inert(text, newlines=True) is text
    assert normalize.sanitize(text) == text


@given(st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=30),
       st.sampled_from(FAMILIES[:-4]))
def test_a_sequence_is_removed_whole_around_plain_text(text: str, seq: str) -> None:
    out = inert(f"{text}{seq}{text}", newlines=True)
    assert "PWNED" not in out and "sos" not in out and "apc" not in out
    assert out.startswith(inert(text, newlines=True))


def test_the_issue_examples() -> None:
    assert inert("model\x1b]0;PWNED\x07-id\x1b[2J") == "model-id"
    assert inert("a\x9b2Jb\x9d0;x\x9cc") == "abc"
    assert inert("bell\x07") == "bell" + REPLACEMENT
    assert inert("line1\nline2") == f"line1{REPLACEMENT}line2"
    assert inert("line1\nline2", newlines=True) == "line1\nline2"
    assert inert("\u202eevil\u202c") == f"{REPLACEMENT}evil{REPLACEMENT}"
    assert inert("שלום\u200f") == "שלום\u200f"  # a mark acts on one character: kept
    assert inert("\x1b]0;title\nrest", newlines=True) == "\nrest"  # never swallows past a line


@given(st.recursive(st.none() | st.booleans() | st.integers() | TEXTS,
                    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(TEXTS, kids,
                                                                              max_size=3),
                    max_leaves=8))
def test_json_lines_are_inert_and_decode_to_the_same_value(value: object) -> None:
    out = inert_json(value)
    assert "\n" not in out and BAD_LINE.search(out) is None
    assert json.loads(out) == value


def _cost(text: str) -> float:
    start = time.process_time()
    for _ in range(5):
        inert(text, newlines=True)
        normalize.sanitize(text)
    return time.process_time() - start


def test_work_is_linear_in_the_text() -> None:
    for unit in ("\x1b[1", "\x1b]", "\x9b1;", "\x00", "\x1b", "a\x07", "\x1bP1"):
        small, big = unit * 4_000, unit * 32_000
        ratio = min(_cost(big) / max(_cost(small), 1e-6) for _ in range(3))
        assert ratio < 24, (ascii(unit), ratio)
