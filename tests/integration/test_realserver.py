"""Against the REAL vLLM CPU server with its EAGLE-3 draft (one server for the whole module).

Order matters and is the file order: the first test watches the server start, the middle ones
put bounded loads on it (the second a benchmark window), the last one kills its EngineCore
(which ends the shared server).
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from eagle_tui.model.events import DecodeStats, Event, MetricsSample, SpecStats
from eagle_tui.session import Session
from eagle_tui.sources.draftconfig import DraftConfigSource
from eagle_tui.sources.logtail import LogTail
from eagle_tui.sources.metrics import MetricsScraper, parse_metrics
from eagle_tui.sources.serverinfo import ServerInfoSource
from eagle_tui.transport.local import LocalTransport
from tests.support.window_checks import window_agrees

# the fixture's class lives in conftest.py (not importable by name: one conftest per directory)
RealServer = Any
ROOT_DIR = Path(__file__).resolve().parents[2]
RUN_SH = ROOT_DIR / "tests" / "realserver" / "run.sh"

pytestmark = [pytest.mark.realserver, pytest.mark.slow]


def eagle_tui(*args: str) -> list[str]:
    return [sys.executable, "-m", "eagle_tui", *args, "--gpu", "none"]


def health_code(url: str) -> int | None:
    try:
        with httpx.Client(trust_env=False, timeout=1.0) as c:
            return c.get(f"{url}/health").status_code
    except httpx.HTTPError:
        return None


def test_wait_exits_0_when_the_real_server_is_ready(real_server: RealServer) -> None:
    first_200: list[float] = []
    stop = threading.Event()

    def watch_health() -> None:  # the truth, independently, every 0.2 s (bounded: 300 s)
        deadline = time.monotonic() + 300
        while not stop.is_set() and time.monotonic() < deadline:
            if health_code(real_server.url) == 200:
                first_200.append(time.monotonic())
                return
            time.sleep(0.2)

    prober = threading.Thread(target=watch_health, daemon=True)
    prober.start()
    res = subprocess.run(
        eagle_tui("wait", "--log", str(real_server.log), "--url", real_server.url,
                  "--timeout", "300"),
        capture_output=True, text=True, timeout=330, cwd=ROOT_DIR,
    )
    exited = time.monotonic()
    stop.set()
    prober.join(5)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "READY" in res.stdout
    assert health_code(real_server.url) == 200  # it did not answer early
    if first_200:  # the prober saw the truth: wait answered within a second or two of it
        print(f"wait exited {exited - first_200[0]:+.2f} s after /health first answered 200")
        assert exited - first_200[0] < 2.5
    real_server.ready()


async def test_log_and_metrics_agree_under_load(real_server: RealServer) -> None:
    real_server.ready()
    transport = LocalTransport()
    holder: list[Session] = []
    session = Session(
        [LogTail(transport, str(real_server.log)),
         MetricsScraper(transport, real_server.url, interval=1.0, window=4.0),
         ServerInfoSource(transport, real_server.url, interval=5.0),
         DraftConfigSource(transport, spec_provider=lambda: holder[0].state.config.spec)],
        tick_interval=None,
    )
    holder.append(session)
    events: list[Event] = []
    session.subscribe(lambda _s, batch: events.extend(batch))
    runner = asyncio.create_task(session.run())
    try:
        await asyncio.sleep(3.0)  # catch up on the log; first /metrics snapshot
        async with httpx.AsyncClient(trust_env=False, timeout=10) as client:
            before = parse_metrics((await client.get(f"{real_server.url}/metrics")).text, 0.0)
            mark = len(events)
            load = await asyncio.create_subprocess_exec(
                "bash", str(RUN_SH), "load", "-n", "160", "-c", "4", "--max-tokens", "128",
                "--temperature", "0", env=real_server.env(),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            out, _ = await asyncio.wait_for(load.communicate(), 300)
            assert load.returncode == 0, out.decode(errors="replace")
            await asyncio.sleep(5.0)  # vLLM logs the last interval; one more scrape
            after = parse_metrics((await client.get(f"{real_server.url}/metrics")).text, 0.0)
    finally:
        session.stop()
        await runner
        await transport.close()
    during = events[mark:]
    spec = [e for e in during if isinstance(e, SpecStats) and e.accepted]
    decode = [e for e in during if isinstance(e, DecodeStats) and e.gen_tps]
    windowed = [e for e in during if isinstance(e, MetricsSample)]
    assert spec and decode and windowed, "no stats from the log or /metrics during the load"

    print(f"load: {len(spec)} SpecDecoding lines, {len(windowed)} /metrics samples")
    # 1. the log's accepted/drafted counts are the same tokens as the /metrics counters
    d_accepted = (after.counters["vllm:spec_decode_num_accepted_tokens"]
                  - before.counters["vllm:spec_decode_num_accepted_tokens"])
    d_drafted = (after.counters["vllm:spec_decode_num_draft_tokens"]
                 - before.counters["vllm:spec_decode_num_draft_tokens"])
    log_accepted = sum(e.accepted or 0 for e in spec)
    log_drafted = sum(e.drafted or 0 for e in spec)
    print(f"accepted log={log_accepted} metrics={d_accepted:.0f}; "
          f"drafted log={log_drafted} metrics={d_drafted:.0f}")
    assert log_accepted == pytest.approx(d_accepted, rel=0.05)
    assert log_drafted == pytest.approx(d_drafted, rel=0.05)

    # 2. acceptance length: the log's per-interval value vs the windowed /metrics value
    log_al = statistics.median(e.mean_accept_len for e in spec if e.mean_accept_len)
    m_al = statistics.median(e.accept_len for e in windowed if e.accept_len)
    print(f"accept length: log median {log_al:.2f}, /metrics median {m_al:.2f}")
    assert 1.0 < log_al <= 4.0 and 1.0 < m_al <= 4.0
    assert abs(log_al - m_al) < 0.35, (log_al, m_al)

    # 3. tok/s: the log's "Avg generation throughput" vs Δgeneration_tokens/Δt, at the load's
    # steady rate: the peak of each, since the samples' medians hang on how many of the
    # /metrics windows straddle the load's ramps (the load lasts several windows of either)
    log_tps = max(e.gen_tps for e in decode if e.gen_tps)
    m_tps = max(e.gen_tps for e in windowed if e.gen_tps)
    print(f"tok/s: log peak {log_tps:.0f}, /metrics peak {m_tps:.0f}")
    assert 0.6 < log_tps / m_tps < 1.67, (log_tps, m_tps)

    # the session state carries both, and what the server and its draft say about themselves
    st = session.state
    assert st.config.server_info is not None and st.config.server_info.model_name == "tiny-llama"
    assert st.config.spec is not None and st.config.spec.algorithm == "eagle3"
    assert st.config.draft_config is not None and st.config.draft_config.is_eagle3
    assert st.config.draft_config.aux_layer_ids == (1, 2, 3)
    assert not [a for a in st.alerts if a.severity == "critical"]
    assert st.stats.accept_len.last is not None and st.metrics.accept_len.last is not None
    assert st.metrics.gen_tps.values() and st.stats.gen_tps.values()


async def test_bench_window_log_metrics_and_client_agree(real_server: RealServer) -> None:
    """One benchmark window (idle before and after, >= 3 log intervals): the log's weighted
    acceptance length agrees with the /metrics counter deltas within 2 %, the client's tokens
    per streamed event (prefill event left out: an approximation) within 5 %, and the log's
    tok/s with the client's within 5 %. The same window is found again from the log alone."""
    from eagle_tui.commands.bench import run_bench
    from eagle_tui.commands.bench_window import log_window

    real_server.ready()
    await asyncio.sleep(3.0)  # idle before: the previous load's last interval is logged
    res = await run_bench(real_server.url, concurrency=4, requests=40, max_tokens=192,
                          endpoint="completions", timeout=150, log_path=str(real_server.log))
    assert res.ok == 40 and res.failed == 0, res.errors
    assert res.window is not None
    fig = window_agrees(res.window, "vLLM")
    log, metrics, client = fig["log"], fig["/metrics"], fig["client"]
    assert metrics["tokens"] == pytest.approx(client["tokens"], rel=0.01)

    # from the log alone (another terminal's bench): the same window, the client's figures too
    again = log_window(real_server.log, res.bench_id)
    assert again is not None and again.sealed
    alone = {f.source: f for f in again.figures()}
    assert alone["log"].accept_len == pytest.approx(log["accept_len"], rel=1e-3)
    assert alone["client"].accept_len == pytest.approx(client["accept_len"], rel=1e-3)
    # eagle-tui's own /metrics reads are marked, the window's markers are not folded
    text = real_server.log.read_text(errors="replace")
    assert '"GET /metrics?eagle-tui HTTP/1.1" 200' in text
    assert f"eagle-tui-bench={res.bench_id}&at=start" in text


def test_attach_finds_the_real_vllm_server_and_its_log(real_server: RealServer) -> None:
    """Discovery (issue 14) of ``vllm serve`` as /proc shows it (``python .../bin/vllm serve``):
    its port, its ``--speculative-config`` method and the log its stdout goes to."""
    real_server.ready()
    found = subprocess.run([sys.executable, "-m", "eagle_tui", "attach", "--list", "--json"],
                           capture_output=True, text=True, timeout=60, check=True)
    mine = [s for s in json.loads(found.stdout) if s["port"] == real_server.port]
    assert len(mine) == 1, found.stdout
    assert mine[0]["engine"] == "vllm" and mine[0]["algorithm"] == "eagle3"
    assert mine[0]["log"] == str(real_server.log) and mine[0]["log_kind"] == "file"


def test_idle_after_load_is_idle_not_a_collapse(real_server: RealServer) -> None:
    """After the load, a correct idle server reads IDLE with its last active figures (accept
    len of the EAGLE-3 run, marked last active) — never ``accept 1.00 / speedup 0.00×``."""
    real_server.ready()
    proc = subprocess.run(
        eagle_tui("watch", "--log", str(real_server.log), "--url", real_server.url,
                  "--headless", "--json", "--duration", "20"),
        capture_output=True, text=True, timeout=90, check=False)
    assert proc.returncode == 0, proc.stderr
    objs = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    numbers = [o["numbers"] for o in objs if o.get("numbers")]
    assert numbers, proc.stdout[-2000:]
    last = numbers[-1]
    assert last["state"] == "idle", last
    acc = last["accept_len"]
    assert acc is not None and acc["value"] > 2.0 and acc["freshness"] == "last_active", acc
    assert not any(a.get("kind") == "drafts_rejected" for o in objs for a in o.get("alerts", []))


def _reader(proc: subprocess.Popen[str], lines: queue.Queue[tuple[float, str]]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.put((time.monotonic(), line))


def _engine_core(server_pid: int) -> psutil.Process:
    for proc in psutil.Process(server_pid).children(recursive=True):
        try:
            if "EngineCore" in " ".join(proc.cmdline()) or proc.name().startswith("VLLM::Engine"):
                return proc
        except psutil.Error:
            continue
    raise AssertionError("no VLLM::EngineCore process under the server")


def test_killing_enginecore_is_reported_within_a_second(real_server: RealServer) -> None:
    """Runs last: it kills the shared server."""
    real_server.ready()
    server_pid = int((real_server.root / "server.pid").read_text())
    watch = subprocess.Popen(
        eagle_tui("watch", "--log", str(real_server.log), "--url", real_server.url, "--json",
                  "--duration", "120"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT_DIR)
    lines: queue.Queue[tuple[float, str]] = queue.Queue()
    threading.Thread(target=_reader, args=(watch, lines), daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        ready = False
        while not ready and time.monotonic() < deadline:
            _, line = lines.get(timeout=60)
            obj = json.loads(line)
            ready = obj.get("event") == "ready" or obj.get("health") == "ready"
        assert ready, "watch never saw the server ready"
        core = _engine_core(server_pid)
        killed = time.monotonic()
        os.kill(core.pid, signal.SIGKILL)
        real_server.killed = True
        crash_at = None
        crash: dict[str, object] = {}
        while time.monotonic() < killed + 30:
            at, line = lines.get(timeout=30)
            obj = json.loads(line)
            if obj.get("event") == "crashed":
                crash_at, crash = at, obj
                break
        assert crash_at is not None, "watch did not report the crash"
        print(f"EngineCore SIGKILL reported after {crash_at - killed:.2f} s: {crash['reason']}")
        assert crash_at - killed < 1.5, f"reported after {crash_at - killed:.2f} s"
        assert crash["status"] == "crashed" and crash["reason"]
    finally:
        watch.send_signal(signal.SIGINT)
        try:
            watch.wait(10)
        except subprocess.TimeoutExpired:
            watch.kill()
            watch.wait()

    # wait, started after the fact, reads the crash from the log and exits 1 with the diagnosis
    res = subprocess.run(
        eagle_tui("wait", "--log", str(real_server.log), "--url", real_server.url,
                  "--timeout", "60"),
        capture_output=True, text=True, timeout=90, cwd=ROOT_DIR)
    assert res.returncode == 1, res.stdout[-3000:]
    assert "CRASHED" in res.stdout and "engine_dead" in res.stdout
    assert "engine core exited unexpectedly" in res.stdout
