"""A hypothesis fuzz of 10,000 hostile logs through the whole path to the rendered rows.

Each case is a log built from hostile pieces — random bytes, control bytes, CSI/OSC/DCS escape
sequences, Rich markup (``[bold]``, ``[/]``, ``[link=…]``), invalid UTF-8, numbers of hundreds
of digits, and engine-like lines (SGLang stats and milestones, vLLM metrics, tracebacks, access
lines) with their fields mutated — cut into reads at random places, and taken through what the
dashboard runs: the line framer and parser (``LogFeed``), the reducer (``reduce``), the log
buffer's rows and the highlighter, the status texts. Nothing may raise; no row, span or state
text may hold a raw control byte or ESC; every span stays inside its row; the buffer stays
within its bounds. The widget path itself (Textual's Line API to the terminal's segments) gets a
smaller set in ``tests/ui/test_ui_fuzz_render.py``.

``derandomize``: CI runs the same 10,000 cases each time (a failure reproduces); the cases are
small (a few hundred bytes to a few KB) so that 10,000 take about a minute on one core.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eagle_tui.model.buffers.logbuffer import LogBuffer
from eagle_tui.model.events import LogLine
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.logfeed import LogFeed
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.model.state import DashboardState
from eagle_tui.ui.cellwidth import settle
from eagle_tui.ui.highlight import highlight
from eagle_tui.ui.safety import inert, is_inert

CASES = int(os.environ.get("EAGLE_TUI_FUZZ_CASES", "10000"))
UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
FUZZ = settings(max_examples=CASES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

ESCAPES = [b"\x1b[2J", b"\x1b[31m", b"\x1b]0;pwned\x07", b"\x1b]8;;http://x\x1b\\",
           b"\x1bP1$q\x1b\\",
           b"\x1b[?1049l", b"\x9b31m", b"\x1b", b"\x1b[", b"\x1b]", b"\x07", b"\x08", b"\r",
           b"\x00", b"\x7f", b"\xc2\x9b", b"\xe2\x80\xae", b"\xe2\x80\xa8", b"\t"]
MARKUP = [b"[bold]", b"[/]", b"[/bold]", b"[link=http://x]", b"[red on blue]", b"[@click=quit]",
          b"\\[", b"[", b"]"]
INVALID = [b"\xff", b"\xfe\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\x80"]
STAMP = b"[2025-11-20 10:14:31 TP0] "
TEMPLATES = [
    STAMP + b"Decode batch, #running-req: {n}, #token: {n}, token usage: {f}, accept len: {f}, "
    b"gen throughput (token/s): {f}, #queue-req: {n}, ",
    STAMP + b"Prefill batch, #new-seq: {n}, #new-token: {n}, #cached-token: {n}, "
    b"token usage: {f}, #running-req: {n}, #queue-req: {n}, ",
    STAMP + b"Capturing batches (bs={n} avail_mem={f} GB): {n}%|{x}| {n}/{n} [00:01<00:00]",
    STAMP + b"Load weight end. type={x}, dtype=torch.bfloat16, avail mem={f} GB",
    STAMP + b"server_args=ServerArgs(speculative_algorithm='{x}', speculative_num_steps={n})",
    STAMP + b"Loading safetensors checkpoint shards: {n}% Completed | {n}/{n} [00:01<00:00]",
    b"(APIServer pid={n}) INFO 11-30 01:17:12 [metrics.py:1] SpecDecoding metrics: Mean "
    b"acceptance length: {f}, Accepted throughput: {f} tokens/s, Drafted: {n} tokens",
    b"(EngineCore pid={n}) INFO 11-30 01:17:12 [x.py:1] Capturing CUDA graphs (decode, FULL): "
    b"{n}%|{x}| {n}/{n}",
    b"Traceback (most recent call last):",
    b'  File "/sglang/srt/{x}.py", line {n}, in {x}',
    b"RuntimeError: CUDA out of memory. Tried to allocate {f} GiB",
    b"torch.OutOfMemoryError: {x}",
    b"INFO:     127.0.0.1:{n} - \"GET /health HTTP/1.1\" {n} OK",
    b"[EAGLE3-DEBUG] hidden_states shape=torch.Size([{n}, {n}])",
    STAMP + b"The server is fired up and ready to roll!",
    b"ERROR 11-30 01:17:12 [core.py:1] EngineCore failed to start.",
]
_numbers = st.one_of(st.integers(-5, 10**6).map(str), st.sampled_from(
    ["", "nan", "inf", "-inf", "1e999", "0x10", "1_0", "9" * 400, "-0", "1" * 40, "1.2.3"]))
_floats = st.one_of(st.floats(allow_nan=True).map(repr), _numbers)
_words = st.one_of(st.text(max_size=12).map(lambda s: s.encode("utf-8", "surrogatepass")),
                   st.sampled_from(MARKUP + ESCAPES + INVALID))


@st.composite
def engine_line(draw: st.DrawFn) -> bytes:
    line = draw(st.sampled_from(TEMPLATES))
    for key, strat in ((b"{n}", _numbers), (b"{f}", _floats)):
        while key in line:
            line = line.replace(key, draw(strat).encode(), 1)
    while b"{x}" in line:
        line = line.replace(b"{x}", draw(_words), 1)
    if draw(st.booleans()):  # mutate: a hostile piece somewhere in the line
        at = draw(st.integers(0, len(line)))
        line = line[:at] + draw(st.sampled_from(ESCAPES + MARKUP + INVALID)) + line[at:]
    return line


piece = st.one_of(
    engine_line(),
    engine_line(),
    st.binary(max_size=60),
    st.lists(st.sampled_from(ESCAPES + MARKUP + INVALID), max_size=8).map(b"".join),
    st.sampled_from([b"\n", b"\r\n", b"\r", b"\n\n"]),
    st.integers(1, 3000).map(lambda n: b"7" * n),
)


@st.composite
def hostile_log(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    parts = draw(st.lists(piece, min_size=1, max_size=10))
    data = b"".join(p + (b"\n" if draw(st.booleans()) else b"") for p in parts)
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=4)))
    return data, cuts


def _check_text(text: str, where: str) -> None:
    assert "\x1b" not in text and not UNSAFE.search(text), (where, text)


@FUZZ
@given(hostile_log())
def test_hostile_logs_reach_the_rendered_rows_inert(case: tuple[bytes, list[int]]) -> None:
    data, cuts = case
    feed = LogFeed(LogParser())
    events = []
    prev = 0
    for i, at in enumerate([*cuts, len(data)]):
        events += feed.feed(data[prev:at])
        prev = at
        if i == 0:
            events += feed.caught_up()
    events += feed.finish()
    state = reduce(DashboardState(), events)
    buf = LogBuffer(max_lines=64, max_bytes=1 << 16)
    lines = [e for e in events if type(e) is LogLine]
    for line in lines:
        _check_text(line.text, "LogLine")
    buf.append(lines)
    assert buf.line_count <= 64
    for y in range(buf.row_count):
        text = buf.row_text(y)
        _check_text(text, "row")
        assert inert(text) == settle(text.expandtabs(4)) and is_inert(text)
    for line in buf.lines:
        for span in highlight(line.text, line.kind):
            assert 0 <= span.start <= span.end <= len(line.text)
    for where, text in _texts(state, "state"):
        _check_text(text, where)


def _texts(value: object, where: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    """Every string the state holds (what the panes and status line draw from)."""
    if isinstance(value, str):
        yield where, value
    elif depth > 4 or value is None or isinstance(value, int | float | bytes):
        return
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(k, where, depth + 1)
            yield from _texts(v, f"{where}[{k!r}]", depth + 1)
    elif isinstance(value, list | tuple | frozenset | set):
        for v in value:
            yield from _texts(v, where, depth + 1)
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            yield from _texts(getattr(value, f.name), f"{where}.{f.name}", depth + 1)
