"""User patterns compile in RE2 (``eagle_tui/userpattern.py``), and nowhere else.

- The catastrophic shapes that froze Python's ``re`` (``(a+)+$`` over 40 ``a`` s and a ``!``)
  match in time linear in the text: time(8n)/time(n) stays near 8, never exponential.
- Generated patterns either compile or are refused with a one-line reason; nothing else escapes.
- An AST scan: in the modules that handle the filter, search and highlight rules, no ``re``
  function is applied to anything but a constant or ``re.escape(...)`` (so a user's text can
  only be compiled by ``userpattern``), and ``re2`` is imported in ``userpattern`` alone.
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.buffers.query import Literal
from eagle_tui.userpattern import (
    MAX_PATTERN_CHARS,
    PatternRefused,
    Regex,
    compile_pattern,
    compile_query,
    refusal,
)

ROOT = Path(__file__).resolve().parents[2]
HOSTILE_LINE = "a" * 40 + "!"
CATASTROPHIC = ["(a+)+$", "(a|aa)+$", "(.*a){20}", "(a*)*$", "((a+)+)+b", "(a|a?)+$",
                "(\\w+\\s?)+$", "(x+x+)+y", "^(a+)+$", "(.*){12}!x"]


@pytest.mark.parametrize("shape", CATASTROPHIC)
def test_catastrophic_shapes_are_linear(shape: str) -> None:
    pattern = compile_query(shape)
    assert isinstance(pattern, Regex)
    # it returns at all (Python's re does not, in any useful time), as a config rule too
    assert (pattern.search(HOSTILE_LINE) is None) == (compile_pattern(shape).search(
        HOSTILE_LINE) is None)

    def cost(n: int) -> float:
        text = "a" * n + "!"
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            pattern.search(text)
            best = min(best, time.perf_counter() - t0)
        return best

    small, big = cost(20_000), cost(160_000)
    assert big / small < 40, (shape, small, big)  # linear: ~8; backtracking: astronomically more


@pytest.mark.parametrize(("query", "why"), [
    ("(?=a)b", "lookaround"), ("a(?!b)", "lookaround"), ("(?<=a)b", "lookaround"),
    ("(?<!a)b", "lookaround"), (r"(a)\1", "backreferences"), ("(?P<x>a)(?P=x)", "backreferences"),
    ("a{1001}", "invalid repetition size"), ("(?>a)", "invalid perl operator"),
    ("a++", "bad repetition operator"), ("(" * 10 + "a" * MAX_PATTERN_CHARS, "longer than"),
])
def test_what_re2_cannot_run_is_refused_with_a_reason(query: str, why: str) -> None:
    with pytest.raises(PatternRefused, match=why):
        compile_query(query)
    with pytest.raises(PatternRefused, match=why):
        compile_pattern(query)
    reason = refusal(query)
    assert why in reason and "\n" not in reason


def test_query_rules_smart_case_literal_and_plain_text() -> None:
    assert compile_query("") is None
    plain = compile_query("token: 99")
    assert isinstance(plain, Literal) and plain.search("TOKEN: 99")  # no metacharacter
    assert isinstance(compile_query("tok.n"), Regex)
    not_regex = compile_query("[EAGLE3")  # not a regex at all: its text
    assert isinstance(not_regex, Literal) and not_regex.search("x [EAGLE3-DEBUG]")
    upper = compile_query("Err.r")
    assert upper is not None and upper.search("Error") and not upper.search("ERROR")
    lower = compile_query("err.r")
    assert lower is not None and lower.search("ERROR")
    anchored = compile_query("^b.t$")
    assert anchored is not None and anchored.lines.search("one\nbat\ntwo")
    assert not anchored.search("one\nbat\ntwo")
    assert [m.start() for m in compile_pattern("a.").finditer("xabxac", 2)] == [4]
    assert refusal("a.c") == refusal("") == ""


REGEXISH = st.text(alphabet=st.sampled_from(list("ab.*+?()[]{}|^$\\-,:=!<>P1dwsSz0 9")),
                   max_size=40)


@settings(max_examples=600, deadline=None)
@given(REGEXISH)
def test_generated_queries_compile_or_are_refused(query: str) -> None:
    try:
        pattern = compile_query(query)
    except PatternRefused as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    if pattern is not None:
        pattern.search(HOSTILE_LINE * 3)
        list(pattern.finditer(HOSTILE_LINE))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_any_text_compiles_or_is_refused(query: str) -> None:
    for compile_ in (compile_query, compile_pattern):
        try:
            pattern = compile_(query)
        except PatternRefused as exc:
            assert "\n" not in str(exc)
        else:
            if pattern is not None:
                pattern.search(query + HOSTILE_LINE)


# --- the AST scan -------------------------------------------------------------------------

RE_FUNCS = {"compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "subn",
            "split"}
# the modules a user's query or rule passes through (userpattern itself is the one exception)
PATTERN_MODULES = [
    *sorted((ROOT / "eagle_tui" / "ui").rglob("*.py")),
    ROOT / "eagle_tui" / "model" / "buffers" / "logbuffer.py",
    ROOT / "eagle_tui" / "model" / "buffers" / "linewindow.py",
    ROOT / "eagle_tui" / "model" / "buffers" / "query.py",
    ROOT / "eagle_tui" / "sources" / "linestore.py",
]


def _constant(node: ast.expr, constants: set[str]) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(_constant(v, constants) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return _constant(node.value, constants)
    if isinstance(node, ast.BinOp):
        return _constant(node.left, constants) and _constant(node.right, constants)
    if isinstance(node, ast.Name):
        return node.id in constants
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
            and node.func.attr == "escape")


def user_text_compiled(source: str, name: str = "<probe>") -> list[str]:
    """``re.<func>(x, ...)`` calls whose pattern ``x`` is not a constant: a module-level name
    bound once to a constant expression, a literal, or ``re.escape(...)``."""
    tree = ast.parse(source, name)
    constants: set[str] = set()
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None
                and _constant(stmt.value, constants)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            constants |= {t.id for t in targets if isinstance(t, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                and node.func.attr in RE_FUNCS
                and not (node.args and _constant(node.args[0], constants))):
            found.append(f"{name}:{node.lineno}: re.{node.func.attr}")
    return found


def test_no_user_text_reaches_python_re_in_the_pattern_modules() -> None:
    offenders = []
    for path in PATTERN_MODULES:
        offenders += user_text_compiled(path.read_text(encoding="utf-8"),
                                        str(path.relative_to(ROOT)))
    assert offenders == []
    assert len(PATTERN_MODULES) > 20


def test_the_scan_can_fail() -> None:
    assert user_text_compiled("import re\ndef f(q):\n    return re.compile(q)\n")
    assert user_text_compiled("import re\ndef f(q):\n    return re.search(q + 'x', 'y')\n")
    assert user_text_compiled("import re\nP = input()\nre.findall(P, 'y')\n")
    assert not user_text_compiled("import re\nA = 'x'\nB = re.compile(A + r'\\d')\n"
                                  "def f(q):\n    return re.compile(re.escape(q))\n")


def test_re2_is_imported_in_userpattern_and_the_report_scan_alone() -> None:
    importers = []
    for path in sorted((ROOT / "eagle_tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "re2" for n in names):
                importers.append(path.relative_to(ROOT).as_posix())
    # (report/plainscan compiles one fixed pattern of its own, never a user's text)
    assert importers == ["eagle_tui/report/plainscan.py", "eagle_tui/userpattern.py"]
