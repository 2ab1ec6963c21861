"""``eagle-tui wait`` end to end, as a user runs it: a subprocess against real files, a real
HTTP server and real processes. Timings are asserted loosely (seconds, not milliseconds)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eagle_tui.headless.progress import verdict
from eagle_tui.model.events import (
    CrashEvent,
    HealthSample,
    Phase,
    PhaseEvent,
    ProcessExited,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState

ROOT = Path(__file__).resolve().parents[2]

# SGLang, late-2025 format (SAMPLES.md b): startup, weights, then a CUDA OOM while capturing
# CUDA graphs; the fixture holds the three stages between "#--- name" markers.
_PARTS = (ROOT / "tests" / "fixtures" / "wait" / "sglang-oom-cuda-graph.log").read_text()
SGLANG_START, SGLANG_LOADED, SGLANG_OOM = (
    part.split("\n", 1)[1] for part in _PARTS.split("#--- ")[1:]
)

HTTP_SERVER = textwrap.dedent("""
    import http.server, sys, threading
    starting_answers = int(sys.argv[1])  # 503s before the first 200: a count, not a time, so a
    lock = threading.Lock()              # slow interpreter start-up on a busy box changes nothing
    count = [0]
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            with lock:  # only readiness counts: other endpoints (/metrics, /v1/models) may be asked
                count[0] += self.path.startswith(("/health", "/ready"))
                code = 200 if count[0] > starting_answers else 503
            self.send_response(code)
            self.send_header("content-length", "0")
            self.end_headers()
        def log_message(self, *a):
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()
""")


def wait_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "eagle_tui", "wait", "--gpu", "none", *args]


def start_wait(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(wait_cmd(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)


def finish(proc: subprocess.Popen[str], limit: float = 30.0) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"wait did not exit within {limit} s:\n{out}\n{err}") from None
    return proc.returncode, out, err


@pytest.fixture
def http_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real HTTP server on 127.0.0.1: 503 to its first 3 requests, then 200."""
    proc = subprocess.Popen([sys.executable, "-c", HTTP_SERVER, "3"], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    yield f"http://127.0.0.1:{port}", proc
    proc.kill()
    proc.wait()


def test_ready_when_health_turns_200(http_server: tuple[str, subprocess.Popen[bytes]],
                                     tmp_path: Path) -> None:
    url, _server = http_server
    log = tmp_path / "server.log"
    log.write_text(SGLANG_START)
    t0 = time.monotonic()
    record = tmp_path / "rec" / "session.jsonl"
    code, out, err = finish(start_wait("--url", url, "--log", str(log), "--timeout", "30",
                                       "--record", str(record)))
    took = time.monotonic() - t0
    assert code == 0, out + err
    assert "READY" in out and "/ready answered 200" in out
    assert "health: starting" in out  # progress line while it answered 503
    assert 1.0 <= took < 20.0
    recorded = [json.loads(ln) for ln in record.read_text().splitlines()]
    assert recorded[0]["format"] == "eagle-tui-record"
    states = [r["state"] for r in recorded if r.get("type") == "HealthSample"]
    assert states[0] == "starting" and states[-1] == "ready"
    assert any(r.get("type") == "LogLine" for r in recorded)


def test_ready_json_has_progress_objects_and_a_result(
        http_server: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, _ = http_server
    code, out, err = finish(start_wait("--url", url, "--timeout", "30", "--json"))
    assert code == 0, err
    objs = [json.loads(line) for line in out.splitlines()]
    assert objs[-1]["event"] == "result"
    assert objs[-1]["status"] == "ready" and objs[-1]["exit_code"] == 0
    progress = [o for o in objs if o["event"] == "progress"]
    assert progress and {"phase", "elapsed_s", "health", "process", "gpus"} <= set(progress[0])
    assert "starting" in [o["health"] for o in progress]


def test_oom_in_a_growing_log_exits_1_fast_with_the_diagnosis(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(SGLANG_START)
    proc = start_wait("--log", str(log), "--timeout", "60")
    assert proc.stdout is not None
    # wait until `wait` has read the start of the log (its first progress line), not a fixed
    # time: interpreter start-up on a loaded 2-core CI box can take longer than any guess
    first = proc.stdout.readline()
    assert "phase:" in first, first
    with log.open("a") as fh:
        fh.write(SGLANG_LOADED)
        fh.flush()
        time.sleep(0.5)
        written = time.monotonic()
        fh.write(SGLANG_OOM)
    code, out, err = finish(proc)
    out = first + out
    detected = time.monotonic() - written
    assert code == 1, out + err
    assert detected < 3.0  # one second plus interpreter start-up slack on a loaded CI box
    assert "CRASHED" in out
    lines = out.splitlines()
    cause = next(ln for ln in lines if "cause:" in ln)
    oom_lineno = (SGLANG_START + SGLANG_LOADED).count("\n") + 6
    assert f"line {oom_lineno}:" in cause and "OutOfMemoryError" in cause
    assert any("hint:" in ln and len(ln.split("hint:", 1)[1].strip()) > 10 for ln in lines)
    assert "last " in out and "Received sigquit" in out  # the last log lines are printed
    assert "phase:" in out and "shards 2/4" in out  # progress was reported before


def test_silent_process_death_exits_1_within_a_second(tmp_path: Path) -> None:
    log = tmp_path / "quiet.log"
    log.write_text(SGLANG_START)
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        proc = start_wait("--pid", str(server.pid), "--log", str(log), "--timeout", "60")
        time.sleep(2.0)
        killed = time.monotonic()
        os.kill(server.pid, signal.SIGKILL)
        code, out, err = finish(proc)
        detected = time.monotonic() - killed
    finally:
        server.kill()
        server.wait()
    assert code == 1, out + err
    assert detected < 2.5
    assert f"server process {server.pid} exited" in out
    assert "no crash line in the log" in out


def test_pid_alone_finds_the_http_port_and_waits_for_ready(
        http_server: tuple[str, subprocess.Popen[bytes]]) -> None:
    _, server = http_server
    code, out, err = finish(start_wait("--pid", str(server.pid), "--timeout", "30"))
    assert code == 0, out + err
    assert "READY" in out and "/ready answered 200" in out


def test_pid_alone_reports_the_exit(tmp_path: Path) -> None:
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
    code, out, err = finish(start_wait("--pid", str(server.pid), "--timeout", "30"))
    server.wait()
    assert code == 1, out + err
    assert "exited" in out


def test_a_recorded_real_crash_is_diagnosed_from_the_log_alone() -> None:
    """The log of the real vLLM server whose EngineCore was SIGKILLed after it was ready."""
    log = ROOT / "tests" / "fixtures" / "vllm-cpu" / "server-eagle3-enginecore-killed.log"
    code, out, err = finish(start_wait("--log", str(log), "--timeout", "20"))
    assert code == 1, out + err
    assert "kind:  engine_dead" in out
    assert "cause: line 158: [shutdown] MPClient: engine core exited unexpectedly" in out


def test_timeout_says_where_it_was_stuck(tmp_path: Path) -> None:
    log = tmp_path / "stuck.log"
    log.write_text(SGLANG_START)
    t0 = time.monotonic()
    code, out, err = finish(start_wait("--log", str(log), "--timeout", "2"))
    took = time.monotonic() - t0
    assert code == 3, out + err
    assert 2.0 <= took < 10.0
    assert "TIMEOUT" in out and "stuck in phase loading_weights" in out
    assert "shards 2/4" in out


def test_timeout_json_result(tmp_path: Path) -> None:
    log = tmp_path / "stuck.log"
    log.write_text(SGLANG_START)
    code, out, _ = finish(start_wait("--log", str(log), "--timeout", "1.5", "--json"))
    assert code == 3
    result = json.loads(out.splitlines()[-1])
    assert result["status"] == "timeout" and result["phase"] == "loading_weights"
    assert result["stuck_in_phase_s"] is not None and result["last_lines"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ((), "at least one of --log"),
        (("--log", "x.log", "--timeout", "0"), "--timeout: must be a number of seconds > 0"),
        (("--url", "ftp://host:1"), "--url must be an http(s) URL"),
        (("--pid", "abc"), "--pid: must be a process id from 1"),
        (("--log", "/"), "is a directory"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...], needle: str) -> None:
    res = subprocess.run(wait_cmd(*args), capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 2
    assert needle in res.stderr


# --------------------------------------------------------------------------- the decision rule


def test_verdict_rules() -> None:
    s = DashboardState()
    assert verdict(s, has_url=True) is None
    starting = reduce(s, [HealthSample("starting", 1.0, 503)])
    assert verdict(starting, has_url=True) is None
    ready = reduce(starting, [HealthSample("ready", 2.0, 200)])
    assert verdict(ready, has_url=True) == ("ready", "/health answered 200")
    # a crash in the log wins over a 200 (the log, if given, must not show a crash)
    crashed = reduce(ready, [CrashEvent("cuda_oom", 9, "OOM", "lower it")])
    assert verdict(crashed, has_url=True) == ("crashed", "crash in the log: cuda_oom")
    dead = reduce(ready, [HealthSample("no_listener", 3.0)])
    assert verdict(dead, has_url=True) == ("crashed", "/health was ready and is now no_listener")
    slow = reduce(ready, [HealthSample("timeout", 3.0)])
    assert verdict(slow, has_url=True) is None  # a slow answer under load is not death
    gone = reduce(s, [ProcessExited(4.0, 77, 137, 9)])
    status, why = verdict(gone, has_url=False) or ("", "")
    assert status == "crashed" and why.startswith("server process 77 exited (exit code 137): "
                                                  "killed (SIGKILL): most often the kernel OOM")
    # log only: the log's own ready line decides
    log_ready = reduce(s, [PhaseEvent(Phase.READY, 40)])
    assert verdict(log_ready, has_url=False) == ("ready", "the log reached ready")
    assert verdict(log_ready, has_url=True) is None  # with a URL, /health decides


def test_watch_prints_the_live_state_and_does_not_exit_on_ready(
        http_server: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, _ = http_server
    t0 = time.monotonic()
    res = subprocess.run(
        [sys.executable, "-m", "eagle_tui", "watch", "--gpu", "none", "--url", url, "--json",
         "--duration", "3.5"],
        capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert time.monotonic() - t0 >= 3.0  # it kept running after the server became ready
    objs = [json.loads(line) for line in res.stdout.splitlines()]
    assert [o["event"] for o in objs].count("ready") == 1  # one notice, then it goes on
    healths = [o["health"] for o in objs if o["event"] == "progress"]
    assert healths[0] in ("starting", None) and "ready" in healths


# --------------------------------------------------------------------------- what is printed


def test_progress_line_and_diagnosis_never_carry_control_characters() -> None:
    from eagle_tui.headless.lines import diagnosis_lines, progress_line
    from eagle_tui.model.events import GpuInfo, GpuSample, LineKind, LogLine, Progress

    state = reduce(DashboardState(), [
        PhaseEvent(Phase.LOADING_WEIGHTS, 3),
        Progress("shards", 2, 4, 4),
        HealthSample("starting", 10.0, 503),
        GpuSample(11.0, "ok", (GpuInfo(0, mem_used=70 << 30, mem_total=140 << 30),
                               GpuInfo(1, error="GPU is lost"))),
        LogLine(5, "evil \x1b]0;pwned\x07 \x9b2J line", LineKind.ERROR),
        CrashEvent("cuda_oom", 5, "torch.OutOfMemoryError\x1b[2J", "lower \x07it"),
    ])
    line = progress_line(state)
    assert "phase: loading_weights (shards 2/4), CRASHED (cuda_oom)" in line
    assert "health: starting" in line and "GPU 0: 70.0/140 GiB, 1: GPU is lost" in line
    text = "\n".join(diagnosis_lines(state, "crashed", "crash in the log: cuda_oom"))
    assert not any((ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0 for c in text)
    # whole sequences are removed (not left as "?[2J" litter); a lone control is U+FFFD
    assert "cause: line 5: torch.OutOfMemoryError\n" in text and "[2J" not in text
    assert "      5 | evil   line" in text and "pwned" not in text
