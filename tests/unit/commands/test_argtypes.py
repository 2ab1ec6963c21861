"""The argparse types (``eagle_tui/commands/argtypes.py``): strict syntax, bounded values.

Every type either returns a value within its bounds or raises ``ArgumentTypeError`` with a
one-line reason (argparse turns it into exit 2); generated strings and the issue's examples
(a 21-digit ``--limit`` or ``--pid``) included.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.cli import main
from eagle_tui.commands import argtypes

NOT_NUMBERS = ["", " ", "1e999", "-1e999", "0x10", "1_0", "nan", "NaN", "inf", "-inf",
               "Infinity", "1.2.3", "١٢", "²", "1e", "--1", "+-1", "1 2", "0b1", "1j",
               "9" * 21, "100000000000000000000", "\x00", "1\x00"]
TYPES: dict[str, tuple[Callable[[str], float], float, float]] = {
    "seconds": (argtypes.seconds, 0.0, argtypes.MAX_SECONDS),
    "seconds_or_zero": (argtypes.seconds_or_zero, 0.0, argtypes.MAX_SECONDS),
    "rate": (argtypes.rate, 0.0, argtypes.MAX_RATE),
    "count": (argtypes.count, 1, argtypes.MAX_COUNT),
    "pid": (argtypes.pid, 1, argtypes.PID_MAX),
    "port": (argtypes.port, 1, 65_535),
    "port_or_any": (argtypes.port_or_any, 0, 65_535),
    "seed": (argtypes.seed, 0, 2**32 - 1),
}


def outcome(parse: Callable[[str], float], text: str) -> float | str:
    try:
        return parse(text)
    except argparse.ArgumentTypeError as exc:
        reason = str(exc)
        assert reason and "\n" not in reason and repr(text)[:20] in reason
        return reason


@pytest.mark.parametrize("name", sorted(TYPES))
def test_non_numbers_and_out_of_range_values_are_refused(name: str) -> None:
    parse, lo, hi = TYPES[name]
    for text in [*NOT_NUMBERS, "-1", str(hi * 10 + 1), "1.5" if isinstance(lo, int) else "-0.5"]:
        assert isinstance(outcome(parse, text), str), (name, text)
    assert outcome(parse, str(hi)) == hi
    assert outcome(parse, "1") == 1
    if name in ("seconds", "rate"):
        assert isinstance(outcome(parse, "0"), str)  # must be > 0
    if name in ("seconds_or_zero", "port_or_any", "seed"):
        assert outcome(parse, "0") == 0


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(TYPES)),
       st.one_of(st.text(max_size=30), st.integers().map(str),
                 st.floats(allow_nan=True, allow_infinity=True).map(repr),
                 st.from_regex(r"[+-]?[0-9_]{0,25}(\.[0-9]*)?([eE][+-]?[0-9]{0,5})?",
                               fullmatch=True)))
def test_every_type_returns_a_bounded_finite_value_or_a_reason(name: str, text: str) -> None:
    parse, lo, hi = TYPES[name]
    got = outcome(parse, text)
    if not isinstance(got, str):
        assert math.isfinite(got) and lo <= got <= hi


@pytest.mark.parametrize(("text", "ok"), [
    ("30s", True), ("5m", True), ("1h30m", True), ("250ms", True), ("10y", True),
    ("11y", False), ("0s", False), ("", False), ("5", False), ("5 m", False), ("m", False),
    ("9999999999s", False), ("1" * 30 + "s", False), ("5m'", False), ("-5m", False)])
def test_prometheus_ranges(text: str, ok: bool) -> None:
    try:
        assert argtypes.prom_range(text) == text and ok
    except argparse.ArgumentTypeError as exc:
        assert not ok and "\n" not in str(exc)


@pytest.mark.parametrize("argv", [
    ["runs", "list", "--limit", "100000000000000000000"],
    ["runs", "list", "--limit", "0x10"],
    ["watch", "--pid", "100000000000000000000"],
    ["wait", "--pid", "-1"],
    ["wait", "--log", "x.log", "--timeout", "1e999"],
    ["wait", "--log", "x.log", "--timeout", "nan"],
    ["demo", "--headless", "--speed", "inf"],
    ["demo", "--headless", "--port", "70000"],
    ["report", "x.log", "--workers", "1_0"],
    ["fleet", "--headless", "--window", "99999999999y"],
    ["bench", "--url", "http://127.0.0.1:9", "--timeout", "-1"],
    ["replay", "x.jsonl", "--speed", "0"],
])
def test_the_issue_examples_exit_2_with_one_line(argv: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"eagle-tui {argv[0]}") and "error: argument" in err[-1]


@pytest.mark.parametrize("command", [["watch", "--headless"], ["replay", "x.log"]])
def test_max_lines_is_refused_by_argparse_in_the_configs_range(
        command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """``--max-lines`` takes what ``[ui] max_lines`` takes: a value the dashboard would refuse
    is refused on the command line, with or without a dashboard (``1`` passed, then failed
    only once a dashboard opened)."""
    assert outcome(argtypes.log_lines, "100") == 100
    assert outcome(argtypes.log_lines, "1000000") == 1_000_000
    for text in ("1", "99", "1000001"):
        with pytest.raises(SystemExit) as exc:
            main([*command, "--max-lines", text])
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert "--max-lines: must be a number of log lines from 100 to 1,000,000" in err[-1]


def test_paths_too_long_or_with_nul_are_refused(tmp_path: object) -> None:
    for parse in (argtypes.path_text, argtypes.local_file_text):
        assert parse("x.log") == "x.log" and parse("-") == "-"
        for text in ["a" * 256, "/".join(["d"] * 2100), "a\x00b", "é" * 128]:
            assert isinstance(outcome(parse, text), str), text
    assert argtypes.path_text(str(tmp_path)) == str(tmp_path)  # perhaps a file on a remote host
    assert "is a directory" in str(outcome(argtypes.local_file_text, str(tmp_path)))


@pytest.mark.parametrize("argv", [
    ["replay", "a" * 300],
    ["report", "b" * 300],
    ["bench", "--url", "http://127.0.0.1:9", "--log", "/"],
    ["watch", "--log", "c" * 300],
    ["demo", "--record", "/"],
])
def test_odd_paths_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "error: argument" in capsys.readouterr().err
