"""``eagle-tui launch`` / ``stop`` with a stand-in engine that a real ``python -m`` runs.

The stand-in is a package named ``sglang`` on ``PYTHONPATH`` whose ``launch_server`` answers
``/health`` on ``--port`` and starts a worker child (as SGLang's scheduler is), so the command
line is exactly the one a user types and the process group has more than one member. The real
engines are launched by the real-server tests.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from eagle_tui.history.store import RunStore

SHIM = '''
import http.server, os, subprocess, sys, threading, time
port = int(sys.argv[sys.argv.index("--port") + 1])
print("[2026-12-01 10:00:00] server_args=ServerArgs(model_path='m')", flush=True)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print(f"worker {child.pid} token={os.environ.get('EAGLE_TUI_RUN', '')[:4]}", flush=True)
print("secret seen: " + ("yes" if os.environ.get("MY_SECRET") == "s3cr3t" else "no"),
      flush=True)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers()
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
print("[2026-12-01 10:00:01] The server is fired up and ready to roll!", flush=True)
srv.serve_forever()
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def reap_runs(data_dir: Path) -> None:
    """Kill every process of every run recorded in ``data_dir`` (a test's cleanup, pass or
    fail: a launched server outlives the test otherwise)."""
    from tests.integration.test_stop_membership import kill_carriers

    if (data_dir / "runs.sqlite3").exists():
        kill_carriers([r.token for r in RunStore(data_dir / "runs.sqlite3").list(demo=None)
                       if r.token])


@pytest.fixture
def shim_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    pkg = tmp_path / "shim" / "sglang"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "launch_server.py").write_text(SHIM)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path / "shim"), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "EAGLE_TUI_DATA_DIR": str(tmp_path / "data"), "MY_SECRET": "s3cr3t"}
    try:
        yield env
    finally:
        reap_runs(tmp_path / "data")


def cli(args: list[str], env: dict[str, str],
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eagle_tui", *args], capture_output=True,
                          text=True, env=env, timeout=timeout, check=False,
                          stdin=subprocess.DEVNULL)


def group_alive(pgid: int) -> list[int]:
    return [p.pid for p in psutil.process_iter() if _pgid(p.pid) == pgid]


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def test_launch_survives_exit_and_stop_kills_the_group(tmp_path: Path,
                                                       shim_env: dict[str, str]) -> None:
    port = free_port()
    target = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "target"
    cmd = ["--", "python", "-m", "sglang.launch_server", "--model-path", str(target),
           "--port", str(port), "--api-key", "sk-abcdefghijklmnopqrstuv"]
    p = cli(["launch", "--no-tui", "--json", "--timeout", "30", "--name", "first",
             "--env", "MY_SECRET", *cmd], shim_env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "started run #1 first" in p.stderr
    store = RunStore(Path(shim_env["EAGLE_TUI_DATA_DIR"]) / "runs.sqlite3")
    run = store.get("first")
    assert run.kind == "launched" and run.pgid == run.pid and run.state == "ready"
    assert "sk-abc" not in (run.command or "") and "***" in (run.command or "")
    assert run.env_names == ["MY_SECRET"]
    raw = (Path(shim_env["EAGLE_TUI_DATA_DIR"]) / "runs.sqlite3").read_bytes()
    assert b"s3cr3t" not in raw and b"sk-abcdefghijkl" not in raw
    # the server outlived eagle-tui, in its own group with a worker, secret passed by stdin
    assert run.pgid is not None and len(group_alive(run.pgid)) >= 2
    log = Path(run.log_path or "").read_text()
    assert "secret seen: yes" in log
    for proc in psutil.process_iter(["cmdline"]):
        assert "s3cr3t" not in " ".join(proc.info["cmdline"] or [])
    # a second launch on the same port is refused by lint
    p2 = cli(["launch", "--no-tui", *cmd], shim_env)
    assert p2.returncode == 2 and "port" in p2.stderr and "in use" in p2.stderr
    # stop without --yes and no terminal: refused, nothing killed
    assert cli(["stop", "first"], shim_env).returncode == 2
    assert len(group_alive(run.pgid)) >= 2
    p3 = cli(["stop", "last", "--yes", "--grace", "5"], shim_env)
    assert p3.returncode == 0, p3.stderr
    assert "stopped run #1 first: " in p3.stdout and "ended after TERM" in p3.stdout
    deadline = time.monotonic() + 10
    while group_alive(run.pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_alive(run.pgid) == []
    assert store.get("1").state == "stopped"
    assert cli(["stop", "1", "--yes"], shim_env).returncode == 0  # already gone: fine


def test_stop_leaves_a_foreign_group_alone(tmp_path: Path, shim_env: dict[str, str]) -> None:
    foreign = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                               start_new_session=True)
    try:
        store = RunStore(Path(shim_env["EAGLE_TUI_DATA_DIR"]) / "runs.sqlite3")
        stat = Path(f"/proc/{foreign.pid}/stat").read_text().rsplit(")", 1)[1].split()
        # a record that points at a group eagle-tui did not start (no token in its env)
        store.add(kind="launched", name="forged", pid=foreign.pid, pgid=foreign.pid,
                  proc_start=stat[19], token="0123456789abcdef", state="ready")
        # nothing carries the run's token: nothing of the run runs, the pid is left alone
        p = cli(["stop", "forged", "--yes"], shim_env)
        assert p.returncode == 0, p.stderr
        assert "not running (no process carries its token)" in p.stdout
        assert f"pid {foreign.pid} does not show the run's token" in p.stderr
        assert "left alone" in p.stderr
        assert foreign.poll() is None
        store.add(kind="launched", name="reused", pid=foreign.pid, pgid=foreign.pid,
                  proc_start="1", token="0123456789abcdef", state="ready")
        p = cli(["stop", "reused", "--yes"], shim_env)
        assert p.returncode == 0 and f"pid {foreign.pid} is another process now" in p.stderr
        assert foreign.poll() is None
        watched = store.add(kind="watched", name="seen", pid=foreign.pid, state="ready")
        p = cli(["stop", str(watched.id), "--yes"], shim_env)
        assert p.returncode == 2 and "only watched" in p.stderr
        assert foreign.poll() is None
    finally:
        os.killpg(foreign.pid, signal.SIGKILL)
        foreign.wait()


def test_launch_refused_on_lint_errors_unless_forced(tmp_path: Path,
                                                     shim_env: dict[str, str]) -> None:
    fix = Path(__file__).resolve().parents[1] / "fixtures" / "lint"
    port = free_port()
    cmd = ["--", "python", "-m", "sglang.launch_server", "--model-path", str(fix / "target"),
           "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path",
           str(fix / "eagle3-sglang"), "--port", str(port), "--device", "cpu"]
    p = cli(["launch", "--no-tui", *cmd], shim_env)
    assert p.returncode == 2
    assert "use EAGLE3" in p.stderr and "refused: lint found errors" in p.stderr
    p = cli(["launch", "--no-tui", "--force", "--json", "--timeout", "30", *cmd], shim_env)
    try:
        assert p.returncode == 0, p.stderr
        last = json.loads(p.stdout.strip().splitlines()[-1])
        assert last["status"] == "ready"
    finally:
        assert cli(["stop", "last", "--yes"], shim_env).returncode == 0


def test_launch_fix_applies_the_lints_remedies_and_says_so(
        tmp_path: Path, shim_env: dict[str, str]) -> None:
    fix = Path(__file__).resolve().parents[1] / "fixtures" / "lint"
    port = free_port()
    cmd = ["--", "python", "-m", "sglang.launch_server", "--model-path", str(fix / "target"),
           "--speculative-algo=EAGLE", "--speculative-draft-model-path",
           str(fix / "eagle3-sglang"), "--port", str(port), "--device", "cpu"]
    p = cli(["launch", "--no-tui", "--fix", "--json", "--timeout", "30", *cmd], shim_env)
    try:
        assert p.returncode == 0, p.stderr
        assert "fixed spec-eagle3-draft-as-eagle" in p.stderr
        assert "--speculative-algo=EAGLE3" in p.stderr and "refused" not in p.stderr
        run = RunStore(tmp_path / "data" / "runs.sqlite3").list(demo=None)[0]
        assert "--speculative-algo=EAGLE3" in (run.command or "")
    finally:
        assert cli(["stop", "last", "--yes"], shim_env).returncode == 0


def test_attach_discovers_the_launched_server(tmp_path: Path, shim_env: dict[str, str]) -> None:
    target = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "target"
    port = free_port()
    cmd = ["--", "python", "-m", "sglang.launch_server", "--model-path", str(target),
           "--port", str(port)]
    assert cli(["launch", "--no-tui", "--timeout", "30", *cmd], shim_env).returncode == 0
    try:
        run = RunStore(Path(shim_env["EAGLE_TUI_DATA_DIR"]) / "runs.sqlite3").get("last")
        p = cli(["attach", "--list", "--json"], shim_env)
        found = [f for f in json.loads(p.stdout) if f["pid"] == run.pid]
        assert len(found) == 1 and found[0]["log"] == run.log_path
        assert found[0]["port"] == port and found[0]["log_kind"] == "file"
        pick = json.loads(p.stdout).index(found[0]) + 1
        w = cli(["attach", "--pick", str(pick), "--headless", "--json", "--duration", "3"],
                shim_env)
        assert w.returncode == 0, w.stderr
        lines = [json.loads(x) for x in w.stdout.splitlines() if x.startswith("{")]
        assert any(x.get("health") == "ready" or x.get("status") == "ready" for x in lines), \
            w.stdout[-2000:]
        assert "pid " + str(run.pid) in w.stderr
    finally:
        assert cli(["stop", "last", "--yes"], shim_env).returncode == 0


def test_watch_with_nothing_to_watch_finds_the_server(tmp_path: Path,
                                                      shim_env: dict[str, str]) -> None:
    target = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "target"
    port = free_port()
    cmd = ["--", "python", "-m", "sglang.launch_server", "--model-path", str(target),
           "--port", str(port)]
    assert cli(["launch", "--no-tui", "--timeout", "30", "--name", "w", *cmd],
               shim_env).returncode == 0
    try:
        run = RunStore(Path(shim_env["EAGLE_TUI_DATA_DIR"]) / "runs.sqlite3").get("w")
        found = json.loads(cli(["attach", "--list", "--json"], shim_env).stdout)
        pick = next(i for i, f in enumerate(found, 1) if f["pid"] == run.pid)
        w = cli(["watch", "--pick", str(pick), "--headless", "--json", "--duration", "3"],
                shim_env)
        assert w.returncode == 0, w.stderr
        assert f"pid {run.pid}" in w.stderr and str(port) in w.stderr
        # the launched run's own row is reused, and it got the watch's summary
        rows = RunStore(Path(shim_env["EAGLE_TUI_DATA_DIR"]) / "runs.sqlite3").list()
        assert [r.name for r in rows] == ["w"]
    finally:
        assert cli(["stop", "w", "--yes"], shim_env).returncode == 0


# the stand-in with its worker in a session of its own (a daemon, as `setsid` makes)
DAEMON_SHIM = SHIM.replace('"import time; time.sleep(600)"])',
                           '"import time; time.sleep(600)"], start_new_session=True)')


def _daemon_shim_env(tmp_path: Path, shim_env: dict[str, str]) -> dict[str, str]:
    (tmp_path / "shim" / "sglang" / "launch_server.py").write_text(DAEMON_SHIM)
    return shim_env


def _worker_pid(log: str) -> int:
    until = time.monotonic() + 20
    while time.monotonic() < until:
        for line in Path(log).read_text().splitlines():
            if line.startswith("worker "):
                return int(line.split()[1])
        time.sleep(0.05)
    raise AssertionError(f"no worker line in {log}")


def _kill_token(token: str) -> None:
    from tests.integration.test_stop_membership import kill_carriers

    kill_carriers([token])


def test_stop_finds_a_worker_that_left_the_group(tmp_path: Path,
                                                 shim_env: dict[str, str]) -> None:
    env = _daemon_shim_env(tmp_path, shim_env)
    target = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "target"
    cmd = ["--", "python", "-m", "sglang.launch_server", "--model-path", str(target),
           "--port", str(free_port())]
    p = cli(["launch", "--no-tui", "--timeout", "30", "--name", "d", *cmd], env)
    assert p.returncode == 0, p.stdout + p.stderr
    run = RunStore(Path(env["EAGLE_TUI_DATA_DIR"]) / "runs.sqlite3").get("d")
    try:
        worker = _worker_pid(run.log_path or "")
        assert os.getsid(worker) == worker != run.pgid
        assert worker not in group_alive(run.pgid or 0)
        p = cli(["stop", "d", "--yes", "--grace", "5"], env)
        assert p.returncode == 0, p.stderr
        pids = " ".join(str(x) for x in sorted([run.pid or 0, worker]))
        assert f"stopped run #1 d: 2 processes (pids {pids})" in p.stdout
        assert not psutil.pid_exists(worker) or psutil.Process(worker).status() == "zombie"
    finally:
        _kill_token(run.token or "")


def test_the_dashboards_k_stops_a_worker_that_left_the_group(
        tmp_path: Path, shim_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse
    import asyncio
    import io
    import threading

    from eagle_tui.assembly.control import LaunchControl
    from eagle_tui.commands.launch import launch_async
    from eagle_tui.model.launching.control import Kill, Outcome

    env = _daemon_shim_env(tmp_path, shim_env)
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
    target = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "target"
    args = argparse.Namespace(env=[], cwd=str(tmp_path), force=True, name="k", log=None,
                              baseline=None, no_tui=False, json=False)
    words = ["python", "-m", "sglang.launch_server", "--model-path", str(target), "--port",
             str(free_port())]
    code, started = asyncio.run(launch_async(args, words, io.StringIO(), io.StringIO()))
    assert started is not None, code
    try:
        worker = _worker_pid(started.launched.log_path)
        assert os.getsid(worker) == worker != started.launched.pgid
        control = LaunchControl(store=RunStore(), spec=started.spec, prep=started.prep,
                                run=started.run, launched=started.launched, grace=5)
        got: list[Outcome] = []
        done = threading.Event()
        control.request(Kill(), lambda o: (got.append(o), done.set()))
        assert done.wait(60)
        control.close()
        assert got[0].kind == "stopped", got[0].message
        assert "2 processes" in got[0].message
        assert not psutil.pid_exists(worker) or psutil.Process(worker).status() == "zombie"
    finally:
        _kill_token(started.launched.token)


def test_a_start_whose_answer_is_lost_can_still_be_stopped(
        tmp_path: Path, shim_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The server started but its start script's answer never came back (a dropped
    connection): the run is recorded failed, with its token, and ``stop`` finds the server."""
    import asyncio

    from eagle_tui.launch.plan import prepare, start
    from eagle_tui.launch.process import LaunchError
    from eagle_tui.transport.base import RunResult, TransportError
    from eagle_tui.transport.local import LocalTransport

    class AnswerLost(LocalTransport):
        async def run(self, argv: list[str], timeout: float = 10.0, *,
                      stdin: bytes | None = None) -> RunResult:
            await super().run(argv, timeout, stdin=stdin)
            raise TransportError("connection lost")

    monkeypatch.setenv("PYTHONPATH", shim_env["PYTHONPATH"])
    store = RunStore(Path(shim_env["EAGLE_TUI_DATA_DIR"]) / "runs.sqlite3")
    target = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "target"
    words = ["python", "-m", "sglang.launch_server", "--model-path", str(target), "--port",
             str(free_port())]

    async def go() -> None:
        prep = await prepare(LocalTransport(), words, cwd=str(tmp_path))
        with pytest.raises(LaunchError, match="connection lost"):
            await start(store, AnswerLost(), prep, name="lost")

    asyncio.run(go())
    run = store.get("lost")
    assert run.state == "failed" and run.pid is None and run.token
    from tests.integration.test_stop_membership import members

    worker = _worker_pid(run.log_path or "")
    # the server and its worker run, recorded nowhere but by the token (awaited: between the
    # exec that lets Popen return and the new image's environment, /proc/PID/environ is empty)
    until = time.monotonic() + 10
    while worker not in [p.pid for p in members(run.token)] and time.monotonic() < until:
        time.sleep(0.05)
    assert worker in [p.pid for p in members(run.token)]
    p = cli(["stop", "lost", "--yes", "--grace", "5"], shim_env)
    assert p.returncode == 0, p.stderr
    assert "stopped run" in p.stdout and str(worker) in p.stdout
    assert members(run.token) == []


OLD_RUN = (
    "[2026-11-30 09:00:00] server_args=ServerArgs(model_path='m')\n"
    "Traceback (most recent call last):\n"
    '  File "/x/model_runner.py", line 10, in init_memory_pool\n'
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total "
    "capacity of 79.19 GiB of which 1.01 GiB is free.\n"
)


def test_a_log_that_held_another_run_is_followed_from_this_runs_first_byte(
        tmp_path: Path, shim_env: dict[str, str]) -> None:
    """``--log`` naming a file an earlier server wrote (it crashed with a CUDA OOM): the
    launch appends, keeps the old bytes, and follows only its own run. The old crash was read
    as this run's: ``launch --no-tui`` exited 1 ("crashed") at once while the new server was
    starting, and the dashboard showed the old run's phases and figures."""
    log = tmp_path / "server.log"
    log.write_text(OLD_RUN)
    port = free_port()
    target = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "target"
    p = cli(["launch", "--no-tui", "--json", "--timeout", "30", "--log", str(log), "--",
             "python", "-m", "sglang.launch_server", "--model-path", str(target),
             "--port", str(port)], shim_env)
    try:
        assert p.returncode == 0, p.stdout + p.stderr
        last = json.loads(p.stdout.strip().splitlines()[-1])
        assert last["status"] == "ready" and "crash" not in json.dumps(last).lower(), last
        run = RunStore(tmp_path / "data" / "runs.sqlite3").get("last")
        assert run.log_offset == len(OLD_RUN.encode())
        text = log.read_text()
        assert text.startswith(OLD_RUN) and "fired up and ready" in text[len(OLD_RUN):]
    finally:
        assert cli(["stop", "last", "--yes"], shim_env).returncode == 0
