"""The range the test ports avoid is the range the installed SGLang really picks from."""

from __future__ import annotations

import ast

from tests.integration.conftest import _require_sglang
from tests.support import ports


def test_sglang_picks_its_later_bound_ports_inside_the_avoided_range() -> None:
    root = _require_sglang()
    [network] = (root / "venv" / "lib").glob("python3*/site-packages/sglang/srt/utils/network.py")
    tree = ast.parse(network.read_text())
    [fn] = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
            and n.name == "get_free_port_below_ephemeral"]
    defaults = {a.arg: ast.literal_eval(d) for a, d in
                zip(fn.args.args[-len(fn.args.defaults):], fn.args.defaults, strict=True)}
    assert (defaults["low"], defaults["high"]) == ports.ENGINE_PICKS
