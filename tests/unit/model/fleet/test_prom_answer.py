"""Prometheus HTTP API answers of every shape: a checked answer or AnswerError, never another.

``"data":"oops"``, ``"value":[0]`` or a matrix where a vector is asked for made ``fleet
--headless`` exit 70. Generated answers mutate a good one at every level (a value of another JSON
type anywhere, items dropped or added, pairs cut) and arbitrary JSON documents are tried too;
the end-to-end test runs ``fleet --headless`` and ``--json`` against a loopback server that gives
the issue's answers.
"""

from __future__ import annotations

import copy
import http.server
import json
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.cli import main
from eagle_tui.model.fleet.answer import AnswerError, check_answer, parse_answer
from eagle_tui.sources.prometheus import PrometheusError
from eagle_tui.sources.prometheus import parse_answer as source_parse

GOOD_VECTOR = {"status": "success", "data": {"resultType": "vector", "result": [
    {"metric": {"fleet_q": "up", "instance": "a:8000"}, "value": [1.5, "1"]},
    {"metric": {"fleet_q": "gen_total", "instance": "a:8000"}, "value": [1.5, "NaN"]}]}}
GOOD_MATRIX = {"status": "success", "data": {"resultType": "matrix", "result": [
    {"metric": {"instance": "a:8000"}, "values": [[1, "1"], [2, "2.5"]]}]}}

ISSUE_SHAPES = [
    {"status": "success", "data": "oops"},
    {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {},
                                                                       "value": [0]}]}},
    GOOD_MATRIX,  # a matrix where a vector is asked for
    {"status": "success", "data": {"resultType": "vector", "result": {"a": 1}}},
    {"status": "success", "data": {"resultType": "vector", "result": [[1, "2"]]}},
    {"status": "success", "data": {"resultType": "vector", "result": [{"metric": [1],
                                                                       "value": [1, "1"]}]}},
    {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"instance": 5}, "value": [1, "1"]}]}},
    {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {}, "value": [True, "1"]}]}},
    {"status": "success"},
    {"status": 1},
    [],
    "oops",
    None,
]


@pytest.mark.parametrize("doc", ISSUE_SHAPES)
def test_the_issue_shapes_are_named(doc: object) -> None:
    with pytest.raises(AnswerError, match=r"^Prometheus answered an unexpected shape: "):
        parse_answer(json.dumps(doc).encode(), "vector")
    with pytest.raises(PrometheusError, match="unexpected shape"):
        source_parse(json.dumps(doc).encode(), "vector")


def test_good_answers_and_prometheus_own_errors() -> None:
    ans = parse_answer(json.dumps(GOOD_VECTOR).encode(), "vector")
    assert ans.result[0] == ({"fleet_q": "up", "instance": "a:8000"}, 1.0)
    assert ans.result[1][1] != ans.result[1][1]  # NaN: "no data"
    assert parse_answer(json.dumps(GOOD_MATRIX).encode(), "matrix").result == [
        ({"instance": "a:8000"}, [(1.0, 1.0), (2.0, 2.5)])]
    with pytest.raises(AnswerError, match=r"^execution: too many samples$"):
        check_answer({"status": "error", "errorType": "execution", "error": "too many samples"})
    with pytest.raises(AnswerError, match="not Prometheus JSON"):
        parse_answer(b"<html>proxy login</html>")
    with pytest.raises(AnswerError, match="nested deeper than 64"):
        parse_answer(b'{"status": "success", "data": ' + b"[" * 5000 + b"]" * 5000 + b"}")


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                     lambda kids: st.lists(kids, max_size=3)
                     | st.dictionaries(st.text(max_size=6), kids, max_size=3), max_leaves=12)


def _paths(node: object, at: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    yield at
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*at, i))


_GOOD_PATHS = {"vector": list(_paths(GOOD_VECTOR))[1:], "matrix": list(_paths(GOOD_MATRIX))[1:]}


@given(st.sampled_from(["vector", "matrix"]), st.data(), _JSON)
@settings(max_examples=400, deadline=None)
def test_a_good_answer_with_any_part_replaced(kind: str, data: st.DataObject,
                                               junk: object) -> None:
    doc = copy.deepcopy(GOOD_VECTOR if kind == "vector" else GOOD_MATRIX)
    path = data.draw(st.sampled_from(_GOOD_PATHS[kind]))
    node: object = doc
    for key in path[:-1]:
        node = node[key]  # type: ignore[index]
    node[path[-1]] = junk  # type: ignore[index]
    try:
        parse_answer(json.dumps(doc).encode(), data.draw(st.sampled_from([kind, None])))
    except AnswerError:
        pass


@given(_JSON)
@settings(max_examples=300, deadline=None)
def test_any_json_document(doc: object) -> None:
    try:
        parse_answer(json.dumps(doc).encode(), "vector")
    except AnswerError:
        pass


@given(st.binary(max_size=200))
@settings(max_examples=200, deadline=None)
def test_any_bytes(body: bytes) -> None:
    try:
        parse_answer(body)
    except AnswerError:
        pass


# ------------------------------------------------------------------ end to end: fleet --headless

class _Odd(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("doc", ISSUE_SHAPES[:3])
def test_fleet_headless_shows_the_shape_and_exits_cleanly(
        doc: object, capsys: pytest.CaptureFixture[str]) -> None:
    handler = type("Handler", (_Odd,), {"body": json.dumps(doc).encode()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        code = main(["fleet", "--prometheus", url, "--headless", "--count", "1"])
        out = capsys.readouterr().out
        assert code in (0, 1) and "unexpected shape" in out
        code = main(["fleet", "--prometheus", url, "--json", "--count", "1"])
        line = capsys.readouterr().out.strip().splitlines()[-1]
        assert code in (0, 1) and "unexpected shape" in json.dumps(json.loads(line))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
