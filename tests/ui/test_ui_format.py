"""Formatting helpers and the sanitizer guard (pure)."""

from __future__ import annotations

import math

from eagle_tui.ui.format import (
    NA,
    bar,
    fmt_bytes,
    fmt_clock,
    fmt_duration,
    fmt_num,
    fmt_pct,
    sparkline,
    truncate,
)
from eagle_tui.ui.safety import REPLACEMENT, inert, is_inert


def test_durations() -> None:
    assert fmt_duration(4.567) == "4.6s"
    assert fmt_duration(75) == "1:15"
    assert fmt_duration(3725) == "1:02:05"
    assert fmt_duration(None) == NA
    assert fmt_duration(-1) == NA
    assert fmt_clock(5) == "0:05"
    assert fmt_clock(math.nan) == NA


def test_numbers_and_sizes() -> None:
    assert fmt_num(178.856, 1) == "178.9"
    assert fmt_num(None) == NA
    assert fmt_pct(0.457, 1) == "45.7%"
    assert fmt_bytes(512) == "512 B"
    assert fmt_bytes(int(3.4 * 1024**3)) == "3.4 GiB"
    assert fmt_bytes(150 * 1024**3) == "150 GiB"
    assert fmt_bytes(2 * 1024**4) == "2.0 TiB"


def test_bar_exact_width_and_eighths() -> None:
    assert bar(0.5, 8) == "████    "
    assert bar(1.0, 4) == "████"
    assert bar(0.0, 3) == "   "
    assert bar(1 / 16, 2) == "▏ "
    assert bar(None, 3) == "   "
    assert bar(7.0, 2) == "██"
    assert all(len(bar(f / 100, 13)) == 13 for f in range(101))


def test_sparkline_scale_and_padding() -> None:
    assert sparkline([0, 50, 100], 3, 0, 100) == "▁▅█"
    assert sparkline([5, 5, 5], 5) == "  ▁▁▁"
    assert sparkline([1, 2, 3, 4], 2) == "▁█"
    assert sparkline([], 4) == "    "
    assert sparkline([math.nan, 1.0], 2, 0, 1) == " █"


def test_truncate() -> None:
    assert truncate("abcdef", 4) == "abc…"
    assert truncate("abc", 4) == "abc"
    assert truncate("abc", 0) == ""


def test_inert_strips_escapes_and_controls() -> None:
    evil = "a\x1b]0;pwned\x07b\x1b[2Jc\x1b[?1049ld\x9bXe\x00f\rg"
    out = inert(evil)
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert out.startswith("abcd")
    assert out.endswith(f"{REPLACEMENT}f{REPLACEMENT}g")
    assert is_inert(out)


def test_inert_keeps_clean_text_identical_and_expands_tabs() -> None:
    clean = "[2025-11-20 10:14:51] Decode batch, accept len: 2.17 ✓ 日本"
    assert inert(clean) is clean
    assert inert("a\tb") == "a   b"
