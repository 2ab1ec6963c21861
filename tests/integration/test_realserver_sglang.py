"""Against the REAL SGLang 0.5.23 CPU server (tests/realserver_sglang), two shared starts at most.

``sglang_misconf_log`` starts the seed's misconfiguration (``--speculative-algorithm EAGLE`` with
the EAGLE-3 draft), puts three requests on it and stops it before its tests run; ``sglang_eagle3``
is a correctly configured EAGLE3 server, launched once and watched by the first test that asks
for it. The two never run at the same time. File order matters for the EAGLE3 tests only in that
the ``wait`` test is the one that sees the server start.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families

from eagle_tui.model.engines.sglang.logs import weighted_accept_len
from eagle_tui.model.events import DecodeStats
from eagle_tui.model.ingest.parser import LogParser
from tests.support.headless_watch import Watch, hold_state

# the fixtures' class and helpers live in conftest.py (one conftest per directory, not importable
# by name); the tests take what they need through the fixtures and these few copies
SglangServer = Any
ROOT_DIR = Path(__file__).resolve().parents[2]
PROMPTS = (
    "six hundred one, six hundred two, six hundred three, six hundred four,",
    "seven hundred ten, seven hundred eleven, seven hundred twelve,",
    "one, two, three, four, five, six, seven, eight, nine, ten,",
    "eight hundred ninety-eight, eight hundred ninety-nine, nine hundred,",
)
LOAD_REQUESTS = 8  # bounded load: 8 greedy /generate calls of 96 tokens, 2 at a time
LOAD_TOKENS = 96
LOAD_LIMIT_S = 120.0
TOLERANCE = 0.05

pytestmark = [pytest.mark.realserver, pytest.mark.realserver_sglang, pytest.mark.slow]


def eagle_tui(*args: str) -> list[str]:
    return [sys.executable, "-m", "eagle_tui", *args]


def run_report(log: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(eagle_tui("report", "--workers", "1", *extra, str(log)),
                          capture_output=True, text=True, timeout=60, cwd=ROOT_DIR)


def decode_stats(log: Path) -> list[DecodeStats]:
    p = LogParser()
    out = [e for ln in log.read_bytes().splitlines() for e in p.feed_line(ln)
           if isinstance(e, DecodeStats)]
    return out + [e for e in p.finish() if isinstance(e, DecodeStats)]


def counters(url: str) -> dict[str, float]:
    """The SGLang counters this test compares, summed over their label sets."""
    with httpx.Client(trust_env=False, timeout=10) as client:
        text = client.get(f"{url}/metrics").text
    out: dict[str, float] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name in ("sglang:spec_verify_calls_total", "sglang:generation_tokens_total",
                          "sglang:num_requests_total"):
                out[s.name] = out.get(s.name, 0.0) + float(s.value)
    return out


def generate(url: str, prompt: str) -> dict[str, Any]:
    body = {"text": prompt, "sampling_params": {"max_new_tokens": LOAD_TOKENS, "temperature": 0}}
    with httpx.Client(trust_env=False, timeout=60) as client:
        r = client.post(f"{url}/generate", json=body)
    r.raise_for_status()
    result: dict[str, Any] = r.json()
    return result


# ------------------------------------------------------------------ the seed's misconfiguration


def test_report_on_the_misconfigured_real_log_raises_the_critical_alert(
        sglang_misconf_log: Path) -> None:
    text = run_report(sglang_misconf_log)
    assert text.returncode == 0, text.stderr
    assert "speculative: algorithm=EAGLE," in text.stdout
    assert "alert [critical] eagle3_draft_with_eagle:" in text.stdout
    assert "alert [critical] drafts_rejected:" in text.stdout
    js = run_report(sglang_misconf_log, "--json")
    assert js.returncode == 0, js.stderr
    r = json.loads(js.stdout)
    severities = {a["kind"]: a["severity"] for a in r["alerts"]}
    assert severities.get("eagle3_draft_with_eagle") == "critical", r["alerts"]
    assert severities.get("drafts_rejected") == "critical", r["alerts"]
    assert r["accept_len"] and max(r["accept_len"]) <= 1.05
    # the engine's own startup figures (its "Engine startup timings (s): ..." line) are read
    assert r["engine_startup"]["source"] == "log", r.get("engine_startup")
    assert r["phase_sources"]["loading_weights"] == "engine (log)"


def test_the_alert_comes_within_one_decode_log_interval(sglang_misconf_log: Path,
                                                        tmp_path: Path) -> None:
    lines = sglang_misconf_log.read_bytes().splitlines()
    first = next(i for i, ln in enumerate(lines) if b"Decode batch" in ln)
    cut = tmp_path / "up-to-first-decode.log"
    cut.write_bytes(b"\n".join(lines[: first + 1]) + b"\n")
    res = run_report(cut)
    assert "alert [critical] eagle3_draft_with_eagle:" in res.stdout, res.stdout


# --------------------------------------------------------------------------- the EAGLE3 server


def test_wait_reaches_ready_on_the_real_eagle3_server(sglang_eagle3: SglangServer) -> None:
    t0 = time.monotonic()
    res = subprocess.run(
        eagle_tui("wait", "--log", str(sglang_eagle3.log), "--url", sglang_eagle3.url,
                  "--timeout", "300", "--gpu", "none"),
        capture_output=True, text=True, timeout=330, cwd=ROOT_DIR,
    )
    took = time.monotonic() - t0
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:] + sglang_eagle3.tail()
    assert "READY" in res.stdout
    assert "startup as the engine measured it (log): load_weight " in res.stdout, res.stdout
    sglang_eagle3.ready(within_s=10.0)  # it did not answer early
    print(f"eagle-tui wait: READY after {took:.1f} s "
          f"({time.monotonic() - sglang_eagle3.started_at:.1f} s since launch)")


def test_ps_shows_the_command_line_a_user_types(sglang_eagle3: SglangServer) -> None:
    sglang_eagle3.ready()
    main = psutil.Process(sglang_eagle3.proc.pid)
    cmd = main.cmdline()
    assert cmd[0].endswith("/venv/bin/python") and cmd[1:3] == ["-m", "sglang.launch_server"]
    assert "--speculative-algorithm" in cmd and "EAGLE3" in cmd
    procs = [main, *main.children(recursive=True)]
    rss = sum(p.memory_info().rss for p in procs)
    print(f"SGLang EAGLE3: {len(procs)} processes, RSS {rss / 2**30:.2f} GiB, healthy after "
          f"{sglang_eagle3.healthy_after_s:.1f} s")


def test_attach_and_watch_find_the_real_server_and_its_log(sglang_eagle3: SglangServer) -> None:
    """Discovery (issue 14): the real SGLang launcher with its scheduler/detokenizer tree, its
    command line (port, algorithm, draft) and its log from its stdout; ``watch`` with nothing
    to watch opens on it."""
    sglang_eagle3.ready()
    found = subprocess.run([sys.executable, "-m", "eagle_tui", "attach", "--list", "--json"],
                           capture_output=True, text=True, timeout=60, cwd=ROOT_DIR, check=True)
    servers = json.loads(found.stdout)
    mine = [s for s in servers if s["pid"] == sglang_eagle3.proc.pid]
    assert len(mine) == 1, servers
    s = mine[0]
    assert s["engine"] == "sglang" and s["port"] == sglang_eagle3.port
    assert s["log"] == str(sglang_eagle3.log) and s["log_kind"] == "file"
    assert s["algorithm"] == "EAGLE3" and s["draft"].endswith("tiny-eagle3-sglang")
    assert len(s["processes"]) >= 3  # the launcher, the scheduler, the detokenizer
    pick = servers.index(s) + 1
    watch = subprocess.run(eagle_tui("watch", "--pick", str(pick), "--headless", "--json",
                                     "--duration", "6", "--gpu", "none"),
                           capture_output=True, text=True, timeout=90, cwd=ROOT_DIR)
    assert watch.returncode == 0, watch.stderr[-2000:]
    assert f"pid {sglang_eagle3.proc.pid}" in watch.stderr
    phases = [json.loads(x).get("phase") for x in watch.stdout.splitlines() if x.startswith("{")]
    assert {"ready", "serving"} & set(phases), watch.stdout[-2000:]


def test_a_pause_reads_paused_and_a_continue_ready_again(sglang_eagle3: SglangServer) -> None:
    """The real server's pause: ``/ready`` 503 while ``/ping`` says 200 (SGLang 0.5.23's
    ``is_ready`` is "not paused and healthy"), told as paused, not as a start; ready again
    after ``/continue_generation``."""
    sglang_eagle3.ready()
    url = sglang_eagle3.url
    w = Watch(url, sglang_eagle3.log, duration_s=60)
    try:
        w.until(lambda o: o["health"] == "ready")
        r = httpx.post(f"{url}/pause_generation", json={}, timeout=10)
        assert r.json() == {"message": "Generation paused successfully.", "status": "ok"}
        assert httpx.get(f"{url}/ready", timeout=5).status_code == 503
        assert httpx.get(f"{url}/ping", timeout=5).status_code == 200
        got = w.until(lambda o: hold_state(o) == "paused")
        assert got["hold"]["text"].startswith("paused since ") and got["crash"] is None
    finally:
        httpx.post(f"{url}/continue_generation", json={}, timeout=10)
    try:
        w.until(lambda o: o["hold"] is None and o["health"] == "ready")
    finally:
        w.stop()
    assert httpx.get(f"{url}/ready", timeout=5).status_code == 200


def test_log_acceptance_agrees_with_the_server_under_a_bounded_load(
        sglang_eagle3: SglangServer) -> None:
    sglang_eagle3.ready()
    url = sglang_eagle3.url
    before = counters(url)
    lines_before = len(decode_stats(sglang_eagle3.log))
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=2) as pool:
        replies = list(pool.map(lambda i: generate(url, PROMPTS[i % len(PROMPTS)]),
                                range(LOAD_REQUESTS), timeout=LOAD_LIMIT_S))
    load_s = time.monotonic() - t0
    time.sleep(1.0)  # the last decode line is written as the last reply goes out
    after = counters(url)
    with httpx.Client(trust_env=False, timeout=10) as client:
        info = client.get(f"{url}/get_server_info").json()
    server_avg = float(info["internal_states"][0]["avg_spec_accept_length"])

    stats = decode_stats(sglang_eagle3.log)
    window = stats[lines_before:]
    assert len(window) >= 3, f"only {len(window)} decode lines in the load window"
    log_all = weighted_accept_len(stats)  # the server's figure is cumulative since its start
    log_window = weighted_accept_len(window)
    verify = after["sglang:spec_verify_calls_total"] - before["sglang:spec_verify_calls_total"]
    tokens = (after["sglang:generation_tokens_total"] - before["sglang:generation_tokens_total"]
              - (after["sglang:num_requests_total"] - before["sglang:num_requests_total"]))
    metrics_window = tokens / verify  # each request's first token comes from its prefill
    meta = [r["meta_info"] for r in replies]
    client_window = (sum(m["spec_accept_length"] * m["spec_verify_ct"] for m in meta)
                     / sum(m["spec_verify_ct"] for m in meta))
    print(f"load: {LOAD_REQUESTS} requests in {load_s:.1f} s, {len(window)} decode lines; "
          f"accept len: log {log_window:.3f} (whole log {log_all:.3f}), /metrics "
          f"{metrics_window:.3f}, /get_server_info {server_avg:.3f}, meta_info "
          f"{client_window:.3f}")
    assert log_all is not None and log_window is not None
    assert abs(log_all - server_avg) <= TOLERANCE * server_avg
    assert abs(log_window - metrics_window) <= TOLERANCE * metrics_window
    assert abs(log_window - client_window) <= TOLERANCE * client_window
    assert log_window > 2.0  # a working EAGLE-3 draft, not the collapse


async def test_the_real_server_gives_its_tier_and_each_ranks_acceptance(
        sglang_eagle3: SglangServer) -> None:
    """SGLang 0.5.23's own ``/metrics`` tier gauges and ``/v1/loads`` answer, read by the
    dashboard's readers and its load source (one rank: no DP attention on this CPU server)."""
    from eagle_tui.sources.loads import LoadsSource
    from eagle_tui.sources.metrics import RateWindow, parse_metrics, to_sample
    from eagle_tui.transport.local import LocalTransport

    sglang_eagle3.ready()
    url = sglang_eagle3.url
    generate(url, PROMPTS[0])  # decode lines: the tier gauges and the rank's totals are set
    time.sleep(1.0)
    with httpx.Client(trust_env=False, timeout=10) as client:
        text = client.get(f"{url}/metrics").text
    sample = to_sample(parse_metrics(text, time.time()), RateWindow())
    assert (sample.spec_steps, sample.spec_draft_tokens) == (3, 4)  # SGLANG_SPEC_ARGS
    assert sample.spec_cap_len is None and sample.spec_block_accept_len is None
    src = LoadsSource(LocalTransport(), url, engine=lambda: "sglang")
    async with LocalTransport().http_client(url, 10.0) as client:
        loads = await src.fetch(client)
    assert loads is not None and src.path == "/v1/loads?eagle-tui&include=spec"
    assert [r for r, _ in loads.accept] == [0] and 1.0 <= loads.accept[0][1] <= 4.0
    assert [r for r, _ in loads.running] == [0]
