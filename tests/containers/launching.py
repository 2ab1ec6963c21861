"""``eagle-tui launch -- podman run …`` / ``docker run …`` of the simulator behind an engine's own
command line (``python -m sglang.launch_server …``, the stand-in package of
``eagle_tui/sim/engines``), as a user types it: host network, this checkout, its venv and the
simulator's folder bind-mounted read-only; ``docker run`` needs an image, made once per machine
with ``podman import`` (the rootfs's empty mount points)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

from eagle_tui.sim.engine_cli import ENGINES_DIR
from tests.support.containers import PREFIX, ContainerEngine

ROOT = Path(__file__).resolve().parents[2]
IMAGE = f"localhost/{PREFIX}hostfs:1"


def host_image(engine: ContainerEngine) -> str:
    """An image of empty mount points and ``/bin`` links, so ``docker run IMAGE …`` runs the
    host's programs as ``podman run --rootfs`` does."""
    if engine.podman("image", "exists", IMAGE).returncode == 0:
        return IMAGE
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for d in ("proc", "sys", "dev", "tmp", "root", "usr", "etc", "opt", "run", "var/tmp"):
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if "tmp" in d else 0o755
            tar.addfile(info)
        for d in ("bin", "sbin", "lib", "lib64"):
            info = tarfile.TarInfo(d)
            info.type, info.linkname = tarfile.SYMTYPE, f"usr/{d}"
            tar.addfile(info)
    done = subprocess.run(["podman", "import", "-", IMAGE], input=buf.getvalue(),
                          capture_output=True, timeout=60, env=engine.envs())
    if done.returncode != 0 and engine.podman("image", "exists", IMAGE).returncode != 0:
        raise RuntimeError(f"podman import failed: {done.stderr.decode(errors='replace')}")
    return IMAGE


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
