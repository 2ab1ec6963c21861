"""The probe of new input shapes, run against every reader after the boundary work.

Each test here is a class of input the earlier suites did not name, found breaking by the probe
(``docs/reliability.md``, "Probe of new input shapes") and fixed at its mechanism; the cases are
generated, and the commands are called in-process (``eagle_tui.cli.main``) against loopback
fakes, so the whole file stays cheap.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import io
import itertools
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import typing
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eagle_tui import files
from eagle_tui.cli import main
from eagle_tui.history.records import FIELDS, RunRecord
from eagle_tui.history.store import RunStore
from eagle_tui.model.boundary.loaders import json_int, load_json, load_toml
from eagle_tui.model.boundary.sse import SseLines
from eagle_tui.model.events import LogLine, codec
from eagle_tui.model.fleet.answer import AnswerError, parse_answer
from eagle_tui.sources import replay as replay_source
from eagle_tui.sources.replay import ReplayError, ReplaySource

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
INT64 = range(-(1 << 63), 1 << 63)

# integer literals of every size, the 64-bit edges and far past the float range included
int_literals = st.one_of(
    st.integers().map(str),
    st.sampled_from([str(1 << 63), str((1 << 63) - 1), str(-(1 << 63)), str(-(1 << 63) - 1),
                     "1" + "0" * 308, "1" + "0" * 309]),
    st.integers(19, 5000).flatmap(
        lambda n: st.tuples(st.booleans(), st.text("0123456789", min_size=n, max_size=n))
        .map(lambda t: ("-" if t[0] else "") + "1" + t[1])),
)


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue() + err.getvalue()


# -- JSON integers a float, SQLite or the process APIs cannot hold ---------------------------

@given(int_literals)
@SETTINGS
def test_a_json_integer_is_an_int64_or_a_float(literal: str) -> None:
    value = load_json(f'{{"n": {literal}}}', "doc")["n"]
    assert value == json_int(literal)
    if isinstance(value, int):
        assert value in INT64 and value == int(literal)
    else:
        assert isinstance(value, float)
        float(value)  # (what raised OverflowError for a 400-digit int)


@given(int_literals, st.sampled_from(["time", "value"]))
@SETTINGS
def test_prometheus_answer_with_any_integer_is_read_or_refused(literal: str, where: str) -> None:
    sample = f'[{literal}, "1"]' if where == "time" else f'[1, {literal}]'
    body = ('{"status":"success","data":{"resultType":"vector","result":'
            f'[{{"metric":{{"instance":"h:80"}},"value":{sample}}}]}}}}').encode()
    try:
        answer = parse_answer(body, "vector")
    except AnswerError:
        return
    assert isinstance(answer.result[0][1], float)


@given(int_literals)
@SETTINGS
def test_record_line_with_any_integer_is_an_event_or_a_codec_error(literal: str) -> None:
    for line in (f'{{"type":"Tick","t":{literal}}}',
                 f'{{"type":"EngineDetected","engine":"vllm","lineno":{literal}}}'):
        try:
            ev = codec.loads(line)
        except codec.CodecError:
            continue
        for value in (getattr(ev, "t", 0.0), getattr(ev, "lineno", 0)):
            assert isinstance(value, float) or value in INT64


@pytest.fixture
def fake_prometheus() -> Iterator[tuple[str, list[bytes]]]:
    bodies = [b"{}"]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = bodies[0]
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", bodies
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize("literal", ["9" * 400, "-" + "9" * 4000, "9" * 100_000, str(1 << 64)],
                         ids=["400-digits", "minus-4000-digits", "100000-digits", "2**64"])
@pytest.mark.parametrize("where", ["time", "value"])
def test_fleet_headless_never_exits_70_on_an_integer(
        fake_prometheus: tuple[str, list[bytes]], literal: str, where: str) -> None:
    url, bodies = fake_prometheus
    sample = f'[{literal}, "1"]' if where == "time" else f'[1, {literal}]'
    metric = {"__name__": "sglang:num_running_reqs", "instance": "h:8000", "job": "sglang"}
    bodies[0] = ('{"status":"success","data":{"resultType":"vector","result":'
                 f'[{{"metric":{json.dumps(metric)},"value":{sample}}}]}}}}').encode()
    rc, text = _run(["fleet", "--headless", "--count", "1", "--prometheus", url])
    assert rc in (0, 1), text
    assert "internal error" not in text


def test_replay_of_a_record_with_a_400_digit_number(tmp_path: Path) -> None:
    rec = tmp_path / "r.rec"
    rec.write_text(codec.header_line() + "\n"
                   + '{"type":"Tick","t":' + "9" * 400 + "}\n"
                   + '{"type":"EngineDetected","engine":"vllm","lineno":' + "9" * 400 + "}\n")
    for argv in (["replay", "--headless", str(rec)], ["replay", "--headless", "--json", str(rec)]):
        rc, text = _run(argv)
        assert rc in (0, 1, 2, 3), text
        assert "internal error" not in text


# -- SSE line ends: CRLF, LF and a lone CR, split anywhere between chunks ---------------------

sse_lines = st.lists(st.text(st.characters(blacklist_characters="\r\n", codec="utf-8"),
                             max_size=30), min_size=1, max_size=20)


@given(sse_lines, st.data())
@SETTINGS
def test_sse_lines_end_at_crlf_lf_or_cr_wherever_the_chunks_split(
        lines: list[str], data: st.DataObject) -> None:
    eols = data.draw(st.lists(st.sampled_from(["\r\n", "\n", "\r"]),
                              min_size=len(lines), max_size=len(lines)))
    raw = "".join(line + eol for line, eol in zip(lines, eols, strict=True)).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=12)))
    splitter = SseLines()
    got: list[str | None] = []
    for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True):
        got += splitter.feed(raw[a:b])
    got += splitter.finish()
    # (an empty line ended by LF after one ended by CR reads as one CRLF: the grammar's own
    # ambiguity, so the expected lines come from splitting the whole text)
    assert got == re.split(r"\r\n|\r|\n", raw.decode())[:-1]
    if "\r" not in eols:
        assert got == lines


@pytest.fixture
def fake_sse_server() -> Iterator[tuple[str, list[bytes]]]:
    stream = [b""]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # /v1/models: stream[1] when a test sets one
            body = stream[1] if len(stream) > 1 else b'{"data":[{"id":"m"}]}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(stream[0])

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", stream
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize("eol", ["\r", "\r\n", "\n"], ids=["cr", "crlf", "lf"])
def test_bench_reads_a_stream_with_any_line_end(
        fake_sse_server: tuple[str, list[bytes]], eol: str) -> None:
    url, stream = fake_sse_server
    event = 'data: {"choices":[{"delta":{"content":"a"}}]}'
    stream[0] = (event + eol + eol + event + eol + eol + "data: [DONE]" + eol + eol).encode()
    rc, text = _run(["bench", "--url", url, "--requests", "2", "--concurrency", "1",
                     "--max-tokens", "4", "--timeout", "20", "--no-mark", "--json"])
    assert rc == 0, text


# -- lone surrogates: strings no UTF-8 encoder takes ----------------------------------------

surrogate_text = st.lists(st.one_of(st.text(max_size=5),
                                    st.integers(0xD800, 0xDFFF).map(chr)),
                          max_size=6).map("".join)


def _replaced(text: str) -> str:
    return re.sub("[\ud800-\udfff]", "\ufffd", text)


@given(st.dictionaries(surrogate_text, st.lists(surrogate_text, max_size=3), max_size=4),
       st.sampled_from(["escaped", "raw bytes"]))
@SETTINGS
def test_a_lone_surrogate_is_read_as_the_replacement_character(
        doc: dict[str, list[str]], form: str) -> None:
    if form == "escaped":
        data: str | bytes = json.dumps(doc)
    else:
        data = json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    got = load_json(data, "doc")
    json.dumps(got, ensure_ascii=False).encode("utf-8")  # (what raised UnicodeEncodeError)
    # the stdlib's reading (a high and a low surrogate side by side are joined into one
    # character there, and so here), with what is left alone replaced
    text = data.decode("utf-8", "surrogatepass") if isinstance(data, bytes) else data
    plain = json.loads(text)
    assert got == {_replaced(k): [_replaced(v) for v in vs] for k, vs in plain.items()}


@pytest.mark.parametrize("model_id", ["\\ud800", "a\\udfffb", "\\udbff\\udbff"])
def test_bench_with_a_lone_surrogate_model_id(fake_sse_server: tuple[str, list[bytes]],
                                              model_id: str) -> None:
    url, stream = fake_sse_server
    stream[0] = b'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n'
    stream.append(('{"data":[{"id":"' + model_id + '"}]}').encode())
    rc, text = _run(["bench", "--url", url, "--requests", "2", "--concurrency", "1",
                     "--max-tokens", "4", "--timeout", "20", "--no-mark"])
    assert rc == 0, text
    assert "UnicodeEncodeError" not in text


# -- a byte-order mark before a document ------------------------------------------------------

toml_values = st.recursive(
    st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.booleans(),
              st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=10)),
    lambda inner: st.lists(inner, max_size=3), max_leaves=8)


@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), toml_values,
                       max_size=5))
@SETTINGS
def test_a_bom_before_json_or_toml_is_not_part_of_it(doc: dict[str, object]) -> None:
    text = json.dumps(doc)
    assert load_json("\ufeff" + text, "doc") == load_json(text, "doc") == doc
    assert load_json(("\ufeff" + text).encode(), "doc") == doc
    toml = "".join(f"{k} = {json.dumps(v, ensure_ascii=False)}\n" for k, v in doc.items())
    assert load_toml("\ufeff" + toml, "cfg") == load_toml(toml, "cfg") == doc


def test_replay_reads_a_config_file_saved_with_a_bom(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_bytes(b'\xef\xbb\xbf[ui]\ntheme = "eagle-light"\n')
    log = Path(__file__).resolve().parents[1] / "fixtures" / "samples" / "sglang-oom-cuda-graph.log"
    rc, text = _run(["replay", "--headless", "--config", str(cfg), str(log)])
    assert rc != 2 and "config" not in text, text


# -- a path with a NUL byte (from a log or a --speculative-config) ----------------------------

@given(st.text(max_size=20), st.text(max_size=20))
@SETTINGS
def test_a_path_with_a_nul_byte_is_no_such_file(head: str, tail: str) -> None:
    path = head + "\0" + tail
    files.check_regular(path)  # (a missing path passes: a tail waits for it)
    for reader in (files.open_regular, files.read_bytes, files.read_text):
        with pytest.raises(FileNotFoundError) as info:
            reader(path)
        assert files.os_error_message(path, info.value).endswith("no such file")


@pytest.mark.parametrize("argv", [
    ["python", "-m", "sglang.launch_server", "--model-path", "a\0b"],
    ["python", "-m", "sglang.launch_server", "--model-path", "m", "--speculative-algorithm",
     "EAGLE", "--speculative-draft-model-path", "/d\0x"],
    ["vllm", "serve", "m", "--speculative-config",
     '{"method": "eagle", "model": "a\\u0000b", "num_speculative_tokens": 3}'],
], ids=["model-path", "draft-path", "speculative-config"])
def test_lint_with_a_nul_in_a_path(argv: list[str]) -> None:
    rc, text = _run(["lint", "--", *argv])
    assert rc in (0, 1), text


# -- history cells of another type (another version's or a damaged file) ----------------------

sqlite_values = st.one_of(
    st.none(), st.integers(-(1 << 63), (1 << 63) - 1), st.floats(), st.binary(max_size=8),
    st.text(max_size=12),
    st.sampled_from(["[1, 2]", "{}", '{"a": [1]}', "NaN", "1e999", '["x", 5, null]',
                     '{"a": "b", "c": {"d": 1}}', "[{}, 1, \"x\"]", "[" * 100]))


_SERIAL = itertools.count()


_SOME_COLUMNS = [name for name, _ in FIELDS if name not in ("name", "kind", "demo", "host")]


@given(st.sampled_from(_SOME_COLUMNS), sqlite_values)
@SETTINGS
def test_a_history_cell_of_any_type_is_read(tmp_path: Path, column: str, value: object) -> None:
    data = tmp_path / f"h{next(_SERIAL)}"
    data.mkdir()
    store = RunStore(data / "runs.sqlite3")
    run = store.add(engine="sglang", state="serving", log_path="/x.log")
    try:
        with sqlite3.connect(data / "runs.sqlite3") as db:
            db.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (value, run.id))
    except sqlite3.IntegrityError:  # (NULL in a NOT NULL column: the file refuses it itself)
        return
    (rec,) = store.list()
    for name, hint in typing.get_type_hints(RunRecord).items():
        got = getattr(rec, name)
        assert got is None or name in ("kind", "host", "demo") or _is(hint, got), (name, got)
    before = os.environ.get("EAGLE_TUI_DATA_DIR")
    os.environ["EAGLE_TUI_DATA_DIR"] = str(data)
    try:
        for argv in (["runs", "list"], ["runs", "list", "--json"], ["runs", "show", "last"],
                     ["runs", "show", "last", "--json"]):
            out = io.StringIO()
            out.buffer = io.BytesIO()  # type: ignore[misc]  # (--json writes bytes)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                rc = main(argv)
            assert rc == 0, (argv, column, value)
    finally:
        if before is None:
            del os.environ["EAGLE_TUI_DATA_DIR"]
        else:
            os.environ["EAGLE_TUI_DATA_DIR"] = before


def _is(hint: object, value: object) -> bool:
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    return any(isinstance(value, typing.get_origin(a) or a) for a in args)


# -- a replayed file whose read fails ----------------------------------------------------------

class _FailingReader(io.BytesIO):
    """A log that reads ``good`` bytes, then fails as a bad disk does."""

    def __init__(self, data: bytes, good: int, err: int) -> None:
        super().__init__(data)
        self.good, self.err, self.size = good, err, len(data)

    def read(self, n: int | None = -1) -> bytes:
        if self.tell() >= self.good and self.good < self.size:
            raise OSError(self.err, os.strerror(self.err))
        want = self.good - self.tell() if n is None or n < 0 else min(n, self.good - self.tell())
        return super().read(want)


@given(st.lists(st.text("abc \t:", max_size=40), max_size=50), st.data(),
       st.sampled_from([errno.EIO, errno.EACCES, errno.ESTALE, errno.EINVAL]),
       st.sampled_from(["log", "record"]))
@SETTINGS
def test_a_replay_ends_where_its_file_cannot_be_read(
        tmp_path: Path, lines: list[str], data: st.DataObject, err: int, kind: str) -> None:
    if kind == "record":
        body = codec.header_line() + "\n" + "".join(
            codec.dumps(LogLine(i + 1, text)) + "\n" for i, text in enumerate(lines))
    else:
        body = "".join(f"{text}\n" for text in lines)
    raw = body.encode()
    good = data.draw(st.integers(0, len(raw)))
    path = tmp_path / f"{kind}.txt"
    path.write_bytes(raw)
    src = ReplaySource(path, kind=kind)

    def failing(*_: object) -> tuple[_FailingReader, None]:
        return _FailingReader(raw, good, err), None

    async def like_the_session() -> int:  # every failure is retried, as Session does
        failures = 0
        for _ in range(5):
            try:
                async for _ev in src.events():
                    pass
                return failures
            except ReplayError:
                failures += 1
        raise AssertionError("the replay never ended")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(replay_source, "open_log", failing)
        mp.setattr(replay_source, "open_regular", lambda *_: _FailingReader(raw, good, err))
        failures = asyncio.run(like_the_session())
    assert failures <= 1
    assert failures == (good < len(raw)) or kind == "record"


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="Linux /proc")
def test_replay_headless_of_proc_self_mem_ends() -> None:
    for argv in (["replay", "--headless", "/proc/self/mem"],
                 ["replay", "--headless", "--json", "/proc/self/mem"]):
        proc = subprocess.run([sys.executable, "-m", "eagle_tui", *argv], capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode in (0, 1, 2), proc.stderr
        assert "Input/output error" in proc.stdout + proc.stderr
