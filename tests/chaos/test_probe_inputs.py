"""The probe of new input shapes, run against every reader after the boundary work.

Each test here is a class of input the earlier suites did not name, found breaking by the probe
(``docs/reliability.md``, "Probe of new input shapes") and fixed at its mechanism; the cases are
generated, and the commands are called in-process (``eagle_tui.cli.main``) against loopback
fakes, so the whole file stays cheap.
"""

from __future__ import annotations

import contextlib
import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eagle_tui.cli import main
from eagle_tui.model import codec
from eagle_tui.model.loaders import json_int, load_json
from eagle_tui.model.prom_answer import AnswerError, parse_answer

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
