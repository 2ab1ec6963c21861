"""A containerized server whose command line is an engine's own: a stand-in ``sglang`` package
whose ``launch_server`` runs the simulator, so ``python -m sglang.launch_server --port N`` in a
container is what discovery and ``--container`` read (the simulator's own ``python -m
eagle_tui.sim`` is no engine's entry point)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.containers import ContainerEngine

SHIM = """import runpy, sys
sys.argv = ["eagle_tui.sim", *sys.argv[1:]]
runpy.run_module("eagle_tui.sim", run_name="__main__")
"""


def shim_dir(root: Path) -> Path:
    pkg = root / "shim" / "sglang"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "launch_server.py").write_text(SHIM)
    return root / "shim"


def engine_server(containers: ContainerEngine, name: str, port: int, tmp: Path,
                  *args: str, options: tuple[str, ...] = ()) -> str:
    """``python -m sglang.launch_server --port PORT ...`` (the simulator) in container ``name``."""
    shim = shim_dir(tmp)
    root = Path(__file__).resolve().parents[2]
    return containers.run(
        name, [sys.executable, "-m", "sglang.launch_server", "--port", str(port),
               "--engine", "sglang", "--gpus", "1", "--log", "/dev/stdout", *args],
        volumes=["-v", f"{shim}:{shim}:ro"],
        options=[*options, "-w", str(root), "-e", f"PYTHONPATH={shim}:{root}"])
