"""The Prometheus source against httpx.MockTransport: errors, partial data, slow, oversized."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx

from eagle_tui.model.fleet.snapshot import FleetSnapshot
from eagle_tui.sources.prometheus import FleetPoller

Handler = Callable[[httpx.Request], object]


def ok_vector(result: list[dict[str, object]], warnings: list[str] | None = None) -> bytes:
    doc: dict[str, object] = {"status": "success",
                              "data": {"resultType": "vector", "result": result}}
    if warnings:
        doc["warnings"] = warnings
    return json.dumps(doc).encode()


def state_answer() -> bytes:
    return ok_vector([
        {"metric": {"fleet_q": "up", "instance": "a:8000"}, "value": [1, "1"]},
        {"metric": {"fleet_q": "engine_vllm", "instance": "a:8000", "engine": "vllm",
                    "model_name": "m"}, "value": [1, "1"]},
        {"metric": {"fleet_q": "gen_total", "instance": "a:8000"}, "value": [1, "10"]},
    ])


def run(handler: Callable[[httpx.Request], httpx.Response | object], *, deadline: float = 2.0,
        max_body: int = 1 << 20, prev: FleetSnapshot | None = None) -> FleetSnapshot:
    async def go() -> FleetSnapshot:
        poller = FleetPoller("http://prom", deadline_s=deadline, max_body=max_body,
                             clock=lambda: 100.0)
        poller.last = prev
        async with httpx.AsyncClient(base_url="http://prom",
                                     transport=httpx.MockTransport(handler)) as client:
            return await poller.refresh(client)
    return asyncio.run(go())


def group_of(request: httpx.Request) -> str:
    q = request.url.params.get("query", "")
    for name in ("up", "tok_s", "running", "ttft_p50"):
        if f'"fleet_q", "{name}"' in q:
            return {"up": "state", "tok_s": "rates", "running": "gauges",
                    "ttft_p50": "latency"}[name]
    return "?"


def test_one_group_failing_is_partial_and_says_which() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        g = group_of(request)
        if g == "state":
            return httpx.Response(200, content=state_answer())
        if g == "rates":
            return httpx.Response(422, content=json.dumps(
                {"status": "error", "errorType": "execution", "error": "too many samples"}))
        return httpx.Response(200, content=ok_vector([], warnings=["partial from store-2"]))

    snap = run(handler)
    assert snap.status == "partial" and [r.instance for r in snap.rows] == ["a:8000"]
    assert snap.rows[0].stale
    assert "rates: execution: too many samples" in snap.errors
    assert any("warning: partial from store-2" in e for e in snap.errors)


def test_slow_prometheus_hits_the_total_deadline() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return httpx.Response(200, content=state_answer())

    first = run(lambda r: httpx.Response(200, content=state_answer()))
    snap = run(slow, deadline=0.2, prev=first)
    assert snap.status == "stale" and snap.rows[0].stale and snap.rows[0].instance == "a:8000"
    assert all("no answer within 0.2 s" in e for e in snap.errors)
    assert snap.latency_s is not None and snap.latency_s < 2.0


def test_oversized_and_garbage_answers_are_errors() -> None:
    big = run(lambda r: httpx.Response(200, content=b"x" * 5000), max_body=1000)
    assert big.status == "stale" and "over 1,000 bytes" in big.errors[0]
    junk = run(lambda r: httpx.Response(200, content=b"<html>proxy login</html>"))
    assert "not Prometheus JSON" in junk.errors[0]
    down = run(lambda r: httpx.Response(502, content=b"bad gateway"))
    assert "HTTP 502" in down.errors[0]


def test_scrape_intervals_from_targets_and_tiers_only_while_an_instance_is_young() -> None:
    """The poller reads /api/v1/targets (once a minute), asks the shorter window tiers while
    some instance is younger than the window, and stops asking them once none is."""
    age = {"samples": "5"}
    paths: list[str] = []
    queries: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        if request.url.path == "/api/v1/targets":
            return httpx.Response(200, content=json.dumps({"status": "success", "data": {
                "activeTargets": [{"labels": {"instance": "a:8000"},
                                   "scrapeInterval": "1s"}]}}).encode())
        q = request.url.params.get("query", "")
        queries.append(q)
        if group_of(request) == "state":
            return httpx.Response(200, content=ok_vector([
                {"metric": {"fleet_q": "up", "instance": "a:8000"}, "value": [1, "1"]},
                {"metric": {"fleet_q": "samples", "instance": "a:8000"},
                 "value": [1, age["samples"]]}]))
        return httpx.Response(200, content=ok_vector([]))

    async def go() -> FleetPoller:
        poller = FleetPoller("http://prom", clock=lambda: 100.0)
        async with httpx.AsyncClient(base_url="http://prom",
                                     transport=httpx.MockTransport(handler)) as client:
            await poller.refresh(client)
            assert poller.plan.scrape == {"a:8000": 1.0}
            assert [w for w, _ in poller.plan.shorter] == ["10s", "30s"]
            assert any("[10s]" in q for q in queries)
            age["samples"] = "61"  # a minute of 1 s scrapes: no longer young
            await poller.refresh(client)  # still asks the tiers: its answer says "old"
            queries.clear()
            await poller.refresh(client)
            assert poller.plan.shorter == () and not any("[10s]" in q for q in queries)
        return poller

    poller = asyncio.run(go())
    assert paths.count("/api/v1/targets") == poller.target_requests == 1
    assert poller.requests == 3 * len(poller.groups)
