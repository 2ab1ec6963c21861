"""Line normalization: escapes, controls, ``\\r`` redraws, UTF-8, wrapper prefixes."""

from __future__ import annotations

import re

import pytest

from eagle_tui.model.ingest.normalize import (
    REPLACEMENT,
    WRAP_JOINS,
    Reflow,
    collapse_cr,
    normalize,
    sanitize,
    strip_escapes,
    strip_wrappers,
)

UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("\x1b[36m(APIServer pid=1)\x1b[0m INFO x", "(APIServer pid=1) INFO x"),
        ("a\x1b[2Jb\x1b[?1049lc", "abc"),  # clear screen, leave alternate screen
        ("title\x1b]0;pwned\x07 after", "title after"),  # OSC ended by BEL
        ("x\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\y", "xlinky"),  # OSC 8 hyperlink, ST
        ("keep\x1b]0;never terminated", "keep"),  # unterminated OSC swallows the rest
        ("a\x1bPq#0;2;0;0;0\x1b\\b", "ab"),  # DCS (sixel) string
        ("a\x1b_apc\x07b\x1b^pm\x1b\\c\x1bXsos\x07d", "abcd"),  # APC, PM, SOS
        ("a\x1b(Bb\x1b7c\x1bcd", "abcd"),  # charset select, save cursor, reset
        ("8-bit \x9b31mred\x9b0m", "8-bit red"),  # C1 CSI
        ("c1 osc \x9d0;t\x9c ok", "c1 osc  ok"),
        ("trailing esc\x1b", "trailing esc"),
    ],
)
def test_escape_sequences_are_removed(raw: str, expected: str) -> None:
    assert sanitize(raw) == expected
    assert "\x1b" not in sanitize(raw)


@pytest.mark.parametrize("ch", ["\x00", "\x07", "\x08", "\x0b", "\x7f", "\x85", "\x9a",
                                "\u2028", "\u202e", "\u2066"])
def test_controls_are_replaced_not_kept(ch: str) -> None:
    out = sanitize(f"a{ch}b")
    assert out == f"a{REPLACEMENT}b"


def test_tab_and_unicode_text_survive() -> None:
    assert sanitize("col\tvalue █ 中文 ✓") == "col\tvalue █ 中文 ✓"


def test_invalid_utf8_decodes_with_replacement() -> None:
    assert sanitize(b"ok \xff\xfe bytes") == f"ok {REPLACEMENT}{REPLACEMENT} bytes"
    assert normalize(b"\xc3(").text == f"{REPLACEMENT}("


def test_strip_escapes_alone_keeps_cr_and_text() -> None:
    assert strip_escapes("a\x1b[1m\rb") == "a\rb"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Loading: 0%\rLoading: 50%\rLoading: 100%", "Loading: 100%"),
        ("INFO done\r", "INFO done"),  # CRLF output
        ("bar 100%\r          \r", "bar 100%"),  # tqdm clears with spaces
        ("\r\r", ""),
        ("no carriage return", "no carriage return"),
    ],
)
def test_cr_redraws_collapse_to_the_last_state(raw: str, expected: str) -> None:
    assert collapse_cr(raw) == expected


def test_tqdm_redraw_glued_to_a_log_line_keeps_the_log_line() -> None:
    raw = ("Capturing batches (bs=1 avail_mem=17.96 GB): 100%|██████████| 14/14 [00:04<00:00]"
           "\r[2025-11-20 10:14:51] Capture cuda graph end. Time elapsed: 4.57 s.")
    assert normalize(raw).text.startswith("[2025-11-20 10:14:51] Capture cuda graph end.")


@pytest.mark.parametrize(
    ("raw", "text", "process", "stamp"),
    [
        ("(APIServer pid=1624) INFO 09-24 20:55:18 [loggers.py:123] x",
         "INFO 09-24 20:55:18 [loggers.py:123] x", "APIServer", None),
        ("(EngineCore_DP0 pid=1944) ", "", "EngineCore_DP0", None),
        ("(ServeReplica:default:LLMServer pid=5) (EngineCore pid=7) INFO 1",
         "INFO 1", "EngineCore", None),
        ("(ServeReplica:default:VLLMDeployment) (RayWorkerWrapper pid=9, ip=10.0.0.2) hi",
         "hi", "RayWorkerWrapper", None),
        ("(Worker_TP2_EP2 pid=2080) (Worker_TP6_EP6 pid=2084) WARNING w",
         "WARNING w", "Worker_TP6_EP6", None),
        ("2025-11-20T10:16:03.123456789Z [2025-11-20 10:16:03] Decode batch",
         "[2025-11-20 10:16:03] Decode batch", None, "2025-11-20T10:16:03.123456789Z"),
        ("2025-11-20T10:16:03+02:00 hello", "hello", None, "2025-11-20T10:16:03+02:00"),
        ("sglang-1  | [2025-11-20 10:16:03] x", "[2025-11-20 10:16:03] x", None, None),
        ("svc_2 | 2025-01-01T00:00:00Z (APIServer pid=3) INFO y", "INFO y", "APIServer",
         "2025-01-01T00:00:00Z"),
        ("> [2025-11-20 10:14:40] Load weight begin.", "[2025-11-20 10:14:40] Load weight begin.",
         None, None),
        (">   | [04:40:55 TP0] Decode batch", "[04:40:55 TP0] Decode batch", None, None),
        ("> > nested quote", "nested quote", None, None),
        (">", "", None, None),
    ],
)
def test_wrappers_are_stripped(raw: str, text: str, process: str | None,
                               stamp: str | None) -> None:
    n = normalize(raw)
    assert (n.text, n.process, n.stamp) == (text, process, stamp)


@pytest.mark.parametrize(
    "line",
    [
        "Traceback (most recent call last):",
        "(most recent call last) is not a prefix",
        ">>> python prompt",
        "Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:01<00:01,  1.95it/s]",
        "2025-11-20 10:16:03,123 - INFO - plain python logging",
        "[2025-11-20 10:16:03] Decode batch, #running-req: 1",
    ],
)
def test_lines_that_only_look_like_wrappers_are_kept(line: str) -> None:
    assert normalize(line).text == line


def test_wrapper_stripping_is_bounded() -> None:
    raw = "> " * 10_000 + "x"
    assert strip_wrappers(raw).text.startswith("> ")  # stops after a few layers, no hang


def test_escape_inside_wrapper_and_message_together() -> None:
    raw = b"\x1b[36m(APIServer pid=1)\x1b[0m \x1b]0;t\x07INFO:     ok\r\n"
    n = normalize(raw)
    assert (n.text, n.process) == ("INFO:     ok", "APIServer")
    assert not UNSAFE.search(n.text)


# -- Reflow: repairs across lines, before parsing ---------------------------------------------
def _reflow() -> Reflow:
    from eagle_tui.model.ingest.parser import reflow

    return reflow()


SG = "[2025-01-01 10:00:00] "
VL = "INFO 01-01 10:00:00 [loggers.py:1] "


def test_reflow_leaves_clean_lines_alone() -> None:
    data = f"{SG}Decode batch. #running-req: 1\n{VL}hello\n  File \"x.py\", line 1\n".encode()
    assert _reflow().block(data) is data


def test_reflow_removes_caret_escapes_crlf_and_caret_m() -> None:
    data = f"^[[0;36m{SG}a^[[0m^M\n{VL}b\r\n".encode()
    assert _reflow().block(data) == f"{SG}a\n{VL}b\n".encode()


def test_reflow_splits_glued_records_at_the_second_prefix() -> None:
    r = _reflow()
    assert r.block(f"{SG}one{SG}two\n".encode()) == f"{SG}one\n{SG}two\n".encode()
    glued = f"(VllmWorker pid=1) {VL}one(VllmWorker pid=1) {VL}two\n".encode()
    assert r.block(glued) == f"(VllmWorker pid=1) {VL}one\n(VllmWorker pid=1) {VL}two\n".encode()
    tagged = f"(APIServer pid=1) {VL}one\n".encode()  # the tag before its own record: no split
    assert r.block(tagged) == tagged


def test_reflow_joins_hard_wraps_of_the_learned_width_within_a_budget() -> None:
    width = 90
    long = SG + "x" * 400
    wrapped = "\n".join(long[i:i + width] for i in range(0, len(long), width))
    short = SG + "y" * 30
    data = f"{wrapped}\n{short}\n{wrapped}\n{wrapped}\n".encode()  # three wrapped records
    r = _reflow()
    assert r.block(data) == f"{long}\n{short}\n{long}\n{long}\n".encode()
    assert r.width == width
    # two wrapped records, or one, say no width: nothing is joined
    assert _reflow().block(f"{wrapped}\n{wrapped}\n".encode()) == f"{wrapped}\n{wrapped}\n".encode()
    once = f"{(SG + 'x' * 100)[:width]}\n{(SG + 'x' * 100)[width:]}\n".encode()
    assert _reflow().block(once) == once
    # a line too long to be one wrapped line is joined only up to the budget
    huge = SG + "z" * (WRAP_JOINS + 4) * width
    pieces = [huge[i:i + width] for i in range(0, len(huge), width)]
    out = r.block(("\n".join(pieces) + "\n").encode()).decode().split("\n")
    assert len(out[0]) == (WRAP_JOINS + 1) * width and "".join(out) == huge


def test_reflow_does_not_join_records_or_indented_lines() -> None:
    line = SG + "a" * 68  # 90 characters, like the wrapped width
    data = f"{line}\n{line}\n  indented\n{line}\n{SG}b\n".encode()
    r = _reflow()
    r.width = len(line)
    assert r.block(data) == data


def test_the_live_feed_and_report_both_repair_before_parsing() -> None:
    import io

    from eagle_tui.model.events import DecodeStats
    from eagle_tui.model.ingest.parser import LogParser
    from eagle_tui.report import build_report, close, to_plain
    from tests.support.parsing import framed

    decode = "Decode batch, #running-req: 1, #token: 9, token usage: 0.00, accept len: {}, "\
             "gen throughput (token/s): 50.00, #queue-req: 0, "
    log = (f"^[[32m{SG}Load weight begin.^[[0m^M\n"
           f"{SG}Capture cuda graph begin.{SG}" + decode.format("2.50") + "\n"
           f"{SG}" + decode.format("3.50") + "\r\n").encode()
    events = framed(LogParser()).feed(log)
    assert [e.accept_len for e in events if isinstance(e, DecodeStats)] == [2.5, 3.5]
    report = build_report(io.BytesIO(log), "glued.log")
    try:
        plain = to_plain(report)
    finally:
        close(report)
    assert plain["accept_len"] == [2.5, 3.5] and plain["lines"] == 3  # the file's lines
    assert [p["phase"] for p in plain["phases"]][:2] == ["loading_weights", "cuda_graph"]


def test_torch_rank_and_vllm_worker_rank_prefixes_are_peeled() -> None:
    assert normalize('[rank0]:   File "x.py", line 1, in f').text == '  File "x.py", line 1, in f'
    n = normalize("(VllmWorker rank=2 pid=808339) ERROR 06-10 03:43:33 [x.py:1] boom")
    assert n.text == "ERROR 06-10 03:43:33 [x.py:1] boom" and n.process == "VllmWorker rank=2"
    cri = normalize("2025-07-25T07:53:08.21748708+08:00 stdout F [2025-07-25 07:53:08 TP2] x")
    assert cri.text == "[2025-07-25 07:53:08 TP2] x"


def test_reflow_leaves_fixed_width_tables_and_padded_frames_alone() -> None:
    row = '{"t": 1.0, "phase": "load", "gpu": 1, "mem_used": 31358582784, "mem_total": 1507548200}'
    table = "".join(f"{row}\n" for _ in range(6)).encode()  # equal lines, none a record
    assert _reflow().block(table) == table
    padded = f"{SG}{'e' * 60}{' ' * 30}│"
    frame = "".join(f"{padded}\n│ more\n" for _ in range(4)).encode()
    assert _reflow().block(frame) == frame
