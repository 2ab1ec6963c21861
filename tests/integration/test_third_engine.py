"""A third engine from one module (``tests/support/toy_engine.py``), used by every consumer.

The module is named in ``EAGLE_TUI_ENGINES`` (the plugin variable) for the CLI's own processes,
or registered in process for the dashboard and the fleet queries; no other file knows it. Each
test drives a real consumer: ``lint``, ``report --json``, ``attach --list`` against a running
``toyllm`` process, the dashboard tailing a toy log, the fleet's PromQL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eagle_tui.assembly.open import prepare_dashboard
from eagle_tui.assembly.spec import DashboardSpec
from eagle_tui.model.engines import names, register, unregister
from eagle_tui.model.fleet.queries import fleet_groups
from eagle_tui.ui.widgets.status import StatusLine
from tests.support import toy_engine
from tests.support.paths import REPO

TIMEOUT_S = 120


def eagle(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``eagle-tui ARGS`` in its own process with the toy engine named in the plugin variable."""
    full = {**os.environ, "EAGLE_TUI_ENGINES": "tests.support.toy_engine",
            "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "eagle_tui", *args], capture_output=True,
                          text=True, env=full, cwd=REPO, timeout=TIMEOUT_S, check=False)


@pytest.fixture
def toy() -> Iterator[None]:
    register(toy_engine.PROFILE)
    try:
        yield
    finally:
        unregister(toy_engine.PROFILE.name)


def test_lint_and_the_command_reader_use_its_table_and_rule(tmp_path: Path) -> None:
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text('{"hidden_size": 64}', encoding="utf-8")
    proc = eagle("lint", "--json", "--", "toyllm", "serve", "--model", str(model), "--por",
                 "9200")
    doc = json.loads(proc.stdout)
    assert doc["engine"] == "toyllm", proc.stdout + proc.stderr
    codes = [f["code"] for f in doc["findings"]]
    assert "toy-tp" in codes  # its own rule; ``--por`` read as ``--port`` by its table
    assert "toyllm" not in names()  # this process never registered it


def test_report_reads_its_log(tmp_path: Path) -> None:
    log = tmp_path / "toy.log"
    log.write_text(toy_engine.LOG, encoding="utf-8")
    proc = eagle("report", "--json", str(log))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["engine"], doc["phase"], doc["ready"]) == ("toyllm", "serving", True)
    assert doc["accept_len"] == [3.2, 3.4] and doc["gen_throughput"] == [41.5, 45.0]


def test_attach_discovers_a_running_toy_server(tmp_path: Path) -> None:
    script = tmp_path / "toyllm"
    script.write_text(f"#!{sys.executable}\nimport time\ntime.sleep({TIMEOUT_S})\n",
                      encoding="utf-8")
    script.chmod(0o755)
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen([str(script), "serve", "--port", "9177", "--tp", "2",
                                   "--draft", "/d"], stdout=out, stderr=subprocess.STDOUT)
    try:
        time.sleep(0.3)
        proc = eagle("attach", "--list", "--json")
        found = [f for f in json.loads(proc.stdout) if f["pid"] == server.pid]
        assert found, proc.stdout + proc.stderr
        (f,) = found
        assert (f["engine"], f["port"], f["tp"], f["draft"], f["algorithm"]) == (
            "toyllm", 9177, 2, "/d", "toy")
        assert f["log"] == str(log) and f["log_kind"] == "file"
    finally:
        server.kill()
        server.wait(10)


def test_a_bad_plugin_is_one_line_and_exit_2() -> None:
    proc = eagle("report", "--json", "x.log", env={"EAGLE_TUI_ENGINES": "no_such_module_xyz"})
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "EAGLE_TUI_ENGINES" in proc.stderr
    proc = eagle("lint", "--", "x", env={"EAGLE_TUI_ENGINES": "os:path"})
    assert proc.returncode == 2 and "is not an engine profile" in proc.stderr


def test_the_fleet_asks_prometheus_for_it(toy: None) -> None:
    groups = {g.name: dict(g.figures) for g in fleet_groups('job="x"')}
    assert '"engine", "toyllm"' in groups["state"]["engine_toyllm"]
    assert "toy:tokens_total" in groups["rates"]["tok_s"]


async def test_the_dashboard_tails_its_log_and_names_it(toy: None, tmp_path: Path) -> None:
    log = tmp_path / "toy.log"
    log.write_text(toy_engine.LOG, encoding="utf-8")
    dash = prepare_dashboard(DashboardSpec(log=str(log), gpu="none"))
    app = dash.app
    async with app.run_test(size=(120, 40)) as pilot:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            await pilot.pause(0.1)
            last = app.state.stats.last_decode
            if last is not None and last.gen_tps == 45.0:
                break
        assert app.state.startup.engine == "toyllm"
        assert app.state.startup.phase.value == "serving"
        status = str(app.query_one(StatusLine).render())
        assert "toyllm" in status and "45" in status
        await pilot.press("q")
