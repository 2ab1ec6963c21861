"""Property tests: arbitrary input never raises, never leaks controls, stays bounded, and the
fast paths agree with the line-by-line path on generated logs of realistic and hostile lines."""

from __future__ import annotations

import io
import json
import re
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from eagle_tui.model.events import Event, LogLine
from eagle_tui.model.ingest.framing import MAX_LINE_BYTES, LineFramer
from eagle_tui.model.ingest.logfeed import LogFeed
from eagle_tui.model.ingest.normalize import normalize, sanitize
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.report import build_report, close
from eagle_tui.report import write_json as dump

UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(st.one_of(st.binary(max_size=400), st.text(max_size=400)))
def test_normalize_never_raises_and_never_leaks_controls(raw: str | bytes) -> None:
    n = normalize(raw)
    assert not UNSAFE.search(n.text)
    assert not UNSAFE.search(sanitize(raw))


@SETTINGS
@given(st.lists(st.one_of(st.binary(max_size=300), st.text(max_size=300)), max_size=30))
def test_feed_line_never_raises_and_log_lines_are_safe(lines: list[str | bytes]) -> None:
    p = LogParser()
    for line in lines:
        for ev in p.feed_line(line):
            if isinstance(ev, LogLine):
                assert not UNSAFE.search(ev.text)
    p.finish()
    assert p.lineno == len(lines)


@SETTINGS
@given(st.binary(max_size=5000), st.booleans())
def test_feed_chunk_never_raises(data: bytes, emit: bool) -> None:
    p = LogParser()
    feed = LogFeed(p, LineFramer(visible_from=0) if emit else LineFramer(tail_lines=0))
    for i in range(0, len(data), 97):
        feed.feed(data[i : i + 97])
    feed.finish()
    assert p.lineno == data.count(b"\n") + (not data.endswith(b"\n") and len(data) > 0)


def test_memory_stays_bounded_on_an_endless_line_and_many_distinct_lines() -> None:
    p = LogParser()
    feed = LogFeed(p, LineFramer(tail_lines=0))
    for _ in range(40):
        feed.feed(b"x" * 100_000)  # 4 MB without a newline
        assert feed.framer.partial <= MAX_LINE_BYTES + 100_000
    v = LogParser()  # (p's engine is SGLang from its first line: v reads the vLLM lines)
    for i in range(5000):
        p.feed_line(f"[2025-11-20 10:14:45] Load weight end. type=Arch{i}ForCausalLM, x")
        for q in (p, v):
            q.feed_line(f"(APIServer pid=1) INFO 10-30 14:18:55 [model.py:1] Resolved "
                        f"architecture: Arch{i}")
    assert "sglang" in p._parsers and "vllm" in v._parsers
    assert all(len(q._archs) <= 16  # type: ignore[attr-defined]
               for q in (*p._parsers.values(), *v._parsers.values()))


# ------------------------------------------------------------------------------ equivalence
num = st.floats(min_value=0, max_value=5000, allow_nan=False).map(lambda x: f"{x:.2f}")
stamp = st.sampled_from(["[2025-11-20 10:16:03] ", "[2025-11-20 10:16:03 TP0] ",
                         "[04:40:55 DP1 TP0] ", "[2026-01-01 00:00:00 TP0 EP0] "])
junk = st.text(alphabet=st.sampled_from(list("ab (),:.-=#[]\x1b\r\t\x9b█0123456789")),
               max_size=40)


@st.composite
def decode_line(draw: Any) -> str:
    fields = [f"#running-req: {draw(st.integers(0, 64))}", f"#token: {draw(st.integers(0, 10**6))}",
              f"token usage: {draw(num)}", f"gen throughput (token/s): {draw(num)}",
              f"#queue-req: {draw(st.integers(0, 9))}",
              draw(st.sampled_from(["cuda graph: True", "cpu graph: False", "npu graph: True"]))]
    if draw(st.booleans()):
        fields.insert(3, f"accept len: {draw(num)}")
        fields.insert(4, f"accept rate: {draw(num)}")
    if draw(st.booleans()):
        fields.insert(draw(st.integers(0, len(fields))), f"new field: {draw(junk)}")
    head: str = draw(st.sampled_from(["Decode batch. ", "Decode batch, ", "Decode batch [12], "]))
    tail: str = draw(st.sampled_from(["", ", "]))
    prefix: str = draw(stamp)
    return prefix + head + ", ".join(fields) + tail


line = st.one_of(
    decode_line(),
    st.builds(lambda s, n: f"{s}Prefill batch, #new-seq: 1, #new-token: {n}, #cached-token: 0, "
              "#running-req: 0, #queue-req: 0, ", stamp, st.integers(0, 9999)),
    st.builds(lambda d, n: f"[EAGLE3-DEBUG] hidden_states shape=torch.Size([{n}, {d}])",
              st.sampled_from([21504, 7168, 12288]), st.integers(1, 99)),
    st.builds(lambda s, j: f"{s}INFO:     10.0.0.7:51214 - \"POST /v1/x HTTP/1.1\" 200 OK{j}",
              stamp, junk),
    st.builds(lambda s, j: f"{s}[EAGLE3-DEBUG] {j} gen throughput (token/s): 1.50", stamp, junk),
    st.builds(lambda s, q: f'{s}INFO:     1.2.3.4:5 - "GET /x HTTP/1.1" 200 OK {q}', stamp,
              st.sampled_from(["accept len: 2.50", "gen throughput (token/s): 3.00",
                               "hidden_states shape=torch.Size([2, 7168])", "(token/s)"])),
    st.sampled_from([
        "[2025-11-20 10:14:40] Load weight begin. avail mem=78.58 GB",
        "[2025-11-20 10:15:02] The server is fired up and ready to roll!",
        "[2025-11-20 10:15:00] INFO:     Uvicorn running on http://0.0.0.0:30000",
        "Traceback (most recent call last):",
        '  File "/x.py", line 1, in f',
        "    raise RuntimeError('CUDA out of memory')",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
        "RuntimeError: NCCL error: unhandled system error",
        "[2025-11-20 11:02:17] Received sigquit from a child process.",
        "Killed",
        "(APIServer pid=1) INFO 10-30 14:20:17 [loggers.py:123] Engine 000: Avg prompt throughput:"
        " 4.2 tokens/s, Avg generation throughput: 187.3 tokens/s, Running: 1 reqs",
        "(APIServer pid=1) INFO 10-30 14:20:17 [metrics.py:96] SpecDecoding metrics: Mean "
        "acceptance length: 2.84, Accepted: 1214 tokens, Drafted: 1980 tokens",
        "INFO:     Application startup complete.",
        "",
    ]),
    junk,
)


def report(data: bytes, fast: bool) -> dict[str, Any]:
    r = build_report(io.BytesIO(data), "x", fast=fast)
    out = io.BytesIO()
    dump(r, out)
    close(r)
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def derived(data: bytes, fast: bool) -> list[Event]:
    p = LogParser()
    if fast:
        out = p.feed_lines(data, emit_lines=False)
    else:
        out = [e for ln in data.split(b"\n")[:-1] for e in p.feed_line(ln)
               if not isinstance(e, LogLine)]
    return out + p.finish()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(line, min_size=1, max_size=60))
# a traceback still open when a fragment's prefill batch has made the report's state serving:
# the quoted stats line must still move the parser's own phase to serving (its crash tracker
# reads it), or "0" becomes a fatal exception line on the fast path only
@example(["Traceback (most recent call last):",
          "[2025-11-20 10:16:03] Prefill batch, #new-seq: 1, #new-token: 0, #cached-token: 0, "
          "#running-req: 0, #queue-req: 0, ",
          "[2025-11-20 10:16:03] [EAGLE3-DEBUG]  gen throughput (token/s): 1.50", "0"])
def test_fast_paths_equal_line_by_line_on_generated_logs(lines: list[str]) -> None:
    data = ("\n".join(lines) + "\n").encode()
    assert report(data, fast=True) == report(data, fast=False)
    assert derived(data, fast=True) == derived(data, fast=False)
