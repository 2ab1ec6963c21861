"""The drill-down's metrics from Prometheus: recorded answers → the same MetricsSample events.

The answers in ``tests/fixtures/prometheus/drill-*.json`` were recorded from the real Prometheus
of the fleet integration tests (scrape every 1 s) scraping the SGLang and vLLM simulators, two
readings 4 s apart, and the SGLang one after it was stopped (``up == 0``); the ``instance``
label was renamed to ``<engine>-host:8000``.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from eagle_tui.model.events import HealthSample, MetricsSample
from eagle_tui.sources.metrics import RateWindow
from eagle_tui.sources.prom_metrics import (
    PromMetricsSource,
    events_of,
    exposed_names,
    instance_queries,
    reading_of,
)
from eagle_tui.sources.prometheus import PrometheusError
from tests.support.paths import TESTS

FIX = TESTS / "fixtures" / "prometheus"


def body(name: str) -> bytes:
    return (FIX / f"drill-{name}.json").read_bytes()


def stored(name: str, reading: str) -> dict[str, float]:
    """The recorded series, summed by stored name (what the server's counters said)."""
    out: dict[str, float] = {}
    for item in json.loads(body(f"{name}-{reading}-series"))["data"]["result"]:
        n = item["metric"]["__name__"]
        out[n] = out.get(n, 0.0) + float(item["value"][1])
    return out


def scrape_t(name: str, reading: str) -> float:
    doc = json.loads(body(f"{name}-{reading}-up"))
    return next(float(r["value"][1]) for r in doc["data"]["result"] if r["metric"]["q"] == "t")


def two(name: str) -> list[MetricsSample]:
    rates = RateWindow()
    out = []
    for n in ("1", "2"):
        r = reading_of(body(f"{name}-{n}-up"), body(f"{name}-{n}-series"))
        assert r.up == 1.0 and r.scrape_t == scrape_t(name, n)
        evs = events_of(r, r.scrape_t, rates, health=False)
        assert len(evs) == 1 and isinstance(evs[0], MetricsSample)
        out.append(evs[0])
    return out


def test_vllm_counters_become_the_windowed_figures() -> None:
    first, second = two("vllm")
    c0, c1 = stored("vllm", "1"), stored("vllm", "2")
    dt = scrape_t("vllm", "2") - scrape_t("vllm", "1")

    def d(n: str) -> float:
        return c1[f"vllm:{n}_total"] - c0[f"vllm:{n}_total"]

    assert first.engine == "vllm" and first.gen_tps is None  # one scrape: no window yet
    assert second.source == "prometheus" and second.t == scrape_t("vllm", "2")
    assert second.gen_tps == pytest.approx(d("generation_tokens") / dt)
    assert second.accept_len == pytest.approx(
        1 + d("spec_decode_num_accepted_tokens") / d("spec_decode_num_drafts"))
    assert second.acceptance_rate == pytest.approx(
        d("spec_decode_num_accepted_tokens") / d("spec_decode_num_draft_tokens"))
    assert len(second.per_position) == 3 and second.per_position[0] == pytest.approx(1.0)
    assert second.running == int(c1["vllm:num_requests_running"])


def test_sglang_names_stored_with_underscores_map_back() -> None:
    # Prometheus stored the simulator's (and the real server's) names with ':' escaped
    assert all(n.startswith("sglang_") for n in stored("sglang", "1"))
    first, second = two("sglang")
    c0, c1 = stored("sglang", "1"), stored("sglang", "2")
    gen = c1["sglang_generation_tokens_total"] - c0["sglang_generation_tokens_total"]
    verify = c1["sglang_spec_verify_calls_total"] - c0["sglang_spec_verify_calls_total"]
    dt = scrape_t("sglang", "2") - scrape_t("sglang", "1")
    assert second.engine == "sglang" and second.source == "prometheus"
    assert second.gen_tps == pytest.approx(gen / dt)
    assert second.accept_len == pytest.approx(gen / verify) and second.accept_len > 2
    assert first.gen_tps == pytest.approx(c0["sglang_gen_throughput"])  # the gauge at first


def test_health_from_up() -> None:
    live = reading_of(body("sglang-1-up"), body("sglang-1-series"))
    health = [e for e in events_of(live, 1.0, RateWindow(), health=True)
              if isinstance(e, HealthSample)]
    assert [h.state for h in health] == ["ready"]
    down = reading_of(body("sglang-down-up"), body("sglang-down-series"))
    assert down.up == 0.0 and not down.samples
    (only,) = events_of(down, 2.0, RateWindow(), health=True)
    assert isinstance(only, HealthSample) and only.state == "unknown"
    assert "down or starting" in only.error
    assert events_of(down, 2.0, RateWindow(), health=False) == []
    no_engine = reading_of(body("sglang-1-up"), body("sglang-down-series"))
    (starting,) = events_of(no_engine, 3.0, RateWindow(), health=True)
    assert isinstance(starting, HealthSample) and starting.state == "starting"


def test_queries_quote_the_instance_and_ask_both_spellings() -> None:
    up, series = instance_queries('a"b:1')
    assert 'instance="a\\"b:1"' in up and 'instance="a\\"b:1"' in series
    assert "sglang_spec_verify_calls_total" in series and "sglang:num_running_reqs" in series
    assert exposed_names()["sglang_num_running_reqs"] == "sglang:num_running_reqs"
    assert exposed_names()["vllm:generation_tokens_total"] == "vllm:generation_tokens_total"


def test_source_polls_skips_a_scrape_already_seen_and_fails_on_errors() -> None:
    answers = [("1", body("vllm-1-up"), body("vllm-1-series")),
               ("1", body("vllm-1-up"), body("vllm-1-series")),  # no new scrape yet
               ("2", body("vllm-2-up"), body("vllm-2-series"))]
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        q = request.url.params["query"]
        asked.append(q)
        n = (len(asked) - 1) // 2
        return httpx.Response(200, content=answers[n][1] if "up{" in q else answers[n][2])

    src = PromMetricsSource("http://prom:9090/", "vllm-host:8000", interval=0.001,
                            max_polls=3, http_transport=httpx.MockTransport(handler))

    async def run() -> list[object]:
        return [ev async for ev in src.events()]

    batches = asyncio.run(run())
    assert len(asked) == 6 and len(batches) == 2  # the repeated scrape emitted nothing
    last = batches[-1]
    assert isinstance(last, list) and isinstance(last[0], MetricsSample)
    assert last[0].accept_len is not None and last[0].source == "prometheus"

    def failing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b'{"status":"error","errorType":"bad_data",'
                                           b'"error":"parse error"}')

    bad = PromMetricsSource("http://prom:9090", "x:1", max_polls=1,
                            http_transport=httpx.MockTransport(failing))

    async def run_bad() -> None:
        async for _ in bad.events():
            pass

    with pytest.raises(PrometheusError, match="parse error"):
        asyncio.run(run_bad())


def test_values_that_are_not_readings_are_skipped_with_a_note() -> None:
    doc = json.loads(body("vllm-1-series"))
    for item in doc["data"]["result"]:
        if item["metric"]["__name__"] == "vllm:num_requests_waiting":
            item["value"][1] = "+Inf"
    r = reading_of(body("vllm-1-up"), json.dumps(doc).encode())
    assert r.skipped == ("vllm:num_requests_waiting",)
    (sample,) = events_of(r, 1.0, RateWindow(), health=False)
    assert isinstance(sample, MetricsSample) and sample.queued is None
    assert "vllm:num_requests_waiting" in sample.skipped
