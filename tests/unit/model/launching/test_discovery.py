"""Server discovery from a process scan: launchers, their trees, their logs, never our own.

The rows are shaped like real scans: a real SGLang 0.5.23 CPU server (launcher, multiprocessing
resource tracker and spawned scheduler/detokenizer), a ``vllm serve`` with its EngineCore, an
eagle-tui remote ``tail`` following a log, and an unrelated python.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from eagle_tui.model.launching.discovery import ProcRow, find_servers, log_target, parse_scan
from eagle_tui.probe.discover import discover
from eagle_tui.probe.tables import load_tables
from eagle_tui.transport.local import LocalTransport

VENV = "/root/venv/bin/python"
SG = (VENV, "-m", "sglang.launch_server", "--model-path", "/m/tiny-llama", "--port", "40361",
      "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/m/draft",
      "--tp-size", "2")


def row(pid: int, ppid: int, argv: tuple[str, ...], out: str = "/data/run.log",
        pgid: int | None = None) -> ProcRow:
    return ProcRow(pid, ppid, pgid or pid, "100", out, out, "/work", argv)


ROWS = [
    row(4504, 1584, SG),
    row(4622, 4504, (VENV, "-B", "-c", "from multiprocessing.resource_tracker import main;"
                                       "main(6)"), pgid=4504),
    row(4623, 4504, (VENV, "-B", "-c", "from multiprocessing.spawn import spawn_main; "
                     "spawn_main(tracker_fd=7, pipe_handle=9)", "--multiprocessing-fork"),
        pgid=4504),
    row(7000, 1, ("vllm", "serve", "/m", "--port", "8011", "--speculative-config",
                  '{"method": "eagle3", "model": "/d", "num_speculative_tokens": 3}'),
        out="pipe:[1234]"),
    row(7010, 7000, ("VLLM::EngineCore",), out="pipe:[1234]", pgid=7000),
    row(7020, 7000, (VENV, "-m", "vllm.entrypoints.openai.api_server", "--model", "/m"),
        out="pipe:[1234]", pgid=7000),
    row(8000, 1, ("tail", "-c", "+1", "-F", "--pid=7999", "/data/run.log")),
    row(8001, 1, ("sh", "-c", "exec tail -F /data/run.log # eagle-tui", "eagle-tui-tail")),
    row(8100, 1, (VENV, "-m", "eagle_tui", "watch", "--log", "/data/run.log")),
    row(8200, 1, (VENV, "train.py")),
]


def test_servers_are_grouped_with_their_trees() -> None:
    found = find_servers(ROWS, load_tables())
    assert [f.launcher.pid for f in found] == [4504, 7000]
    sg, vl = found
    assert sg.engine == "sglang" and sg.port == 40361 and sg.url == "http://127.0.0.1:40361"
    assert sg.algorithm == "EAGLE3" and sg.draft == "/m/draft" and sg.tp == 2
    assert [m.pid for m in sg.members] == [4504, 4622, 4623]
    assert sg.log_kind == "file" and sg.log_path == "/data/run.log"
    # the inner API server belongs to `vllm serve`, not a second server
    assert vl.engine == "vllm" and [m.pid for m in vl.members] == [7000, 7010, 7020]
    assert vl.algorithm == "eagle3" and vl.port == 8011
    assert vl.log_kind == "pipe" and vl.log_path is None
    assert "log: pipe" in vl.describe()


def test_own_processes_and_tails_are_never_servers() -> None:
    own = [r for r in ROWS if r.pid >= 8000]
    assert find_servers(own, load_tables()) == []


def test_log_targets() -> None:
    assert log_target("/data/x.log (deleted)", "/") == ("deleted", "/data/x.log")
    assert log_target("/dev/pts/3", "/")[0] == "terminal"
    assert log_target("socket:[9]", "/")[0] == "socket"
    assert log_target("/dev/null", "/")[0] == "none"


def test_parse_scan_is_bounded_and_skips_garbage() -> None:
    text = "\n".join(["x\ty", "1\t0\t1\t5\t/a\t/a\t/\tpython\x1f-m\x1fsglang.launch_server",
                      "2\t1\tzz\t5\t/a\t/a\t/\tpython"])
    rows = parse_scan(text)
    assert [r.pid for r in rows] == [1]
    assert rows[0].argv == ("python", "-m", "sglang.launch_server")


async def test_scan_of_this_machine_finds_a_started_stand_in(tmp_path: Path) -> None:
    pkg = tmp_path / "sglang"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "launch_server.py").write_text("import time\ntime.sleep(60)\n")
    log = tmp_path / "server.log"
    import os
    import subprocess
    import sys

    with log.open("wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "sglang.launch_server", "--model-path",
                                 "/m", "--port", "31999"], stdout=fh, stderr=subprocess.STDOUT,
                                cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    try:
        found = await asyncio.wait_for(discover(LocalTransport()), 30)
        mine = [f for f in found if f.launcher.pid == proc.pid]
        assert len(mine) == 1 and mine[0].log_path == str(log) and mine[0].port == 31999
    finally:
        proc.kill()
        proc.wait()


def test_a_server_under_a_folder_named_eagle_tui_is_still_a_server() -> None:
    argv = ("/root/.cache/eagle-tui-test/sglang-cpu/venv/bin/python", "-m",
            "sglang.launch_server", "--model-path", "/m", "--port", "4444")
    found = find_servers([row(10, 1, argv)], load_tables())
    assert [f.launcher.pid for f in found] == [10]
    own = [row(11, 1, ("/usr/bin/eagle-tui", "watch")),
           row(12, 1, (VENV, "-m", "eagle_tui.sim", "--port", "1")),
           row(13, 1, ("sh", "-c", "exit 0", "eagle-tui-scan"))]
    assert find_servers(own, load_tables()) == []
