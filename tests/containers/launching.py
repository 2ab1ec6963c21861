"""``eagle-tui launch -- podman run …`` / ``docker run …`` of the simulator behind an engine's own
command line (``python -m sglang.launch_server …``, the stand-in package of
``eagle_tui/sim/engines``), as a user types it: host network, this checkout, its venv and the
simulator's folder bind-mounted read-only; ``docker run`` needs an image: the empty one of
``tests/containers/realsglang.py``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from eagle_tui.sim.engine_cli import ENGINES_DIR
from tests.containers.realsglang import host_image
from tests.support.containers import ContainerEngine

ROOT = Path(__file__).resolve().parents[2]


def sim_run(engine: ContainerEngine, cli: str, port: int, workdir: Path,
            *flags: str) -> list[str]:
    """``CLI run --network=host -v … IMAGE python -m sglang.launch_server --port PORT FLAGS``."""
    base = Path(os.path.realpath(sys.executable)).parents[1]
    mounts = [str(p) for p in dict.fromkeys((ROOT, Path(sys.prefix), base, workdir))]
    where = (["--rootfs", str(Path(engine.env["CONTAINERS_STORAGE_CONF"]).parent / "rootfs")]
             if cli == "podman" else [host_image(engine)])
    return [cli, "run", "--network=host", "-v", "/usr:/usr:ro", "-v", "/etc:/etc:ro",
            *[w for p in mounts for w in ("-v", f"{p}:{p}:ro")], "-w", str(ROOT),
            "-e", f"PYTHONPATH={ENGINES_DIR}:{ROOT}", "-e", "EAGLE_TUI_SIM_SPEED=40",
            "--shm-size", "1g", *where, sys.executable, "-m", "sglang.launch_server",
            "--model-path", "meta-llama/Llama-3.3-70B-Instruct", "--device", "cpu",
            "--port", str(port), *flags]


def labelled(engine: ContainerEngine, token: str) -> list[str]:
    """The ids of the containers (running or not) with the run's label."""
    done = engine.podman("ps", "-a", "-q", "--no-trunc", "--filter",
                         f"label=eagle-tui.run={token}")
    return done.stdout.split()


def remove_runs(engine: ContainerEngine, data_dir: Path) -> None:
    """Remove every container the runs of the test's history started (by id)."""
    from eagle_tui.history.store import HistoryError, RunStore

    try:
        runs = RunStore(data_dir / "runs.sqlite3").list(demo=None)
    except HistoryError:
        return
    for run in runs:
        for cid in labelled(engine, run.token or "-"):
            engine.remove(cid)
