"""The bounded JSON and TOML loaders: deep, wide and huge documents give a value or LoadError.

``json`` and ``tomllib`` recurse per nesting level: a document a few thousand deep raised
RecursionError (exit 70, a dead log source). Every document is generated: depth up to 10,000 of
every bracket kind, strings of 1 MB, numbers of 100,000 digits, brackets inside strings and
comments, unterminated strings; the only outcomes allowed are a value or :class:`LoadError`
naming the source. The last test fails when a raw ``json.loads``/``tomllib.loads`` appears in
eagle_tui outside the loader module (an AST scan of every module).
"""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eagle_tui
from eagle_tui.errors import InputError
from eagle_tui.model.boundary.loaders import (
    MAX_DEPTH,
    LoadError,
    load_json,
    load_toml,
    nesting_depth,
)

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _outcome(load: object, text: str | bytes) -> object:
    try:
        return load(text, "the test document")  # type: ignore[operator]
    except LoadError as exc:
        assert str(exc).startswith("the test document: ")
        assert "\n" not in str(exc)[:200]
        return exc


# ---------------------------------------------------------------------------------- JSON

_OPEN = st.sampled_from(['[', '{"a":', '{"k": [', '[1, {"x":'])


@st.composite
def deep_json(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 10_000))
    opener = draw(_OPEN)
    closer = {"[": "]", '{"a":': "}", '{"k": [': "]}", '[1, {"x":': "}]"}[opener]
    inner = draw(st.sampled_from(["1", '"s"', "[]", "{}", '"[[[["', "null"]))
    closed = draw(st.booleans())
    return opener * depth + inner + (closer * depth if closed else "")


@given(deep_json())
@SETTINGS
def test_deep_json_is_a_value_or_the_one_error(doc: str) -> None:
    out = _outcome(load_json, doc)
    if isinstance(out, LoadError):
        return
    assert nesting_depth(doc) <= MAX_DEPTH


@given(st.integers(MAX_DEPTH + 1, 10_000), st.sampled_from(["[", "{\"a\":"]))
@SETTINGS
def test_over_the_depth_limit_is_refused_before_parsing(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    with pytest.raises(LoadError, match=f"nested deeper than {MAX_DEPTH} levels"):
        load_json(opener * depth + "1" + closer * depth, "the test document")


@given(st.integers(1, MAX_DEPTH))
@SETTINGS
def test_within_the_limit_is_read(depth: int) -> None:
    assert load_json("[" * depth + "]" * depth, "doc") is not None


@given(st.sampled_from(["string", "digits", "float", "escapes", "wide", "brackets_in_string",
                        "unterminated", "backslashes"]),
       st.sampled_from([1_000, 100_000, 1_000_000]))
@SETTINGS
def test_huge_and_wide_json(shape: str, n: int) -> None:
    doc = {
        "string": '"' + "x" * n + '"',
        "digits": "1" * n,
        "float": "1." + "0" * n + "1e5",
        "escapes": '"' + "\\u0041" * (n // 6) + '"',
        "wide": "[" + ",".join(["1"] * (n // 2)) + "]",
        "brackets_in_string": '["' + "[" * n + '"]',
        "unterminated": '"' + '\\"' * (n // 2),
        "backslashes": '"' + "\\" * n,
    }[shape]
    out = _outcome(load_json, doc)
    if shape == "brackets_in_string":
        assert out == ["[" * n]  # brackets inside a string are not nesting


def test_byte_cap_and_names() -> None:
    with pytest.raises(LoadError, match=r"^draft config.json at /m/config.json: larger than"):
        load_json(b"[" + b"1," * 2_200_000 + b"1]", "draft config.json at /m/config.json")
    with pytest.raises(LoadError) as info:
        load_json("{oops", "the /server_info answer")
    exc = info.value
    assert isinstance(exc, InputError) and isinstance(exc, ValueError)
    assert exc.source == "the /server_info answer" and exc.reason.startswith("not valid JSON")
    assert load_json(b'\xef\xbb\xbf{"a": 1}', "bom") == {"a": 1}  # (json's own detection)
    assert load_json('[1, 2]', "ints", parse_int=float) == [1.0, 2.0]


@given(st.recursive(st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda kids: st.lists(kids, max_size=4)
                    | st.dictionaries(st.text(max_size=5), kids, max_size=4), max_leaves=40))
@SETTINGS
def test_ordinary_documents_read_as_json_reads_them(value: object) -> None:
    text = json.dumps(value)
    assert load_json(text, "doc") == json.loads(text)


@given(st.text(alphabet='[]{}"\\:,1 a\n', max_size=400))
@settings(max_examples=400, deadline=None)
def test_any_text_of_json_punctuation(text: str) -> None:
    _outcome(load_json, text)


def test_depth_scan_is_linear() -> None:
    """The pre-scan's cost grows with the text, not faster (a ratio, never a time)."""
    def cost(n: int) -> float:
        doc = '[' + ', '.join(['{"a": ["[", "\\"", {"b": [1, 2]}]}'] * n) + ']'
        t = time.process_time()
        for _ in range(3):
            nesting_depth(doc)
        return time.process_time() - t
    cost(2_000)
    ratio = cost(80_000) / max(cost(10_000), 1e-4)
    assert ratio < 20, ratio


# ---------------------------------------------------------------------------------- TOML

@st.composite
def deep_toml(draw: st.DrawFn) -> str:
    depth = draw(st.integers(1, 10_000))
    kind = draw(st.sampled_from(["array", "inline", "mixed"]))
    if kind == "array":
        return "a = " + "[" * depth + "1" + "]" * depth + "\n"
    if kind == "inline":
        return "a = " + "{b = " * depth + "1" + "}" * depth + "\n"
    return "a = " + "[{b = " * depth + "1" + "}]" * depth + "\n"


@given(deep_toml())
@SETTINGS
def test_deep_toml_is_a_value_or_the_one_error(doc: str) -> None:
    _outcome(load_toml, doc)


def test_toml_strings_and_comments_are_not_nesting() -> None:
    doc = ('a = "[[[[ # not a comment"\n# [[[[ a comment\'s quote\nb = \'[[[[\'\n'
           'c = """\n[[[[\n"""\nd = \'\'\'[[[[\'\'\'\n[t]\nx = [[1], [2]]\n')
    assert load_toml(doc, "cfg")["t"] == {"x": [[1], [2]]}
    with pytest.raises(LoadError, match=r"^cfg: nested deeper than 64 levels"):
        load_toml("a = " + "[" * 65 + "]" * 65, "cfg")
    with pytest.raises(LoadError, match=r"^cfg: not valid TOML"):
        load_toml("[ui\n", "cfg")
    with pytest.raises(LoadError, match=r"^cfg: larger than 1 MB"):
        load_toml("# " + "x" * (1 << 20), "cfg")


@given(st.text(alphabet="[]{}\"'#=a1 \n.,", max_size=300))
@settings(max_examples=400, deadline=None)
def test_any_text_of_toml_punctuation(text: str) -> None:
    _outcome(load_toml, text)


# ------------------------------------------------------------------ every caller goes through

_RAW = {("json", "loads"), ("json", "load"), ("json", "JSONDecoder"), ("tomllib", "loads"),
        ("tomllib", "load")}
_LOADER = Path(eagle_tui.__file__).parent / "model" / "boundary" / "loaders.py"


def test_no_raw_json_or_toml_parsing_outside_the_loader() -> None:
    offenders = []
    for path in sorted(Path(eagle_tui.__file__).parent.rglob("*.py")):
        if path == _LOADER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("json", "tomllib"):
                names = {a.name for a in node.names}
                if names & {"loads", "load"}:
                    offenders.append(f"{path}:{node.lineno}: from {node.module} import load(s)")
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and (node.value.id, node.attr) in _RAW):
                offenders.append(f"{path}:{node.lineno}: {node.value.id}.{node.attr}")
    assert offenders == [], "use eagle_tui.model.boundary.loaders instead:\n" + "\n".join(offenders)
