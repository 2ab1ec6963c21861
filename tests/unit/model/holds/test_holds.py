"""Sleep, pause and fault-tolerance holds: the engines' own strings (vLLM 0.32, SGLang 0.5.23,
read in their installed code), the fold, the views, the alerts and ``wait``'s verdict."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.headless.progress import verdict
from eagle_tui.model.engines import profile_of
from eagle_tui.model.engines.vllm.hold import read_line
from eagle_tui.model.events import HealthSample, HoldLine, HoldSample, MetricsSample, Tick
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.figtext import figures_dict
from eagle_tui.model.views.figures import figures
from eagle_tui.model.views.hold import hold_of
from eagle_tui.model.views.liveness import liveness
from tests.unit.model.views.test_liveness import busy_vllm

# vLLM 0.32's lines, as its loggers print them (the message formats of
# v1/core/sched/scheduler.py, v1/worker/gpu_worker.py, v1/executor/abstract.py,
# entrypoints/serve/dev/sleep/api_router.py and v1/fault_tolerance/engine_core_sentinel.py)
V032_SLEEP = [
    "(APIServer pid=1) INFO 12-02 08:31:20 [api_server.py:1] vLLM API server version 0.32.0",
    "(EngineCore pid=2) INFO 12-02 08:31:24 [scheduler.py:2756] setting pause state to "
    "PAUSED_NEW",
    "(Worker pid=3) INFO 12-02 08:31:24 [gpu_worker.py:326] Sleep mode freed 61.37 GiB memory, "
    "2.18 GiB memory is still in use.",
    "(EngineCore pid=2) INFO 12-02 08:31:24 [abstract.py:390] It took 0.412731 seconds to fall "
    "asleep.",
]
V032_WAKE = [
    "(APIServer pid=1) INFO 12-02 08:35:00 [api_router.py:50] wake up the engine with tags: None",
    "(EngineCore pid=2) INFO 12-02 08:35:01 [abstract.py:408] It took 0.853104 seconds to wake up "
    "tags {'weights', 'kv_cache'}.",
    "(EngineCore pid=2) INFO 12-02 08:35:01 [scheduler.py:2756] setting pause state to UNPAUSED",
]
V032_FT = [
    "(EngineCore pid=2) WARNING 12-02 08:40:00 [engine_core_sentinel.py:82] [FT] Busy loop "
    "raised RuntimeError. Waiting for recovery.",
    "(EngineCore pid=2) INFO 12-02 08:40:00 [engine_core_sentinel.py:99] [FT] Engine 0 status "
    "-> UNHEALTHY:",
]
V032_FT_OK = ["(EngineCore pid=2) INFO 12-02 08:41:00 [engine_core_sentinel.py:132] [FT] Engine "
              "0 status -> HEALTHY"]


def _events(lines: list[str]) -> list[object]:
    parser = LogParser()
    return [e for line in lines for e in parser.feed_line(line)]


def test_vllm_032_lines_read_as_holds() -> None:
    evs = [e for e in _events(V032_SLEEP + V032_WAKE + V032_FT + V032_FT_OK)
           if isinstance(e, HoldLine)]
    assert [e.what for e in evs] == ["paused", "asleep", "asleep", "waking", "awake", "resumed",
                                     "ft_fault", "ft_fault", "ft_healthy"]
    assert evs[1].detail == "freed 61.37 GiB, 2.18 GiB still in use"
    assert evs[7].detail == "engine 0 UNHEALTHY"
    assert read_line("[FT] No recovery within 60s timeout.", 1, None) == HoldLine(
        "ft_gave_up", 1, None, detail="no recovery within 60 s")
    # a partial wake (only the weights) is still asleep
    part = read_line("It took 0.5 seconds to wake up tags ['weights'].", 1, None)
    assert part is not None and part.what == "waking"


def _state(*batches: list[object], t: float = 1_796_000_000.0) -> DashboardState:
    state = DashboardState()
    for i, batch in enumerate(batches):
        state = reduce(state, [Tick(t + i), *batch])  # type: ignore[list-item]
    return state


def test_sleep_from_the_log_then_wake() -> None:
    state = _state(_events(V032_SLEEP))
    held = hold_of(state)
    assert held is not None and held.state == "sleeping"
    assert held.text.startswith("sleeping since ")
    assert [a.kind for a in state.alerts] == ["held"]
    awake = reduce(state, _events(V032_WAKE))  # type: ignore[arg-type]
    assert hold_of(awake) is None
    assert [a.kind for a in awake.alerts] == []


def test_the_gauge_gives_the_level_and_keeps_since() -> None:
    t = 1_796_000_000.0
    asleep = MetricsSample(t=t, engine="vllm", asleep=True, sleep_level=1)
    state = _state([asleep], [MetricsSample(t=t + 5, engine="vllm", asleep=True, sleep_level=1)])
    held = hold_of(state)
    assert held is not None and held.level == 1 and held.since == t
    assert "sleeping (level 1) since" in held.text and held.source == "/metrics"
    assert hold_of(reduce(state, [MetricsSample(t=t + 9, engine="vllm", asleep=False)])) is None


def test_sleep_gauge_of_vllm_032() -> None:
    """``vllm:engine_sleep_state`` as vLLM 0.32's ``record_sleep_state`` sets it."""
    facet = profile_of("vllm").hold  # type: ignore[union-attr]
    key = facet.gauge_key
    assert facet.sleep_of({}) is None
    assert facet.sleep_of({key("awake"): 1.0, key("weights_offloaded"): 0.0}) == (False, None)
    assert facet.sleep_of({key("awake"): 0.0, key("weights_offloaded"): 1.0,
                           key("discard_all"): 0.0}) == (True, 1)
    assert facet.sleep_of({key("awake"): 0.0, key("discard_all"): 1.0}) == (True, 2)
    assert facet.sleep_of({key("awake"): 0.0}) == (True, 0)  # level 0: scheduling paused


def test_a_sleeping_server_is_neither_idle_nor_stale_and_silences_the_stall() -> None:
    state, t = busy_vllm()
    late = t + 120  # long silence: "idle" or "stale" without the hold
    state = reduce(state, [MetricsSample(t=late, engine="vllm", asleep=True, sleep_level=2),
                           HealthSample("ready", late, 200, 0.001), Tick(late)])
    live = liveness(state)
    assert live.activity == "sleeping" and "level 2" in live.reason
    assert figures_dict(figures(state))["state"] == "sleeping"
    assert "stuck_collective" not in {a.kind for a in state.alerts}


def test_sglang_paused_is_up_for_wait_and_no_lost_readiness() -> None:
    t = 1_796_000_000.0
    state = _state([HealthSample("ready", t, 200, 0.001, path="/ready")],
                   [HealthSample("starting", t + 1, 503, 0.001, path="/ready")])
    assert verdict(state, has_url=True) == ("crashed", "/ready was ready and is now starting")
    assert "health_lost" in {a.kind for a in state.alerts}
    paused = reduce(state, [HoldSample(t + 1, paused=True, path="/ping")])
    found = verdict(paused, has_url=True)
    assert found is not None and found[0] == "ready" and "paused since" in found[1]
    assert {a.kind for a in paused.alerts} == {"held"}
    assert liveness(paused).activity == "paused"
    resumed = reduce(paused, [HoldSample(t + 2, paused=False, path="/ready"),
                              HealthSample("ready", t + 2, 200, 0.001, path="/ready")])
    assert hold_of(resumed) is None


def test_ft_outranks_sleep_and_clears_on_healthy() -> None:
    state = _state(_events(V032_SLEEP), _events(V032_FT))
    held = hold_of(state)
    assert held is not None and held.state == "recovering"
    assert held.text.startswith("fault-tolerance: engine 0 UNHEALTHY since")
    assert state.alerts[0].severity == "warning"
    back = reduce(state, _events(V032_FT_OK))  # type: ignore[arg-type]
    held = hold_of(back)
    assert held is not None and held.state == "sleeping"


def test_is_sleeping_while_paused_says_nothing_of_sleep() -> None:
    """vLLM 0.32's ``is_sleeping`` is "scheduler paused or executor asleep"."""
    t = 1_796_000_000.0
    state = _state([HoldSample(t, paused=True, sleeping=True, path="/is_sleeping,/is_paused")])
    held = hold_of(state)
    assert held is not None and held.state == "paused"
    assert hold_of(reduce(state, [HoldSample(t + 1, paused=False, sleeping=False)])) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["[FT] ", "setting pause state to ", "wake up ",
                                               "It took 1.0 seconds to ", "Sleep mode freed ",
                                               ""]))
def test_read_line_never_raises_and_is_bounded(text: str, lead: str) -> None:
    ev = read_line(lead + text, 7, None)
    if ev is not None:
        assert ev.lineno == 7 and len(ev.detail) <= 200
        state = reduce(DashboardState(), [Tick(1.0), ev])
        assert len(state.holds.lines) == 1
