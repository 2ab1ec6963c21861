"""The simulator on the wire: health transitions per engine, SSE bursts, /metrics, /server_info.

Each engine's server is started once per module (a real process on 127.0.0.1, startup
compressed 15-40x) and its /health is polled from the first moment, so the transitions are those a
watcher sees. Timings are asserted loosely: this runs on 2 shared cores.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.paths import REPO
from tests.support.sim_helpers import SimProc, health_states, running_sim

FIXTURES = REPO / "tests" / "fixtures"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sglang(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SimProc, list[str]]]:
    # speed 15: the 503 window (uvicorn up, warmup running) lasts ~150 ms, easy to catch
    with running_sim(tmp_path_factory.mktemp("sg"), "sglang", "healthy", speed=15) as sim:
        yield sim, health_states(sim.url)


@pytest.fixture(scope="module")
def vllm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SimProc, list[str]]]:
    with running_sim(tmp_path_factory.mktemp("vl"), "vllm", "healthy") as sim:
        yield sim, health_states(sim.url)


def stream_chat(url: str, max_tokens: int, path: str = "/v1/chat/completions"
                ) -> tuple[list[dict[str, Any]], float, bool]:
    body: dict[str, Any] = {"max_tokens": max_tokens, "stream": True,
                            "stream_options": {"include_usage": True}}
    if "chat" in path:
        body["messages"] = [{"role": "user", "content": "count with me"}]
    else:
        body["prompt"] = "one, two, three,"
    events, done = [], False
    start = time.perf_counter()
    with httpx.Client(timeout=30, trust_env=False) as client, \
            client.stream("POST", url + path, json=body) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        for line in resp.iter_lines():
            if line.startswith("data: "):
                if line == "data: [DONE]":
                    done = True
                    break
                events.append(json.loads(line[6:]))
    return events, time.perf_counter() - start, done


def test_sglang_health_refused_then_503_then_200(sglang: tuple[SimProc, list[str]]) -> None:
    sim, states = sglang
    assert states[0] == "refused"
    assert states[-1] == "200"
    assert "503" in states  # uvicorn up, warmup not finished
    assert "timeout" not in states
    assert states.index("503") > states.index("refused")
    text = sim.log.read_text()
    assert "The server is fired up and ready to roll!" in text


def test_vllm_accepts_early_but_answers_only_when_ready(vllm: tuple[SimProc, list[str]]) -> None:
    sim, states = vllm
    assert states[-1] == "200"
    assert "timeout" in states  # socket bound before the engine, nothing answers yet
    assert "503" not in states
    assert "Application startup complete." in sim.log.read_text()


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/completions"])
def test_sse_bursts_match_accept_length(sglang: tuple[SimProc, list[str]], path: str) -> None:
    sim, _ = sglang
    events, seconds, done = stream_chat(sim.url, 120, path)
    assert done
    usage = [e["usage"] for e in events if e.get("usage")]
    assert usage and usage[0]["completion_tokens"] == 120
    key = "delta" if "chat" in path else "text"
    texts = [c[key]["content"] if key == "delta" else c["text"]
             for e in events for c in e["choices"]
             if (c.get(key, {}).get("content") if key == "delta" else c.get("text"))]
    per_event = 120 / len(texts)
    assert 2.6 < per_event < 3.9, per_event  # healthy EAGLE-3: accept length 3.0-3.5
    assert [e["choices"][0]["finish_reason"] for e in events if e["choices"]][-1] == "length"
    assert 60 < 120 / seconds < 400  # ~175 tok/s by design, loose for a busy machine


def test_metrics_sglang_names_and_types(sglang: tuple[SimProc, list[str]]) -> None:
    sim, _ = sglang
    stream_chat(sim.url, 130)  # > 40 steps: one decode stats interval
    text = httpx.get(sim.url + "/metrics", timeout=10, trust_env=False).text
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    for gauge in ("sglang:spec_accept_length", "sglang:gen_throughput", "sglang:num_running_reqs",
                  "sglang:token_usage", "sglang:num_queue_reqs"):
        assert fams[gauge].type == "gauge", gauge
    for counter in ("sglang:prompt_tokens", "sglang:generation_tokens", "sglang:num_requests"):
        assert fams[counter].type == "counter", counter
        assert any(s.name == counter + "_total" for s in fams[counter].samples)
    assert fams["sglang:time_to_first_token_seconds"].type == "histogram"
    labels = fams["sglang:spec_accept_length"].samples[0].labels
    assert set(labels) == {"model_name", "engine_type", "tp_rank", "pp_rank"}
    assert 3.0 <= fams["sglang:spec_accept_length"].samples[0].value <= 3.5
    # the startup gauges as the real 0.5.23 server exposes them (sglang-cpu/*-metrics.txt):
    # tokenizer-side labels and a phase, the graph families on their own gauge
    real = {f.name: f for f in text_string_to_metric_families(
        (FIXTURES / "sglang-cpu" / "eagle3-metrics.txt").read_text())}
    for name in ("sglang:startup_time_seconds", "sglang:startup_cuda_graph_time_seconds"):
        assert fams[name].type == real[name].type == "gauge"
        assert [set(x.labels) for x in fams[name].samples] == \
            [set(x.labels) for x in real[name].samples]
        assert [x.labels["phase"] for x in fams[name].samples] == \
            [x.labels["phase"] for x in real[name].samples]
    graphs = {x.labels["phase"]: x.value for x in
              fams["sglang:startup_cuda_graph_time_seconds"].samples}
    assert graphs["target_verify"] > 0 and graphs["draft_decode"] > 0 and graphs["decode"] == 0


def test_metrics_vllm_counters_and_positions(vllm: tuple[SimProc, list[str]]) -> None:
    sim, _ = vllm
    stream_chat(sim.url, 60)
    text = httpx.get(sim.url + "/metrics", timeout=10, trust_env=False).text
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    samples = {s.name: s for f in fams.values() for s in f.samples
               if "position" not in s.labels}
    for counter in ("vllm:spec_decode_num_drafts", "vllm:spec_decode_num_draft_tokens",
                    "vllm:spec_decode_num_accepted_tokens", "vllm:generation_tokens",
                    "vllm:prompt_tokens"):
        assert fams[counter].type == "counter"
        assert samples[counter + "_total"].labels == {"engine": "0",
                                                      "model_name": samples[counter + "_total"]
                                                      .labels["model_name"]}
    drafts = samples["vllm:spec_decode_num_drafts_total"].value
    accepted = samples["vllm:spec_decode_num_accepted_tokens_total"].value
    assert samples["vllm:spec_decode_num_draft_tokens_total"].value == 3 * drafts
    assert 3.0 <= 1 + accepted / drafts <= 3.5
    per_pos = [s for s in fams["vllm:spec_decode_num_accepted_tokens_per_pos"].samples
               if s.name.endswith("_total")]
    assert sorted(s.labels["position"] for s in per_pos) == ["0", "1", "2"]
    assert sum(s.value for s in per_pos) == accepted
    values = [s.value for s in sorted(per_pos, key=lambda s: s.labels["position"])]
    assert values == sorted(values, reverse=True)  # a draft position needs the ones before it
    for gauge in ("vllm:num_requests_running", "vllm:num_requests_waiting",
                  "vllm:kv_cache_usage_perc"):
        assert fams[gauge].type == "gauge"


def test_server_info_and_model_info(sglang: tuple[SimProc, list[str]]) -> None:
    sim, _ = sglang
    stream_chat(sim.url, 40)
    with httpx.Client(timeout=10, trust_env=False) as c:
        for path in ("/server_info", "/get_server_info"):
            info = c.get(sim.url + path).json()
            assert info["speculative_algorithm"] == "EAGLE3"
            assert info["speculative_num_steps"] == 3
            assert Path(info["speculative_draft_model_path"], "config.json").is_file()
            assert 3.0 <= info["internal_states"][0]["avg_spec_accept_length"] <= 3.5
            real = json.loads((FIXTURES / "sglang-cpu" / "eagle3-get_server_info.json")
                              .read_text())["startup_time"]
            startup = info["startup_time"]  # its keys in the real 0.5.23 server's order
            assert list(startup) == list(real)
            assert list(startup["cuda_graph"]) == list(real["cuda_graph"])
            assert f"load_weight={startup['load_weight']:.2f}, " in sim.log.read_text()
        models = c.get(sim.url + "/v1/models").json()
        assert models["data"][0]["id"] == info["served_model_name"]
        assert c.get(sim.url + "/model_info").json()["is_generation"] is True
    assert "Endpoint '/get_server_info' is deprecated" in sim.log.read_text()


def test_errors_look_like_the_engines(sglang: tuple[SimProc, list[str]],
                                      vllm: tuple[SimProc, list[str]]) -> None:
    sg, vl = sglang[0], vllm[0]
    with httpx.Client(timeout=10, trust_env=False) as c:
        assert c.get(sg.url + "/nope").status_code == 404
        assert c.post(sg.url + "/health").status_code == 405
        bad = c.post(sg.url + "/v1/completions", content=b"{not json")
        assert bad.status_code == 400 and bad.json()["object"] == "error"
        missing = c.post(vl.url + "/v1/chat/completions",
                         json={"model": "other", "messages": [{"role": "user", "content": "x"}]})
        assert missing.status_code == 404
        assert "does not exist" in missing.json()["error"]["message"]
        too_long = c.post(vl.url + "/v1/completions", json={"prompt": "x", "max_tokens": 10**7})
        assert too_long.status_code == 400
        full = c.post(vl.url + "/v1/completions", json={"prompt": "x", "max_tokens": 8})
        assert full.status_code == 200 and full.json()["usage"]["completion_tokens"] == 8
        assert c.get(vl.url + "/version").json() == {"version": "0.32.0"}
    assert '"GET /nope HTTP/1.1" 404 Not Found' in sg.log.read_text()
    assert 'INFO:     127.0.0.1:' in vl.log.read_text()


def test_port_in_use_never_listens(tmp_path: Path) -> None:
    with running_sim(tmp_path, "sglang", "port-in-use", speed=100) as sim:
        states = health_states(sim.url, limit_s=2.5)
        assert sim.proc.wait(timeout=20) == 3  # uvicorn's STARTUP_FAILURE
        assert set(states) == {"refused"}
        assert "address already in use" in sim.log.read_text()


def test_a_port_that_is_really_taken(tmp_path: Path) -> None:
    """Not a scenario: something else listens on the port; the engine's own error, exit 1."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "eagle_tui.sim", "--engine", "vllm", "--port", str(port),
             "--gpus", "1", "--speed", "100", "--log", str(tmp_path / "server.log")],
            capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr
    assert "OSError: [Errno 98] Address already in use" in (tmp_path / "server.log").read_text()
