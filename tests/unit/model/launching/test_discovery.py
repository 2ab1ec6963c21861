"""Server discovery from a process scan: launchers, their trees, their logs, never our own.

The rows are shaped like real scans: a real SGLang 0.5.23 CPU server (launcher, multiprocessing
resource tracker and spawned scheduler/detokenizer), a ``vllm serve`` with its EngineCore, an
eagle-tui remote ``tail`` following a log, and an unrelated python.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.launching.discovery import (
    ProcRow,
    find_servers,
    log_target,
    parse_scan,
    scan_record,
)
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


def test_parse_scan_skips_garbage_and_a_record_cut_short() -> None:
    good = scan_record(1, 0, 1, "5", "/a", "/a", "/", ("python", "-m", "sglang.launch_server"))
    data = b"Welcome\nx\ty\n2 1 zz 5 1 1 1 1\n" + good + b"3 1 3 5 2 2 1 900\n/a/a/python"
    rows = parse_scan(data)
    assert [r.pid for r in rows] == [1]
    assert rows[0].argv == ("python", "-m", "sglang.launch_server")


FIELD = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(FIELD, FIELD, FIELD, st.lists(FIELD.filter(lambda a: a and
                                                                    "\x1f" not in a),
                                                         min_size=1, max_size=5)),
                min_size=1, max_size=6))
def test_no_field_can_start_a_row_of_its_own(procs: list[tuple[str, str, str, list[str]]]) -> None:
    """A process's argv, folder or log path that reads as another row (a tab, a newline, a line
    separator, a whole forged record) stays in its own row: the fields are counted."""
    rows = [ProcRow(100 + i, 1, 100 + i, "5", o, e, w, tuple(argv))
            for i, (o, e, w, argv) in enumerate(procs)]
    data = b"".join(scan_record(r.pid, r.ppid, r.pgid, r.start, r.stdout, r.stderr, r.cwd, r.argv)
                    for r in rows)
    assert parse_scan(data) == rows


def test_a_forged_row_in_an_argv_is_no_process() -> None:
    forged = "\n99999\t1\t99999\t1\t/secret\t/secret\t/\tpython3\x1f-m\x1fsglang.launch_server"
    fake = scan_record(99999, 1, 99999, "1", "/secret", "/secret", "/",
                       ("python3", "-m", "sglang.launch_server"))
    argv = ("python3", "-c", "pass", forged, fake.decode())
    rows = parse_scan(scan_record(7, 1, 7, "5", "/dev/null", "/dev/null", "/", argv))
    assert [r.pid for r in rows] == [7] and rows[0].argv[:3] == argv[:3]


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


async def test_a_process_on_this_machine_cannot_forge_a_server(tmp_path: Path) -> None:
    """The real scan on this machine: a process whose argv holds a whole forged row (a newline,
    tabs, a line separator) is one process, and no server of the forged pid is found."""
    import subprocess
    import sys

    forged = ("\n99999\t1\t99999\t1\t/secret\t/secret\t/\tpython3\x1f-m\x1fsglang.launch_server"
              "\x1f--port\x1f31337\u2028" + "99998 1 99998 1 7 7 1 37\n/secret/secret/python3")
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", forged],
                            cwd=tmp_path)
    try:
        found = await asyncio.wait_for(discover(LocalTransport()), 30)
        assert not [f for f in found if f.launcher.pid in (99999, 99998)]
        assert not [f for f in found if "/secret" in (f.log_path or "")]
    finally:
        proc.kill()
        proc.wait()
