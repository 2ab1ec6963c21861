"""The layers hold: import-linter's contracts (``[tool.importlinter]`` in pyproject.toml).

``docs/architecture.md`` draws the layers; the contracts say the same in a form a tool checks:
the direction (each layer imports only those below it), who may talk to a transport or start a
source, that Textual stays in ``ui`` and paramiko in ``transport``. Three kinds of test:

- the contracts hold on this tree;
- they *can* fail: a copy of the package with one deliberate violation breaks the contract that
  forbids it (so a typo in the configuration cannot make the first test pass vacuously);
- importing the core (model, transport, sources, session, sim) loads neither Textual nor
  paramiko, which the static contracts cannot see for imports made at run time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.paths import REPO
from tests.support.probe import run_probe

ROOT = REPO
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
CONFIG = PYPROJECT["tool"]["importlinter"]
CONTRACTS = {c["id"]: c["name"] for c in CONFIG["contracts"]}

LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))")


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the package under ``root`` with the contracts of ``root``'s config."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-c", LINT, str(root / "pyproject.toml")],
                          capture_output=True, text=True, cwd=root, env=env, timeout=120,
                          check=False)


def test_the_import_contracts_hold() -> None:
    assert {"layers", "model", "transport", "sources", "sim", "textual",
            "paramiko"} <= set(CONTRACTS)
    proc = lint(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in CONTRACTS.values():
        assert f"{name} KEPT" in proc.stdout
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in proc.stdout


# (module written into the copy, its source, the contract it must break)
VIOLATIONS = [
    ("model/state/_probe.py", "import eagle_tui.model.views.figures\n", "model"),
    ("model/views/_probe.py", "import eagle_tui.model.fold.reducer\n", "model"),
    ("model/state/_probe.py", "import eagle_tui.model.fold.batch\n", "model"),
    ("model/_probe.py", "import eagle_tui.ui.format\n", "layers"),
    ("transport/_probe.py", "import eagle_tui.session\n", "layers"),
    ("sim/_probe.py", "import eagle_tui.session\n", "layers"),  # siblings: independent
    ("ui/_probe.py", "from eagle_tui.sources import logtail\n", "sources"),
    ("session_probe.py", "import eagle_tui.transport.local\n", "transport"),
    ("ui/_probe.py", "import eagle_tui.sim.scenario\n", "sim"),
    ("session_probe.py", "import textual.app\n", "textual"),
    ("sources/_probe.py", "def connect() -> None:\n    import paramiko\n", "paramiko"),
    ("report/_probe.py", "import eagle_tui.session\n", "layers"),
    ("headless/_probe.py", "import eagle_tui.ui.format\n", "layers"),
    ("model/_probe.py", "import eagle_tui.assembly\n", "layers"),
    ("probe/_probe.py", "import eagle_tui.session\n", "layers"),
    ("history/_probe.py", "import eagle_tui.probe.facts\n", "layers"),
    ("model/_probe.py", "import eagle_tui.files\n", "layers"),  # the model reads no file
]


@pytest.mark.parametrize(("path", "source", "contract"), VIOLATIONS,
                         ids=[f"{c}:{p}" for p, _, c in VIOLATIONS])
def test_a_deliberate_violation_breaks_its_contract(
        tmp_path: Path, path: str, source: str, contract: str) -> None:
    shutil.copytree(ROOT / "eagle_tui", tmp_path / "eagle_tui",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if path == "session_probe.py":  # a top-level module of the session layer: inside session.py
        target = tmp_path / "eagle_tui" / "session.py"
        target.write_text(target.read_text(encoding="utf-8") + "\n" + source, encoding="utf-8")
    else:
        target = tmp_path / "eagle_tui" / path
        target.parent.mkdir(exist_ok=True)
        target.write_text(source, encoding="utf-8")
    proc = lint(tmp_path)
    assert proc.returncode != 0, proc.stdout
    assert f"{CONTRACTS[contract]} BROKEN" in proc.stdout, proc.stdout
    broken = [name for name in CONTRACTS.values() if f"{name} BROKEN" in proc.stdout]
    assert broken == [CONTRACTS[contract]]  # exactly the one rule this import breaks


PROBE = """
import importlib, json, pkgutil, sys
import eagle_tui.errors, eagle_tui.session
for package in ("model", "transport", "sources", "sim"):
    root = importlib.import_module("eagle_tui." + package)
    for info in pkgutil.walk_packages(root.__path__, root.__name__ + "."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""


def test_importing_the_core_loads_neither_textual_nor_paramiko() -> None:
    loaded = json.loads(run_probe(PROBE))
    assert "eagle_tui.transport.ssh.transport" in loaded and "eagle_tui.sources.logtail" in loaded
    assert [m for m in loaded if m.split(".")[0] in ("textual", "paramiko")] == []
    assert not [m for m in loaded if m.startswith(("eagle_tui.ui", "eagle_tui.commands"))]
