"""Engine names live in the engines' home: nothing else asks "which engine" by name.

An engine-name literal is a string constant ``"sglang"`` or ``"vllm"`` (any case), a string
starting ``sglang:`` / ``vllm:`` (a metric name), or an attribute ``Engine.SGLANG``-style member.
Outside ``eagle_tui/model/engines/`` and the simulator (which plays the engines, and prints what
they print) at most :data:`ALLOWED` files may hold one; the allowance is a list, so a new
offender fails here with its file and line rather than moving a count.
"""

from __future__ import annotations

import ast

from tests.support.paths import REPO

PACKAGE = REPO / "eagle_tui"
HOME = ("model/engines/", "sim/")
NAMES = ("sglang", "vllm")
# The CLI's choices of a simulated engine (the simulator's own, not the registry's).
ALLOWED: frozenset[str] = frozenset()


def _is_engine_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        low = node.value.lower()
        return low in NAMES or low.startswith(tuple(f"{n}:" for n in NAMES))
    if isinstance(node, ast.Attribute) and node.attr.lower() in NAMES:
        return isinstance(node.value, ast.Name) and node.value.id == "Engine"
    return False


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of docstring constants (prose may name an engine)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def offenders() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(HOME):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        lines = [n.lineno for n in ast.walk(tree)
                 if _is_engine_literal(n) and id(n) not in docs and hasattr(n, "lineno")]
        if lines:
            found[rel] = sorted(lines)
    return found


def test_engine_names_appear_only_in_the_engines_home() -> None:
    extra = {f: lines for f, lines in offenders().items() if f not in ALLOWED}
    assert extra == {}, "engine names as code literals outside model/engines/ and sim/: " + \
        "; ".join(f"{f}: lines {lines}" for f, lines in extra.items())
    assert len(ALLOWED) <= 3


def test_the_check_sees_a_literal() -> None:
    tree = ast.parse('"""sglang"""\nx = "vLLM"\ny = "sglang:gen_throughput"\nz = Engine.SGLANG')
    assert sum(_is_engine_literal(n) for n in ast.walk(tree)) == 4  # the docstring-shaped too
    assert len(_docstrings(tree)) == 1
