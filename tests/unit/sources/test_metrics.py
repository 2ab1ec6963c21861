"""/metrics: prometheus parsing, SGLang gauges, vLLM counters → windowed rates, resets; and the
other things read from the server: /server_info, /v1/models, the draft's config.json."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import httpx
import pytest

from eagle_tui.model.events import DraftConfig, Event, MetricsSample, ServerInfo, SpecConfig
from eagle_tui.sources.draftconfig import DraftConfigError, DraftConfigSource, parse_draft_config
from eagle_tui.sources.metrics import (
    MetricsError,
    MetricsScraper,
    RateWindow,
    parse_metrics,
    relevant_lines,
)
from eagle_tui.sources.serverinfo import ServerInfoSource, parse_sglang_server_info
from eagle_tui.transport.base import Transport
from eagle_tui.transport.local import LocalTransport
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "vllm-cpu"
EAGLE3 = (FIXTURES / "metrics-eagle3.txt").read_text()


def vllm_text(drafts: float, draft_tokens: float, accepted: float, per_pos: list[float],
              gen: float, *, suffix: str = "_total", running: float = 1,
              kv_name: str = "vllm:kv_cache_usage_perc") -> str:
    lab = 'engine="0",model_name="m"'
    lines = [
        f"# TYPE vllm:spec_decode_num_drafts{suffix} counter",
        f"vllm:spec_decode_num_drafts{suffix}{{{lab}}} {drafts}",
        f"vllm:spec_decode_num_drafts_created{{{lab}}} 1.7e9",
        f"# TYPE vllm:spec_decode_num_draft_tokens{suffix} counter",
        f"vllm:spec_decode_num_draft_tokens{suffix}{{{lab}}} {draft_tokens}",
        f"# TYPE vllm:spec_decode_num_accepted_tokens{suffix} counter",
        f"vllm:spec_decode_num_accepted_tokens{suffix}{{{lab}}} {accepted}",
        f"# TYPE vllm:spec_decode_num_accepted_tokens_per_pos{suffix} counter",
        *(f'vllm:spec_decode_num_accepted_tokens_per_pos{suffix}{{{lab},position="{i}"}} {v}'
          for i, v in enumerate(per_pos)),
        f"# TYPE vllm:generation_tokens{suffix} counter",
        f"vllm:generation_tokens{suffix}{{{lab}}} {gen}",
        "# TYPE vllm:num_requests_running gauge",
        f"vllm:num_requests_running{{{lab}}} {running}",
        "# TYPE vllm:num_requests_waiting gauge",
        f"vllm:num_requests_waiting{{{lab}}} 2",
        f"# TYPE {kv_name} gauge",
        f"{kv_name}{{{lab}}} 0.25",
        "# TYPE vllm:e2e_request_latency_seconds histogram",
        f'vllm:e2e_request_latency_seconds_bucket{{{lab},le="1.0"}} 3',
    ]
    return "\n".join(lines) + "\n"


def test_real_vllm_fixture_parses_counters_per_position_and_gauges() -> None:
    snap = parse_metrics(EAGLE3, 10.0)
    assert snap.engine == "vllm"
    assert snap.counters == {
        "vllm:spec_decode_num_drafts": 1531.0,
        "vllm:spec_decode_num_draft_tokens": 4593.0,
        "vllm:spec_decode_num_accepted_tokens": 3872.0,
        "vllm:generation_tokens": 5376.0,
    }
    assert snap.per_pos == {0: 1525.0, 1: 1479.0, 2: 868.0}
    assert snap.gauges["vllm:num_requests_running"] == 0.0
    assert snap.gauges["vllm:kv_cache_usage_perc"] == 0.0


def test_prefilter_keeps_only_the_used_families() -> None:
    kept = relevant_lines(EAGLE3).splitlines()
    assert 10 < len(kept) < 60
    assert not any("histogram" in ln or "_bucket" in ln for ln in kept)
    assert any(ln.startswith("vllm:generation_tokens_total") for ln in kept)


def test_windowed_rates_follow_the_official_formulas() -> None:
    w = RateWindow(window=60.0)
    first = w.add(parse_metrics(vllm_text(100, 300, 250, [90, 80, 80], 1000), 0.0))
    assert first.engine == "vllm"
    assert first.gen_tps is None and first.accept_len is None  # one snapshot: no rate yet
    assert first.running == 1 and first.queued == 2 and first.kv_usage == 0.25
    s = w.add(parse_metrics(vllm_text(150, 450, 360, [138, 120, 102], 1600), 4.0))
    # Δdrafts=50, Δdraft_tokens=150, Δaccepted=110, Δper_pos=(48, 40, 22), Δgen=600 over 4 s
    assert s.accept_len == pytest.approx(1 + 110 / 50)
    assert s.acceptance_rate == pytest.approx(110 / 150)
    assert s.per_position == pytest.approx((48 / 50, 40 / 50, 22 / 50))
    assert s.gen_tps == pytest.approx(600 / 4)
    assert not s.counter_reset


def test_window_slides_to_the_last_window_seconds() -> None:
    w = RateWindow(window=10.0)
    w.add(parse_metrics(vllm_text(0, 0, 0, [0], 0), 0.0))
    w.add(parse_metrics(vllm_text(10, 30, 10, [10], 100), 5.0))  # slow start: 20 tok/s
    w.add(parse_metrics(vllm_text(20, 60, 40, [20], 600), 10.0))
    s = w.add(parse_metrics(vllm_text(30, 90, 70, [30], 1100), 15.0))
    # the t=0 snapshot fell out; base is t=5: Δgen=1000 over 10 s, Δaccepted=60, Δdrafts=20
    assert s.gen_tps == pytest.approx(100.0)
    assert s.accept_len == pytest.approx(1 + 60 / 20)


def test_idle_window_gives_zero_tok_s_and_no_acceptance() -> None:
    w = RateWindow()
    w.add(parse_metrics(vllm_text(5, 15, 10, [5], 50), 0.0))
    s = w.add(parse_metrics(vllm_text(5, 15, 10, [5], 50), 2.0))
    assert s.gen_tps == 0.0
    assert s.accept_len is None and s.acceptance_rate is None and s.per_position == ()


def test_counter_reset_restarts_the_window_and_is_flagged() -> None:
    w = RateWindow()
    w.add(parse_metrics(vllm_text(500, 1500, 1200, [500], 9000), 0.0))
    reset = w.add(parse_metrics(vllm_text(10, 30, 20, [10], 100), 2.0))
    assert reset.counter_reset
    assert reset.gen_tps is None and reset.accept_len is None
    after = w.add(parse_metrics(vllm_text(20, 60, 45, [20], 300), 4.0))
    assert not after.counter_reset
    assert after.gen_tps == pytest.approx(100.0)
    assert after.accept_len == pytest.approx(1 + 25 / 10)


def test_names_without_total_and_the_old_kv_gauge_are_understood() -> None:
    w = RateWindow()
    old_kv = "vllm:gpu_cache_usage_perc"
    w.add(parse_metrics(vllm_text(0, 0, 0, [0, 0], 0, suffix="", kv_name=old_kv), 0.0))
    s = w.add(parse_metrics(vllm_text(10, 20, 15, [9, 6], 40, suffix="", kv_name=old_kv), 2.0))
    assert s.accept_len == pytest.approx(2.5)
    assert s.acceptance_rate == pytest.approx(0.75)
    assert s.per_position == pytest.approx((0.9, 0.6))
    assert s.kv_usage == 0.25


def test_two_engines_are_summed() -> None:
    text = vllm_text(10, 30, 20, [10], 100) + vllm_text(10, 30, 20, [10], 100).replace(
        'engine="0"', 'engine="1"').replace("# TYPE", "# HELP")
    snap = parse_metrics(text, 0.0)
    assert snap.counters["vllm:spec_decode_num_drafts"] == 20
    assert snap.per_pos == {0: 20.0}
    assert snap.gauges["vllm:num_requests_running"] == 2


SGLANG = """\
# HELP sglang:gen_throughput The generation throughput (token/s).
# TYPE sglang:gen_throughput gauge
sglang:gen_throughput{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 178.86
sglang:gen_throughput{engine_type="unified",model_name="m",pp_rank="0",tp_rank="1"} 178.86
# TYPE sglang:spec_accept_length gauge
sglang:spec_accept_length{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 2.17
# TYPE sglang:spec_accept_rate gauge
sglang:spec_accept_rate{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 0.54
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 3.0
sglang:num_running_reqs{engine_type="unified",model_name="m",pp_rank="0",tp_rank="1"} 3.0
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 1.0
# TYPE sglang:token_usage gauge
sglang:token_usage{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 0.08
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name="m"} 12345.0
"""


def test_sglang_gauges_pass_through_and_tp_ranks_count_once() -> None:
    scraper = MetricsScraper(_no_transport(), "http://x")
    s = scraper.sample(SGLANG, 7.0)
    assert s == MetricsSample(t=7.0, engine="sglang", gen_tps=178.86, accept_len=2.17,
                              acceptance_rate=0.54, running=3, queued=1, kv_usage=0.08,
                              counters=(("sglang:generation_tokens", 12345.0),))


def test_sglang_dp_ranks_are_summed() -> None:
    text = SGLANG.replace('pp_rank="0",tp_rank="1"', 'dp_rank="1",pp_rank="0",tp_rank="0"')
    s = MetricsScraper(_no_transport(), "http://x").sample(text, 0.0)
    assert s.gen_tps == pytest.approx(2 * 178.86)
    assert s.running == 6


@pytest.mark.parametrize("text", ["<html><body>Not Found</body></html>", "", "foo 1\nbar 2\n",
                                  "vllm:thing{ 1"])
def test_answers_that_are_not_llm_server_metrics_raise(text: str) -> None:
    with pytest.raises(MetricsError):
        parse_metrics(text, 0.0)


# --------------------------------------------------------------------------- the scraper source


def _no_transport() -> Transport:
    """The parsing tests never reach the network."""
    return cast(Transport, SimpleNamespace(host=""))


def _mock_transport(handler: httpx.MockTransport) -> Transport:
    """A transport whose HTTP client is an httpx MockTransport (unit test of the source)."""

    def http_client(base_url: str, timeout: float) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=base_url, timeout=timeout, transport=handler)

    return cast(Transport, SimpleNamespace(host="", http_client=http_client))


async def test_scraper_polls_and_turns_counters_into_rates() -> None:
    answers = iter([
        httpx.Response(503, text="starting"),
        httpx.Response(200, text=vllm_text(0, 0, 0, [0], 0)),
        httpx.Response(200, text=vllm_text(10, 30, 24, [10], 200)),
    ])
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        return next(answers)

    clock = iter([1.0, 3.0])
    scraper = MetricsScraper(_mock_transport(httpx.MockTransport(handler)), "http://127.0.0.1:9",
                             interval=0.01, max_polls=3, clock=lambda: next(clock))
    samples = [s async for s in scraper.events()]
    assert paths == ["/metrics"] * 3
    assert len(samples) == 2  # the 503 was skipped quietly
    last = samples[-1]
    assert isinstance(last, MetricsSample)
    assert last.gen_tps == pytest.approx(100.0) and last.accept_len == pytest.approx(3.4)


async def test_scraper_skips_refused_connections_but_raises_on_404() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    scraper = MetricsScraper(_mock_transport(httpx.MockTransport(refused)), "http://h",
                             interval=0.01, max_polls=2)
    assert [s async for s in scraper.events()] == []
    assert scraper.polls == 2

    missing = MetricsScraper(
        _mock_transport(httpx.MockTransport(lambda r: httpx.Response(404))), "http://h",
        interval=0.01, max_polls=2)
    with pytest.raises(MetricsError, match="--enable-metrics"):
        [s async for s in missing.events()]


async def test_an_idle_servers_scrapes_come_less_often_until_it_works() -> None:
    """Each scrape of an idle server wrote an access line to its log every 2 s, which the
    dashboard then read: its figures stand still, so the wait doubles up to the quiet grid's
    5 s (here 5 intervals), and a scrape with work brings the interval back."""
    waiting = 'vllm:num_requests_waiting{engine="0",model_name="m"} '
    idle = vllm_text(0, 0, 0, [0], 0, running=0).replace(waiting + "2", waiting + "0")
    answers = iter([idle] * 4 + [vllm_text(10, 30, 24, [10], 200)])
    scraper = MetricsScraper(
        _mock_transport(httpx.MockTransport(lambda r: httpx.Response(200, text=next(answers)))),
        "http://h", interval=0.01, max_polls=5)
    waits = []
    async for _ in scraper.events():
        waits.append(round(scraper.every, 3))
    assert waits == [0.02, 0.04, 0.05, 0.05, 0.01]


# ------------------------------------------------------------------ /server_info, config.json
# (the other things read from the server and its host: same fakes as the scraper above)

SGLANG_SERVER_INFO = {
    "model_path": "meta-llama/Llama-3.1-8B-Instruct",
    "served_model_name": "llama-8b",
    "speculative_algorithm": "eagle",
    "speculative_draft_model_path": "/models/EAGLE3-LLaMA3.1-Instruct-8B",
    "speculative_num_steps": 3,
    "speculative_eagle_topk": 1,
    "speculative_num_draft_tokens": 4,
    "version": "0.5.5",
    "internal_states": [{
        "avg_spec_accept_length": 1.07,
        "last_gen_throughput": 80.0,
        "memory_usage": {"weight": 15.14, "kvcache": 44.32, "token_capacity": 363000,
                         "cuda_graph": 0.61},
    }],
}


def test_sglang_server_info_gives_spec_settings_acceptance_and_memory() -> None:
    info = parse_sglang_server_info(SGLANG_SERVER_INFO, 5.0)
    assert info.spec == SpecConfig("EAGLE", "/models/EAGLE3-LLaMA3.1-Instruct-8B", 3, 1, 4,
                                   source="server_info")
    assert info.avg_accept_len == 1.07
    assert info.model_name == "llama-8b" and info.version == "0.5.5"
    assert info.memory_gb == (("weight", 15.14), ("kvcache", 44.32), ("cuda_graph", 0.61))
    older = {k: v for k, v in SGLANG_SERVER_INFO.items() if k != "internal_states"}
    older["avg_spec_accept_length"] = 2.5  # before May 2025 the state was at the top level
    assert parse_sglang_server_info(older, 0.0).avg_accept_len == 2.5
    assert parse_sglang_server_info({"model_path": "m"}, 0.0).spec is None
    with pytest.raises(ValueError):
        parse_sglang_server_info(["not", "a", "dict"], 0.0)


async def test_server_info_source_falls_back_to_v1_models_and_remembers() -> None:
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"object": "list", "data": [{"id": "tiny-llama"}]})
        return httpx.Response(404)

    # models_interval: /v1/models is re-read once a minute by default (two polls slept 2 min)
    src = ServerInfoSource(_mock_transport(httpx.MockTransport(handler)), "http://h",
                           interval=0.01, max_polls=2, models_interval=0.01)
    infos = [e async for e in src.events()]
    assert paths == ["/server_info", "/get_server_info", "/v1/models", "/v1/models"]
    # the same answer again is no event (an idle server's held the 1 s ticks going)
    assert [i.model_name for i in infos if isinstance(i, ServerInfo)] == ["tiny-llama"]


async def test_server_info_source_waits_quietly_while_the_server_is_down() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    src = ServerInfoSource(_mock_transport(httpx.MockTransport(handler)), "http://h",
                           retry_interval=0.01, max_polls=3)
    assert [e async for e in src.events()] == []


EAGLE3_CONFIG = TESTS / "realserver" / "models" / "tiny-eagle3"


def test_draft_config_markers() -> None:
    data = json.loads((EAGLE3_CONFIG / "config.json").read_text())
    cfg = parse_draft_config("/d", data)
    assert cfg == DraftConfig("/d", ("LlamaForCausalLMEagle3",), True, 128, 128, (1, 2, 3))
    eagle1 = parse_draft_config("/e", {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096})
    assert not eagle1.is_eagle3 and eagle1.aux_layer_ids == ()
    speculators = parse_draft_config("/s", {"speculators_model_type": "eagle3",
                                            "transformer_layer_config": {"hidden_size": 7168}})
    assert speculators.is_eagle3 and speculators.hidden_size == 7168
    with pytest.raises(ValueError):
        parse_draft_config("/x", [1])


def test_the_probe_and_lint_share_one_eagle3_predicate() -> None:
    """A community EAGLE-3 draft shipped as a plain LlamaForCausalLM with ``draft_vocab_size``:
    lint calls it EAGLE-3, and so does the probe (the same predicate, on every marker)."""
    from eagle_tui.model.launching.checks import is_eagle3_config

    community = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
                 "draft_vocab_size": 32000}
    assert parse_draft_config("/c", community).is_eagle3
    samples: list[dict[str, object]] = [
        community, {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096},
        {"architectures": ["Eagle3LlamaForCausalLM"]}, {"speculators_model_type": "EAGLE3"},
        {"eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 2]}},
        {"eagle_config": {"use_aux_hidden_state": True}}, {"eagle_config": {}},
        json.loads((EAGLE3_CONFIG / "config.json").read_text())]
    for data in samples:
        assert parse_draft_config("/d", data).is_eagle3 == is_eagle3_config(data), data


async def test_draft_config_source_follows_the_spec_path(tmp_path: Path) -> None:
    (tmp_path / "draft").mkdir()
    (tmp_path / "draft" / "config.json").write_text((EAGLE3_CONFIG / "config.json").read_text())
    spec: list[SpecConfig | None] = [None]
    src = DraftConfigSource(LocalTransport(), spec_provider=lambda: spec[0], poll_interval=0.01)
    gen = src.events()

    async def first() -> Event:
        return await anext(gen)

    task = asyncio.create_task(first())
    await asyncio.sleep(0.05)
    assert not task.done()  # no draft path known yet: nothing to read
    spec[0] = SpecConfig("EAGLE3", str(tmp_path / "draft"))
    cfg = await asyncio.wait_for(task, 5)
    assert isinstance(cfg, DraftConfig) and cfg.is_eagle3 and cfg.path == str(tmp_path / "draft")
    assert isinstance(gen, AsyncGenerator)
    await gen.aclose()


async def test_a_missing_draft_config_is_a_clear_error(tmp_path: Path) -> None:
    src = DraftConfigSource(LocalTransport(), str(tmp_path / "nope"))
    with pytest.raises(DraftConfigError, match="not found"):
        [e async for e in src.events()]
    (tmp_path / "bad.json").write_text("{oops")
    with pytest.raises(DraftConfigError, match="not valid JSON"):
        [e async for e in DraftConfigSource(LocalTransport(), str(tmp_path / "bad.json")).events()]
