"""The dashboard demo: the simulated server started as a launched run, so K/R/E work on it.

``eagle-tui demo`` on a terminal starts the simulator through the same machinery as
``eagle-tui launch``: the engine's own command line is linted, started detached in its own
process group and recorded in the run history (``demo=1``: kept apart from real runs). The
``python`` and ``vllm`` it runs are the demo's (a bin folder first on ``PATH``, the stand-in
``sglang`` package on ``PYTHONPATH``), so a user can press ``E``, fix ``EAGLE`` → ``EAGLE3``,
relaunch and see the new run beside the old one. Every run's session drives the demo's small
load once it is ready.

On exit the current run's group is stopped (the demo leaves nothing running), ``PATH`` is
restored and the temporary folder is removed. ``--headless`` keeps the simulator as a child
process (``commands/demo.py``): there are no keys to press there.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import eagle_tui
from eagle_tui.assembly.control import LaunchControl, SubscribersFor
from eagle_tui.assembly.spec import DashboardSpec, check_sources
from eagle_tui.assembly.threaded import Subscriber
from eagle_tui.history.recorder import HistoryRecorder
from eagle_tui.history.records import RunRecord
from eagle_tui.history.store import RunStore
from eagle_tui.sim.engine_cli import ENGINES_DIR
from eagle_tui.sim.runtime import free_port, prepare_workdir
from eagle_tui.sim.scenario import BASELINE_TOK_S
from eagle_tui.sim.standins import demo_command, write_stand_ins

STOP_GRACE_S = 3.0
def sim_env(bin_dir: Path, workdir: Path, speed: float, scenario: str) -> dict[str, str]:
    """The launched environment: the demo's ``python``/``vllm`` first on ``PATH``, the
    stand-in engines importable, the simulator's speed and folder; the scenario only when
    the flags cannot say it (oom, nccl-timeout, ...)."""
    write_stand_ins(bin_dir)
    package_root = str(Path(eagle_tui.__file__).resolve().parents[1])
    env = {
        "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ENGINES_DIR), package_root,
                                                    os.environ.get("PYTHONPATH")])),
        "EAGLE_TUI_SIM_SPEED": f"{speed:g}",
        "EAGLE_TUI_SIM_WORKDIR": str(workdir),
    }
    if scenario not in ("healthy", "misconfigured"):
        env["EAGLE_TUI_SIM_SCENARIO"] = scenario
    return env


def demo_subscribers(store: RunStore) -> SubscribersFor:
    """Per run: its history row, and the demo's load once it is ready."""
    from eagle_tui.commands.demo_load import start_load_when_ready

    def make(run: RunRecord, spec: DashboardSpec) -> Sequence[Subscriber]:
        return (HistoryRecorder(store, run.id).on_batch,
                start_load_when_ready(spec.url or ""))

    return make


class DemoLaunch:
    """The launched simulated run, its control and its temporary folder."""

    def __init__(self, args: argparse.Namespace, store: RunStore | None = None) -> None:
        self.args = args
        self.store = store if store is not None else RunStore()
        self.tmp = Path(tempfile.mkdtemp(prefix="eagle-tui-demo-"))
        self.port = args.port or free_port()
        self.control: LaunchControl | None = None
        self._old_path: str | None = None

    async def start(self) -> tuple[DashboardSpec, LaunchControl]:
        from eagle_tui.launch.plan import prepare, start
        from eagle_tui.transport.local import LocalTransport

        a = self.args
        paths = prepare_workdir(self.tmp, a.engine, a.gpus, a.seed)
        self._old_path = os.environ.get("PATH", "")  # the GPU pane's nvidia-smi is the demo's
        os.environ["PATH"] = paths["bin"] + os.pathsep + self._old_path
        env = sim_env(Path(paths["bin"]), self.tmp, a.speed, a.scenario)
        argv = demo_command(a.engine, a.scenario, paths["draft"], self.port, a.gpus)
        transport = LocalTransport()
        prep = await prepare(transport, argv, cwd=str(self.tmp), env=env)
        run, launched = await start(self.store, transport, prep, demo=True,
                                    log_path=str(self.tmp / "run-1.log"),
                                    baseline=BASELINE_TOK_S)
        spec = check_sources(DashboardSpec(
            log=launched.log_path, log_offset=launched.log_offset, url=prep.url,
            pid=launched.pid, record=a.record,
            baseline=BASELINE_TOK_S, draft_config=paths["draft"], gpu="smi",
            health_interval=0.5, label=f"demo {run.label}: {a.engine} {a.scenario}",
            command="demo"))
        make = demo_subscribers(self.store)
        self.control = LaunchControl(store=self.store, spec=spec, prep=prep, run=run,
                                     launched=launched, demo=True, log_dir=str(self.tmp),
                                     subscribers_for=make,
                                     label_for=lambda r, _la: f"demo {r.label}: {a.engine}",
                                     grace=STOP_GRACE_S)
        return spec, self.control

    def close(self) -> None:
        """Stop the current run (its whole group), restore ``PATH``, remove the folder."""
        control, self.control = self.control, None
        try:
            if control is not None:
                try:
                    control.stop_current()
                finally:
                    control.close()
        finally:
            if self._old_path is not None:
                os.environ["PATH"] = self._old_path
                self._old_path = None
            shutil.rmtree(self.tmp, ignore_errors=True)


def run_dashboard(args: argparse.Namespace) -> int:
    """``demo`` on a terminal: launch the simulated run and open the dashboard with K/R/E."""
    from eagle_tui.assembly.open import open_dashboard

    demo = DemoLaunch(args)
    try:
        spec, control = asyncio.run(demo.start())
        first = demo_subscribers(demo.store)(control.run, spec)
        return open_dashboard(spec, subscribers=first, control=control)
    finally:
        demo.close()


__all__ = ["DemoLaunch", "demo_command", "demo_subscribers", "run_dashboard", "sim_env"]
