"""``eagle_tui.model`` is pure: importing it and all its submodules loads only the stdlib."""

from __future__ import annotations

import json
import sys

from tests.support.paths import REPO
from tests.support.probe import run_probe

ROOT = REPO

PROBE = """
import importlib, json, pkgutil, sys
import eagle_tui.model as model
names = [m.name for m in pkgutil.walk_packages(model.__path__, "eagle_tui.model.")]
for name in names:
    importlib.import_module(name)
print(json.dumps({"submodules": names, "loaded": sorted(sys.modules)}))
"""


def test_model_imports_nothing_outside_the_standard_library() -> None:
    # -S: no site-packages at all, so a stray third-party import fails loudly too
    result = json.loads(run_probe(PROBE, "-S"))
    assert {"eagle_tui.model.ingest.parser", "eagle_tui.model.ingest.crash",
            "eagle_tui.model.views.alerts",
            "eagle_tui.model.ingest.normalize",
            "eagle_tui.model.state"} <= set(result["submodules"])
    foreign = [
        name for name in result["loaded"]
        if name.split(".")[0] not in sys.stdlib_module_names
        and name not in ("__main__", "eagle_tui", "eagle_tui.errors")
        and not name.startswith("eagle_tui.model")
    ]
    assert foreign == []


IO_MODULES = {"os", "io", "stat", "tempfile", "shutil", "subprocess", "socket", "select",
              "signal", "mmap", "pathlib", "marshal", "pickle"}


def test_model_modules_do_no_io() -> None:
    """The model reads no files, makes no temporary files and forks nothing: those live in the
    layers above (``eagle_tui.report`` for the report's reading, spooling and workers)."""
    import ast

    offenders = []
    for path in sorted((ROOT / "eagle_tui" / "model").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id == "open"):
                names = ["open()"]
            else:
                continue
            offenders += [f"{path.name}: {n}" for n in names
                          if n.split(".")[0] in IO_MODULES or n == "open()"]
    assert offenders == []
