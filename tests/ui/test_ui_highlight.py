"""Exact spans of the log highlighter (pure; no terminal)."""

from __future__ import annotations

import re

import pytest

from eagle_tui.model.events import LineKind
from eagle_tui.ui.highlight import HighlightRule, StyledSpan, highlight, prefix_end


def spans(text: str, kind: LineKind,
          rules: tuple[HighlightRule, ...] = ()) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], s.style) for s in highlight(text, kind, rules)]


def test_sglang_decode_line_numbers_and_prefix() -> None:
    line = ("[2025-11-20 10:14:51 TP0] Decode batch, #running-req: 4, accept len: 2.17, "
            "gen throughput (token/s): 178.86, #queue-req: 0")
    assert spans(line, LineKind.STATS) == [
        ("[2025-11-20 10:14:51 TP0] ", "log--timestamp"),
        ("4", "log--number"),
        ("2.17", "log--number"),
        ("178.86", "log--number"),
        ("0", "log--number"),
    ]


def test_vllm_prefix_with_wrapper_and_percent() -> None:
    line = ("(APIServer pid=330) INFO 11-30 00:10:20 [loggers.py:335] Engine 000: Avg generation "
            "throughput: 92.6 tokens/s, GPU KV cache usage: 0.3%")
    result = spans(line, LineKind.STATS)
    assert result[0] == ("(APIServer pid=330) INFO 11-30 00:10:20 [loggers.py:335] ",
                         "log--timestamp")
    assert ("92.6", "log--number") in result
    assert ("0.3%", "log--number") in result


def test_debug_line_is_distinct_and_tag_marked() -> None:
    line = "[EAGLE3-DEBUG] hidden_states shape=torch.Size([21, 21504])"
    assert highlight(line, LineKind.DEBUG) == (
        StyledSpan(0, len(line), "log--debug"),
        StyledSpan(0, 14, "log--debug-tag"),
    )


def test_error_line_message_after_prefix() -> None:
    line = "ERROR 11-30 00:10:20 [core.py:712] EngineCore failed to start."
    assert spans(line, LineKind.ERROR) == [
        ("ERROR 11-30 00:10:20 [core.py:712] ", "log--timestamp"),
        ("EngineCore failed to start.", "log--error"),
    ]


@pytest.mark.parametrize(
    ("kind", "style"),
    [(LineKind.WARNING, "log--warning"), (LineKind.MILESTONE, "log--milestone"),
     (LineKind.TRACEBACK, "log--traceback"), (LineKind.ACCESS, "log--access")],
)
def test_kind_styles_cover_the_message(kind: LineKind, style: str) -> None:
    assert spans("[2025-01-01 00:00:00] hello", kind) == [
        ("[2025-01-01 00:00:00] ", "log--timestamp"), ("hello", style)]


def test_plain_line_has_no_spans_and_numbers_only_in_stats() -> None:
    assert highlight("Loading shards 2/4", LineKind.PLAIN) == ()
    assert highlight("", LineKind.STATS) == ()


def test_uvicorn_level_prefix() -> None:
    assert prefix_end("INFO:     Started server process [191490]") == len("INFO:     ")


def test_user_rules_come_last_and_skip_empty_matches() -> None:
    rule = HighlightRule(re.compile(r"TP\d+|x*"), "bold magenta")
    line = "[2025-11-20 10:14:51] rank TP3 ok"
    assert spans(line, LineKind.PLAIN, (rule,))[-1] == ("TP3", "bold magenta")
    assert all(s.end > s.start for s in highlight(line, LineKind.PLAIN, (rule,)))


def test_rule_compile_errors_name_the_pattern() -> None:
    with pytest.raises(ValueError, match=r"'\(' is refused: missing \)"):
        HighlightRule.compile("(", "red")
    with pytest.raises(ValueError, match=r"'\(\?=a\)' is refused: lookaround"):
        HighlightRule.compile("(?=a)", "red")
    with pytest.raises(ValueError, match="empty pattern"):
        HighlightRule.compile("", "red")
