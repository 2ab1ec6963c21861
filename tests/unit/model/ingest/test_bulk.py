"""The chunk path (``feed_lines(emit_lines=True)``, ``bulk``) against ``feed_line``.

``feed_line`` one line at a time is the reference: whatever the chunk boundaries, the chunk path
must give exactly its events (same ``LogLine`` text/kind/lineno/host, same derived events, same
order). The fast ``Decode``/``Prefill`` field shapes must give what key:value splitting gives.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eagle_tui.model.engines.sglang.logs import (
    DECODE_FIELDS,
    PREFILL_FIELDS,
    decode_stats,
    decode_stats_generic,
    prefill_stats,
    prefill_stats_generic,
)
from eagle_tui.model.events import DecodeStats, Event, LineKind, LogLine, PrefillStats
from eagle_tui.model.ingest import bulk
from eagle_tui.model.ingest.parser import LogParser
from tests.support.bench import bench_module
from tests.support.parsing import framed
from tests.support.paths import TESTS


def line_pool(n: int) -> list[bytes]:
    """The benchmark's line mix (``benchmarks/bench_tui.py``)."""
    return bench_module("bench_tui").line_pool(n)  # type: ignore[no-any-return]


FIXTURES = TESTS / "fixtures"


def repaired(data: bytes, cuts: list[int]) -> list[tuple[bytes, bool]]:
    """(line, cut) as the live feed hands them to the parser: framed at ``cuts``, each frame
    repaired (``LogParser.repair``, its state kept across frames) as ``LogFeed`` does."""
    from eagle_tui.model.ingest.framing import LineFramer

    fixer, framer = LogParser(), LineFramer(visible_from=0)
    frames = []
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        frames += framer.feed(data[start:cut])
        start = max(start, cut)
    out: list[tuple[bytes, bool]] = []
    for f in [*frames, *framer.finish()]:
        if f.single and f.cut:
            out.append((f.data, True))
        elif f.single:
            out += [(line, False) for line in fixer.repair(f.data + b"\n")[:-1].split(b"\n")]
        else:
            out += [(line, False) for line in fixer.repair(f.data)[:-1].split(b"\n")]
    return out


def by_line(data: bytes, host: str = "", cuts: list[int] | None = None) -> list[Event]:
    """The reference: the lines the live feed parses (``repaired``), each alone."""
    p = LogParser(host)
    out = [e for line, cut in repaired(data, cuts or []) for e in p.feed_line(line, cut=cut)]
    return out + p.finish()


def by_chunk(data: bytes, cuts: list[int], host: str = "") -> list[Event]:
    p = framed(LogParser(host))
    out: list[Event] = []
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        out.extend(p.feed(data[start:cut]))
        start = max(start, cut)
    return out + p.finish()


def assert_same(data: bytes, cuts: list[int]) -> None:
    expected = by_line(data, "h1", cuts)
    got = by_chunk(data, cuts, "h1")
    assert len(got) == len(expected)
    for i, (a, b) in enumerate(zip(got, expected, strict=True)):
        assert a == b, (i, a, b)


def fixture_logs() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file())


@pytest.mark.parametrize("path", fixture_logs(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_file_at_several_chunk_sizes(path: Path) -> None:
    data = path.read_bytes()
    for size in (1, 7, 100, 4096, 1 << 16):
        assert_same(data, list(range(size, len(data), size)))


def test_bench_mix_and_the_fast_shapes_are_used() -> None:
    data = b"".join(line_pool(4000))
    assert_same(data, list(range(1 << 14, len(data), 1 << 14)))
    assert_same(data, list(range(333, len(data), 333)))
    rows = bulk._ROW.findall(data.decode())
    shapes = {max(r[bulk.SHAPE], r[bulk.DEBUG_SHAPE], r[bulk._ACCESS_SHAPE])
              for r in rows}
    assert shapes == {"D", "P", "I", "E"}  # no line of the mix falls to parse_line


def test_catch_up_and_visible_paths_agree_on_derived_events() -> None:
    data = b"".join(line_pool(3000)) + b"".join((FIXTURES / "samples").glob("*.log").__next__()
                                                .read_bytes().splitlines(keepends=True))
    visible = [e for e in by_chunk(data, [5000, 90000]) if not isinstance(e, LogLine)]
    p = LogParser("h1")
    fast = p.feed_lines(data, emit_lines=False) + p.finish()
    assert visible == fast


# ------------------------------------------------------------------ generated logs
odd = st.sampled_from(["0", "00.5", "1.", ".5", "1e3", "inf", "nan", "1.2.3", "", "007",
                       "12345678901234567", "9" * 400, "-1", "5%", " 2", "1_0"])
# mostly (9 in 10) what servers print, so that the fast shapes are hit; sometimes anything
num = st.integers(0, 9).flatmap(lambda i: odd if i == 0 else st.floats(
    min_value=0, max_value=5000, allow_nan=False).map(lambda x: f"{x:.2f}"))
count = st.integers(0, 9).flatmap(lambda i: odd if i == 0 else st.integers(0, 10**6).map(str))
stamp = st.sampled_from(["[2025-11-20 10:16:03] ", "[2025-11-20 10:16:03 TP0] ",
                         "[04:40:55 DP1 TP0] ", "[2026-01-01 00:00:00 TP0 EP0] ", "[04:40:55] ",
                         "[2025-11-20 10:16:03 DP0 PP1 TP3 EP0] ", "[1234567890123456789] ",
                         "", "(EngineCore pid=7) ", "[2025-11-20 10:16:03 tp0] "])
junk = st.text(alphabet=st.sampled_from(list("ab (),:.-=#[]\x1b\r\t\x7f\x9b█é0123456789")),
               max_size=30)


@st.composite
def decode_line(draw: Any) -> str:
    tokens = draw(st.sampled_from(["#token", "#full token"]))
    usage = draw(st.sampled_from(["token usage", "full token usage"]))
    fields = [f"#running-req: {draw(count)}", f"{tokens}: {draw(count)}", f"{usage}: {draw(num)}"]
    if draw(st.booleans()):
        fields.append(f"accept len: {draw(num)}")
    if draw(st.booleans()):
        fields.append(f"accept rate: {draw(num)}")
    if draw(st.booleans()):
        graph = draw(st.sampled_from(["cuda graph", "cpu graph", "npu graph"]))
        fields.append(f"{graph}: {draw(st.sampled_from(['True', 'False'] * 3 + ['true', '']))}")
    fields += [f"gen throughput (token/s): {draw(num)}", f"#queue-req: {draw(count)}"]
    if draw(st.integers(0, 3)) == 0:  # reordered
        fields = draw(st.permutations(fields))
    if draw(st.integers(0, 3)) == 0:  # an extra or repeated field
        extra = draw(st.sampled_from(["mamba num: 36", "#swa token: 5", "accept len: 9.99",
                                      "pre-allocated usage: 0.1", "#running-req: 77"]))
        fields.insert(draw(st.integers(0, len(fields))), extra)
    head = draw(st.sampled_from(["Decode batch. ", "Decode batch, ", "Decode batch [12], ",
                                 "Decode batch, ", "Decode batch,", "Decode batch; "]))
    tail = draw(st.sampled_from(["", ", ", ",", "", ", ", " ", ", , "]))
    return str(draw(stamp) + head + ", ".join(fields) + tail)


@st.composite
def prefill_line(draw: Any) -> str:
    fields = [f"#new-seq: {draw(count)}", f"#new-token: {draw(count)}",
              f"#cached-token: {draw(count)}"]
    if draw(st.booleans()):
        fields.append(f"cache hit rate: {draw(num)}%")
    fields += [f"token usage: {draw(num)}", f"#running-req: {draw(count)}",
               f"#queue-req: {draw(count)}"]
    if draw(st.booleans()):
        fields += ["cuda graph: True", f"input throughput (token/s): {draw(num)}"]
    if draw(st.integers(0, 3)) == 0:
        fields = draw(st.permutations(fields))
    head = draw(st.sampled_from(["Prefill batch. ", "Prefill batch, ", "Prefill batch [3], "]))
    return str(draw(stamp) + head + ", ".join(fields) + draw(st.sampled_from(["", ", "])))


line = st.one_of(
    decode_line(),
    prefill_line(),
    st.builds(lambda d, n, t: f"[EAGLE3-DEBUG] hidden_states shape=torch.Size([{n}, {d}]){t}",
              st.sampled_from(["21504", "7168", "12288", "012288", "9" * 30]),
              st.integers(1, 99),
              st.sampled_from(["", " dtype=torch.bfloat16", " x", " (token/s)"])),
    st.builds(lambda s, j: f'{s}INFO:     10.0.0.7:51214 - "POST /v1/x HTTP/1.1" 200 OK{j}',
              stamp, st.one_of(junk, st.sampled_from(["accept len: 2.50", "(token/s)", "] x",
                                                      "hidden_states shape=torch.Size([2, 7])",
                                                      " gen throughput (token/s): 3.00"]))),
    st.builds(lambda s, j: f"{s}[EAGLE3-DEBUG] {j} gen throughput (token/s): 1.50", stamp, junk),
    st.sampled_from([
        "[2025-11-20 10:14:40] Load weight begin. avail mem=78.58 GB",
        "[2025-11-20 10:15:02] The server is fired up and ready to roll!",
        "[2025-11-20 10:15:00] INFO:     Uvicorn running on http://0.0.0.0:30000",
        "Traceback (most recent call last):",
        '  File "/x.py", line 1, in f',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
        "Killed",
        "(APIServer pid=1) INFO 10-30 14:20:17 [loggers.py:123] Engine 000: Avg prompt "
        "throughput: 4.2 tokens/s, Avg generation throughput: 187.3 tokens/s, Running: 1 reqs",
        "(APIServer pid=1) INFO:     127.0.0.1:5 - \"GET /metrics HTTP/1.1\" 200 OK",
        "[bold red]Rich markup[/] [link=x]y[/link]",
        "\tindented\twith tabs",
        "",
    ]),
    junk,
)
raw_line = st.one_of(line.map(str.encode),
                     st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"")),
                     st.sampled_from([b"\xff\xfe bad utf-8 [2025-11-20 10:16:03] Decode batch",
                                      b"[2025-11-20 10:16:03] Decode batch, #running-req: 1\xe2",
                                      b"progress 10%\rprogress 50%\r", b"\x1b]0;title\x07x",
                                      b"crlf line\r"]))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(raw_line, min_size=1, max_size=50), st.lists(st.integers(0, 4000), max_size=6),
       st.booleans())
def test_generated_logs_at_arbitrary_chunk_boundaries(lines: list[bytes], cuts: list[int],
                                                      newline_at_end: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if newline_at_end else b"")
    assert_same(data, [c for c in cuts if c <= len(data)])


def test_a_one_megabyte_line_among_bulk_lines() -> None:
    pool = b"".join(line_pool(200))
    data = pool + b"[2025-11-20 10:16:03] " + b"x" * 1_000_000 + b"\n" + pool
    assert_same(data, list(range(65536, len(data), 65536)))


# ------------------------------------------------------------------ fast field shapes
CORPUS = FIXTURES / "corpus"  # pasted excerpts: glued and cut lines are kept on purpose


def fixture_lines(word: str, *, damaged: bool = True) -> list[str]:
    return [ln for p in fixture_logs() if damaged or not p.is_relative_to(CORPUS)
            for ln in p.read_text("utf-8", "replace").splitlines() if word in ln]


def test_fast_decode_fields_agree_with_splitting_on_fixture_lines() -> None:
    lines = fixture_lines("Decode batch")
    assert lines
    for ln in lines:
        assert decode_stats(ln, 3, "t", ln) == decode_stats_generic(ln, 3, "t", ln)
    whole = fixture_lines("Decode batch", damaged=False)
    # every Decode line an engine wrote whole has a fast shape
    assert whole and all(DECODE_FIELDS.search(ln) is not None for ln in whole)


def test_fast_prefill_fields_agree_with_splitting_on_fixture_lines() -> None:
    lines = fixture_lines("Prefill batch")
    assert lines
    for ln in lines:
        assert prefill_stats(ln, 3, "t") == prefill_stats_generic(ln, 3, "t")
        assert PREFILL_FIELDS.search(ln) is not None


@settings(max_examples=400, deadline=None)
@given(decode_line())
def test_fast_decode_fields_agree_with_splitting(text: str) -> None:
    assert decode_stats(text, 1, None, text) == decode_stats_generic(text, 1, None, text)


@settings(max_examples=300, deadline=None)
@given(prefill_line())
def test_fast_prefill_fields_agree_with_splitting(text: str) -> None:
    assert prefill_stats(text, 1, None) == prefill_stats_generic(text, 1, None)


def test_generated_decode_lines_mostly_take_the_fast_shape() -> None:
    hits = []

    @settings(max_examples=300, deadline=None, database=None)
    @given(decode_line(), prefill_line())
    def draw(decode: str, prefill: str) -> None:
        hits.append((DECODE_FIELDS.search(decode) is not None,
                     PREFILL_FIELDS.search(prefill) is not None))

    draw()
    assert sum(d for d, _ in hits) > len(hits) / 8 and sum(p for _, p in hits) > len(hits) / 8


@pytest.mark.parametrize("text", [
    "Decode batch, #running-req: 9, #token: 11584, token usage: 0.01, accept len: 3.04, "
    "accept rate: 0.68, cuda graph: True, gen throughput (token/s): 22.40, #queue-req: 1",
    "Decode batch. #running-req: 1, #full token: 108, full token usage: 0.00, cpu graph: False, "
    "gen throughput (token/s): 0.39, #queue-req: 0, ",
    "Decode batch [7]. #running-req: 1, #token: 1, token usage: 0.5, gen throughput (token/s): "
    "3, #queue-req: 0,",
])
def test_common_decode_shapes_take_the_fast_path(text: str) -> None:
    m = DECODE_FIELDS.search(text)
    assert m is not None and m.end() == len(text)
    assert decode_stats(text, 1, None, text) == decode_stats_generic(text, 1, None, text)


# ------------------------------------------------------------------ records
def test_records_build_the_same_objects_as_the_dataclass() -> None:
    made = bulk.Records(DecodeStats)
    objs = made.new(2)
    made.fill(objs, {"lineno": [1, 2], "gen_tps": [1.5, None], "cuda_graph": [True, False]})
    expected = [DecodeStats(1, gen_tps=1.5, cuda_graph=True), DecodeStats(2, cuda_graph=False)]
    assert objs == expected
    assert [hash(o) for o in objs] == [hash(o) for o in expected]
    assert [repr(o) for o in objs] == [repr(o) for o in expected]
    with pytest.raises(dataclasses.FrozenInstanceError):
        objs[0].lineno = 5  # type: ignore[misc]


def test_records_refuse_what_they_cannot_build_exactly() -> None:
    with pytest.raises(TypeError):
        bulk.Records(PrefillStats).fill(bulk.Records(PrefillStats).new(1), {})
    with pytest.raises(TypeError):
        bulk.Records(LogLine).fill([], {"nope": []})

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        x: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class PostInit:
        x: int

        def __post_init__(self) -> None:
            pass

    for cls in (NoSlots, PostInit):
        with pytest.raises(TypeError):
            bulk.Records(cls)


def test_log_lines_of_the_fast_path_keep_kind_and_host() -> None:
    data = b"".join(line_pool(40))
    lines = [e for e in by_chunk(data, [], "gpu-7") if isinstance(e, LogLine)]
    assert {ln.host for ln in lines} == {"gpu-7"}
    assert {ln.kind for ln in lines} == {LineKind.STATS, LineKind.DEBUG, LineKind.ACCESS}
    assert [ln.lineno for ln in lines] == list(range(1, 41))
