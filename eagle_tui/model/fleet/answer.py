"""A Prometheus HTTP API answer (``/api/v1/query``, ``/query_range``), checked shape by shape.

The fleet read ``doc["data"]["result"][i]["value"][1]`` as if every server were Prometheus: an
answer of ``"data": "oops"``, ``"value": [0]`` or a matrix where a vector was asked for raised
``AttributeError``/``IndexError`` out of the poller, and ``fleet --headless`` exited 70. Here the
body goes through the bounded JSON loader (:mod:`.loaders`) and every level is checked before it
is used: ``status``, ``data``, ``data.resultType`` (the one the query asks for), ``data.result``
(a list), each item's ``metric`` (string labels) and ``value`` / ``values`` (``[time, "number"]``
pairs). Anything else is one :class:`AnswerError` whose message says where the answer went
wrong ("Prometheus answered an unexpected shape: data.result[3].value is [0]"); a sample value
that is not a number is ``NaN`` (Prometheus' own spelling of "no data"), as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eagle_tui.errors import InputError
from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.ingest.normalize import sanitize
from eagle_tui.model.record import Record, record

Labels = Mapping[str, str]
Sample = tuple[float, float]  # (time, value)
RESULT_TYPES = ("vector", "matrix", "scalar", "string")
MAX_SHOWN = 60  # characters of an unexpected value shown in the message


class AnswerError(InputError):
    """No usable answer: Prometheus' own error, a body that is not JSON, or another shape."""


@record
class Answer(Record):
    """A checked answer: ``result`` holds (labels, value) for a vector, (labels, [samples])
    for a matrix."""

    result_type: str
    result: list[tuple[Labels, Any]]
    warnings: list[str]


def _shown(value: object) -> str:
    text = repr(value)
    return sanitize(text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…")


def _unexpected(where: str, value: object) -> AnswerError:
    return AnswerError(f"Prometheus answered an unexpected shape: {where} is {_shown(value)}")


def _number(text: object) -> float:
    try:
        return float(str(text)) if isinstance(text, str | int | float) else float("nan")
    except ValueError:
        return float("nan")


def _sample(pair: object, where: str) -> Sample:
    if (not isinstance(pair, list) or len(pair) != 2
            or isinstance(pair[0], bool) or not isinstance(pair[0], int | float)
            or isinstance(pair[1], bool) or not isinstance(pair[1], str | int | float)):
        raise _unexpected(where, pair)
    return float(pair[0]), _number(pair[1])


def _labels(metric: object, where: str) -> Labels:
    if metric is None:
        return {}
    if not isinstance(metric, dict) or not all(isinstance(v, str) for v in metric.values()):
        raise _unexpected(where, metric)
    return metric


def check_answer(doc: object, expect: str | None = None) -> Answer:
    """A decoded answer checked (``expect``: the result type the query asks for)."""
    if not isinstance(doc, dict):
        raise _unexpected("the answer", doc)
    status = doc.get("status")
    if status == "error":
        kind, error = doc.get("errorType", "error"), doc.get("error", "?")
        raise AnswerError(f"{sanitize(str(kind))[:80]}: {sanitize(str(error))[:300]}")
    if status != "success":
        raise _unexpected("status", status)
    data = doc.get("data")
    if not isinstance(data, dict):
        raise _unexpected("data", data)
    rtype = data.get("resultType")
    if rtype not in RESULT_TYPES or (expect is not None and rtype != expect):
        raise _unexpected("data.resultType", rtype)
    items = data.get("result")
    if rtype in ("scalar", "string"):
        _sample(items, "data.result")
        return Answer(rtype, [], _warnings(doc))
    if not isinstance(items, list):
        raise _unexpected("data.result", items)
    out: list[tuple[Labels, Any]] = []
    for i, item in enumerate(items):
        at = f"data.result[{i}]"
        if not isinstance(item, dict):
            raise _unexpected(at, item)
        labels = _labels(item.get("metric"), f"{at}.metric")
        if rtype == "vector":
            out.append((labels, _sample(item.get("value"), f"{at}.value")[1]))
        else:
            values = item.get("values")
            if not isinstance(values, list):
                raise _unexpected(f"{at}.values", values)
            out.append((labels, [_sample(p, f"{at}.values[{j}]") for j, p in enumerate(values)]))
    return Answer(rtype, out, _warnings(doc))


def _warnings(doc: Mapping[str, object]) -> list[str]:
    warnings = doc.get("warnings")
    if warnings is None:
        return []
    if not isinstance(warnings, list):
        raise _unexpected("warnings", warnings)
    return [sanitize(str(w))[:300] for w in warnings[:20]]


def parse_answer(body: bytes, expect: str | None = None, *,
                 max_bytes: int | None = None) -> Answer:
    """The body of an answer → :class:`Answer`, or :class:`AnswerError` saying why not."""
    try:
        doc = load_json(body, "the Prometheus answer",
                        max_bytes=len(body) if max_bytes is None else max_bytes)
    except LoadError as exc:
        head = sanitize(repr(body[:80]))
        raise AnswerError(f"not Prometheus JSON ({exc.reason[:200]}): {head}") from None
    return check_answer(doc, expect)


__all__ = ["RESULT_TYPES", "Answer", "AnswerError", "Labels", "check_answer", "parse_answer"]
