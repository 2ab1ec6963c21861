"""The holds where they are read: the hold endpoints (asked quietly), the sleep gauge on
``/metrics`` and in the fleet's Prometheus answers (vLLM 0.32's names, SGLang 0.5.23's paths)."""

from __future__ import annotations

import asyncio
import json

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.engines import profile_of
from eagle_tui.model.events import HealthSample, HoldSample
from eagle_tui.model.fleet.queries import fleet_groups, hold_figures
from eagle_tui.model.fleet.snapshot import SLEEPING, build_snapshot
from eagle_tui.sources.hold import HoldWatch
from eagle_tui.sources.metrics import RateWindow, parse_metrics, to_sample
from tests.unit.model.fleet.test_fleet_model import answers, rows_by_instance, v

# vLLM 0.32's exposition of the gauge (v1/metrics/loggers.py), asleep at level 1
GAUGE = """# HELP vllm:engine_sleep_state Engine sleep state; awake = 0 means engine is sleeping
# TYPE vllm:engine_sleep_state gauge
vllm:engine_sleep_state{engine="0",model_name="m",sleep_state="awake"} 0.0
vllm:engine_sleep_state{engine="0",model_name="m",sleep_state="weights_offloaded"} 1.0
vllm:engine_sleep_state{engine="0",model_name="m",sleep_state="discard_all"} 0.0
vllm:num_requests_running{engine="0",model_name="m"} 0.0
"""


def test_metrics_sample_reads_the_sleep_gauge() -> None:
    sample = to_sample(parse_metrics(GAUGE, 5.0), RateWindow())
    assert (sample.asleep, sample.sleep_level) == (True, 1)
    awake = GAUGE.replace('"awake"} 0.0', '"awake"} 1.0').replace('offloaded"} 1.0',
                                                                  'offloaded"} 0.0')
    sample = to_sample(parse_metrics(awake, 6.0), RateWindow())
    assert (sample.asleep, sample.sleep_level) == (False, None)
    plain = to_sample(parse_metrics(GAUGE.split("\n", 5)[-1], 7.0), RateWindow())
    assert plain.asleep is None  # no gauge: nothing said


class Server:
    """A canned server: ``paths`` → (status, JSON body); counts what was asked."""

    def __init__(self, paths: dict[str, tuple[int, object]]) -> None:
        self.paths = paths
        self.asked: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.asked.append(request.url.path)
        status, body = self.paths.get(request.url.path, (404, {"detail": "Not Found"}))
        return httpx.Response(status, content=json.dumps(body).encode())


def _ask(watch: HoldWatch, server: Server, samples: list[HealthSample]) -> list[HoldSample]:
    async def run() -> list[HoldSample]:
        out: list[HoldSample] = []
        async with httpx.AsyncClient(transport=httpx.MockTransport(server),
                                     base_url="http://x") as client:
            for s in samples:
                out.extend(await watch.ask(client, s))
        return out
    return asyncio.run(run())


def test_vllm_endpoints_asked_at_the_slow_cadence_and_never_after_a_404() -> None:
    now = [0.0]
    watch = HoldWatch(lambda: "vllm", clock=lambda: 100.0, monotonic=lambda: now[0])
    server = Server({"/is_paused": (200, {"is_paused": True})})  # /is_sleeping: 404
    ready = HealthSample("ready", 1.0, 200, path="/health")
    got = _ask(watch, server, [ready, ready, ready])
    assert got == [HoldSample(100.0, paused=True, path="/is_paused")]
    assert server.asked == ["/is_sleeping", "/is_paused"]  # the next two polls: not due
    now[0] = 60.0
    _ask(watch, server, [ready])
    assert server.asked == ["/is_sleeping", "/is_paused", "/is_paused"]  # 404: never again


def test_sglang_paused_told_from_starting_by_ping() -> None:
    """SGLang 0.5.23: paused → /ready 503, /ping 200; starting → both 503."""
    now = [0.0]
    watch = HoldWatch(lambda: "sglang", clock=lambda: 50.0, monotonic=lambda: now[0])
    server = Server({"/ping": (503, {})})
    starting = HealthSample("starting", 1.0, 503, path="/ready")
    assert _ask(watch, server, [starting, starting]) == []
    assert server.asked == ["/ping"]  # before the first ready: the slow cadence
    ready = HealthSample("ready", 2.0, 200, path="/ready")
    server.paths["/ping"] = (200, {})
    server.paths["/ready"] = (503, {})
    got = _ask(watch, server, [ready, starting])
    assert got == [HoldSample(50.0, paused=True, path="/ping")]
    assert _ask(watch, server, [starting]) == []  # known paused: /ping not asked every poll
    assert server.asked == ["/ping", "/ping", "/ready"]
    assert _ask(watch, server, [ready]) == [HoldSample(2.0, paused=False, path="/ready")]


def test_a_start_ending_between_ready_and_ping_is_not_a_pause() -> None:
    """/ready said 503 (starting), the server came up, then /ping said 200: asked again, /ready
    says 200, so no pause is told; a server still at 503 after /ping's 200 is paused."""
    watch = HoldWatch(lambda: "sglang", clock=lambda: 50.0, monotonic=lambda: 0.0)
    server = Server({"/ping": (200, {}), "/ready": (200, {})})
    starting = HealthSample("starting", 1.0, 503, path="/ready")
    assert _ask(watch, server, [starting]) == []
    assert server.asked == ["/ping", "/ready"]
    paused = HoldWatch(lambda: "sglang", clock=lambda: 50.0, monotonic=lambda: 0.0)
    server = Server({"/ping": (200, {}), "/ready": (503, {})})
    assert _ask(paused, server, [starting]) == [HoldSample(50.0, paused=True, path="/ping")]


def test_an_unknown_engine_is_not_asked() -> None:
    server = Server({})
    assert _ask(HoldWatch(lambda: None), server, [HealthSample("ready", 1.0, 200)]) == []
    assert server.asked == []


def test_fleet_queries_ask_the_sleep_gauge_per_label() -> None:
    figs = dict(hold_figures('job="llm"'))
    assert set(figs) == {"sleep_awake", "sleep_level_1", "sleep_level_2"}
    assert 'sleep_state="awake"' in figs["sleep_awake"] and 'job="llm"' in figs["sleep_awake"]
    assert "vllm_engine_sleep_state" in figs["sleep_awake"]  # the escaped spelling too
    gauges = next(g for g in fleet_groups('job="llm"') if g.name == "gauges")
    assert "sleep_awake" in dict(gauges.figures)


def test_fleet_row_sleeping_with_its_level() -> None:
    a = answers(sleep_awake=v(v1_8000=0.0, v2_8000=1.0), sleep_level_1=v(v1_8000=0.0),
                sleep_level_2=v(v1_8000=1.0), running=v(v1_8000=0, v2_8000=4, s1_30000=2))
    rows = rows_by_instance(build_snapshot(a, [], 100.0).rows)
    assert rows["v1:8000"].state == SLEEPING and rows["v1:8000"].sleep_level == 2
    assert rows["v1:8000"].state_text == "sleeping (level 2)"
    assert rows["v1:8000"].as_dict()["sleep_level"] == 2
    assert rows["v2:8000"].state == "serving" and rows["v2:8000"].sleep_level is None


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["awake", "weights_offloaded", "discard_all", "other"]),
                       st.floats(allow_nan=False, allow_infinity=False), max_size=4))
def test_sleep_of_any_gauge_values(values: dict[str, float]) -> None:
    facet = profile_of("vllm").hold  # type: ignore[union-attr]
    got = facet.sleep_of({facet.gauge_key(k): v for k, v in values.items()})
    if "awake" not in values:
        assert got is None
    elif values["awake"] >= 1:
        assert got == (False, None)
    else:
        assert got is not None and got[0] and got[1] in (0, 1, 2)
