"""Every scenario's log, for both engines, read by the REAL model layer (parser + reducer).

The startup lines come from the pure timeline; the serving lines from the simulator's own
engine driven with a synthetic clock (exactly the lines the real-time loop prints, without
waiting for them). So a scenario is checked end to end through ``LogParser`` and ``reduce`` in a
few milliseconds: phases, crash kind, accept length, tok/s, hidden dims and the alerts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

from eagle_tui.model.events import Baseline, DraftConfig, Event, Phase, Progress
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.model.state import DashboardState
from eagle_tui.sim.engine import ServingEngine
from eagle_tui.sim.scenario import SCENARIOS, ServerConfig, draft_config_json, make_config
from eagle_tui.sim.timeline import build_timeline

T0 = 1_800_000_000.0
ENGINES = ("sglang", "vllm")
STARTUP_PHASES = (Phase.INIT, Phase.LOADING_WEIGHTS, Phase.KV_CACHE, Phase.CUDA_GRAPH,
                  Phase.READY)


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def serving_lines(cfg: ServerConfig, requests: int, max_tokens: int) -> list[str]:
    """Run ``requests`` sequential requests through the engine on a synthetic clock."""
    clock = FakeClock()
    lines: list[str] = []
    engine = ServingEngine(cfg, lines.extend, lambda: cfg.t0 + 500.0 + clock.t, clock)
    engine.start_serving()
    last_stats = 0.0
    for _ in range(requests):
        engine.submit(42, max_tokens)
        took = engine.prefill_seconds()
        clock.t += took
        engine.admit(took)
        while engine.running:
            clock.t += engine.step_seconds()
            engine.verify_step()
            if cfg.engine == "vllm" and clock.t - last_stats >= cfg.stats_interval_s:
                engine.log_vllm_stats()
                last_stats = clock.t
        clock.t += 0.05  # the client sends the next request
    return lines


def parse(lines: Sequence[str], extra: Sequence[Event] = ()) -> DashboardState:
    parser = LogParser()
    events: list[Event] = list(extra)
    for line in lines:
        events.extend(parser.feed_line(line))
    events.extend(parser.finish())
    return reduce(DashboardState(), events)


def config(engine: str, scenario: str, seed: int = 0) -> ServerConfig:
    return make_config(engine, scenario, gpus=8, port=30000, draft_path="/models/eagle3-draft",
                       seed=seed, t0=T0, main_pid=4242, child_pids=tuple(range(5000, 5009)))


def draft_event(cfg: ServerConfig) -> DraftConfig:
    """What the draft-config source reads from the simulator's config.json."""
    raw: dict[str, Any] = draft_config_json(cfg.model)
    return DraftConfig(cfg.draft_path, tuple(raw["architectures"]), True, raw["hidden_size"],
                       None, tuple(raw["eagle_config"]["eagle_aux_hidden_state_layer_ids"]))


def reached(state: DashboardState) -> set[Phase]:
    return {m.phase for m in state.startup.phases}


@pytest.mark.parametrize("engine", ENGINES)
def test_healthy_launch_and_serving(engine: str) -> None:
    cfg = config(engine, "healthy")
    startup = build_timeline(cfg).lines()
    state = parse(startup + serving_lines(cfg, 3, 400), [Baseline(90.0, "demo"),
                                                         draft_event(cfg)])
    assert state.startup.crash is None
    assert set(STARTUP_PHASES) <= reached(state)
    assert state.startup.phase is Phase.SERVING
    assert state.startup.engine == engine
    assert state.config.spec is not None and (state.config.spec.algorithm or "").upper() == "EAGLE3"
    assert state.startup.shards is not None
    assert state.startup.shards.done == state.startup.shards.total
    assert state.config.hidden_dims == (21504,)
    accepts = state.stats.accept_len.values()
    assert len(accepts) >= 3
    assert all(3.0 <= a <= 3.5 for a in accepts), accepts
    tps = state.stats.gen_tps.values()
    steady = tps[1:] if engine == "sglang" else tps  # SGLang's first interval includes idle
    assert steady and min(steady) > 1.5 * 90, tps
    assert not [a.kind for a in state.alerts if a.severity != "info"]


@pytest.mark.parametrize("engine", ENGINES)
def test_misconfigured_is_the_seed_bug(engine: str) -> None:
    cfg = config(engine, "misconfigured")
    state = parse(build_timeline(cfg).lines() + serving_lines(cfg, 3, 300),
                  [Baseline(90.0, "demo"), draft_event(cfg)])
    assert state.startup.crash is None and state.startup.phase is Phase.SERVING
    assert state.config.spec is not None and (state.config.spec.algorithm or "").upper() == "EAGLE"
    assert state.config.hidden_dims == (7168,)
    accepts = state.stats.accept_len.values()
    assert len(accepts) >= 3 and all(1.0 <= a <= 1.1 for a in accepts), accepts
    tps = state.stats.gen_tps.values()[1:]
    assert tps and all(50.0 <= v <= 62.0 for v in tps), tps  # ≈ 56.7 tok/s
    kinds = {a.kind for a in state.alerts}
    assert {"drafts_rejected", "hidden_dims", "eagle3_draft_with_eagle",
            "below_baseline"} <= kinds


CRASHES: dict[tuple[str, str], tuple[str, Phase]] = {
    # (engine, scenario): (crash kind, furthest phase reached before the crash)
    ("sglang", "oom"): ("cuda_oom", Phase.CUDA_GRAPH),
    ("vllm", "oom"): ("cuda_oom", Phase.CUDA_GRAPH),
    ("sglang", "nccl-timeout"): ("nccl", Phase.INIT),
    ("vllm", "nccl-timeout"): ("nccl", Phase.INIT),
    ("sglang", "port-in-use"): ("port_in_use", Phase.HTTP_SERVER),
    ("vllm", "port-in-use"): ("port_in_use", Phase.INIT),  # vLLM binds before loading
}


@pytest.mark.parametrize(("engine", "scenario"), list(CRASHES))
def test_crash_scenarios(engine: str, scenario: str) -> None:
    cfg = config(engine, scenario)
    timeline = build_timeline(cfg)
    state = parse(timeline.lines())
    kind, furthest = CRASHES[(engine, scenario)]
    assert state.startup.crash is not None, scenario
    assert state.startup.crash.kind == kind, state.startup.crash
    assert not state.startup.ready
    assert state.startup.phase.rank <= furthest.rank, (state.startup.phase, furthest)
    assert timeline.ready_at() is None
    expected_exit = {"oom": 137 if engine == "sglang" else 1, "nccl-timeout": 1,
                     "port-in-use": 3 if engine == "sglang" else 1}[scenario]
    assert timeline.exit_code == expected_exit
    assert timeline.steps[-1].kill == (engine == "sglang" and scenario == "oom")


@pytest.mark.parametrize("engine", ENGINES)
def test_oom_text_is_the_real_torch_message(engine: str) -> None:
    text = "\n".join(build_timeline(config(engine, "oom")).lines())
    match = re.search(r"torch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate "
                      r"[\d.]+ GiB\. GPU \d has a total capacity of 139\.80 GiB of which [\d.]+ "
                      r"GiB is free\. Including non-PyTorch memory, this process has [\d.]+ GiB "
                      r"memory in use\. Of the allocated memory [\d.]+ GiB is allocated by "
                      r"PyTorch, and [\d.]+ MiB is reserved by PyTorch but unallocated\. If "
                      r"reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC"
                      r"_CONF=expandable_segments:True to avoid fragmentation\.  See "
                      r"documentation for Memory Management  \(https://docs\.pytorch\.org/docs/"
                      r"stable/notes/cuda\.html#optimizing-memory-usage-with-pytorch-cuda-alloc-"
                      r"conf\)", text)
    assert match


@pytest.mark.parametrize("engine", ENGINES)
def test_slow_start_takes_minutes_of_weights(engine: str) -> None:
    slow, fast = build_timeline(config(engine, "slow-start")), build_timeline(config(engine,
                                                                                      "healthy"))

    def load_span(lines: list[str]) -> int:
        return sum("Loading safetensors checkpoint shards" in line for line in lines)

    assert load_span(slow.lines()) == load_span(fast.lines())  # same shards, slower
    assert slow.ready_at() is not None and fast.ready_at() is not None
    assert slow.ready_at() - fast.ready_at() > 180  # type: ignore[operator]
    assert parse(slow.lines()).startup.ready
    parser = LogParser()
    shards = [ev for line in slow.lines() for ev in parser.feed_line(line)
              if isinstance(ev, Progress) and ev.what == "shards" and ev.role == "target"]
    assert [p.done for p in shards] == sorted(p.done for p in shards)  # progress only grows
    assert shards[-1].done == shards[-1].total == 163


@pytest.mark.parametrize(("engine", "scenario"), [
    (e, s) for s, spec in SCENARIOS.items() for e in ENGINES
    if e == "sglang" or not spec.sglang_only])
def test_deterministic_per_seed(engine: str, scenario: str) -> None:
    a = build_timeline(config(engine, scenario, seed=7))
    assert a == build_timeline(config(engine, scenario, seed=7))
    assert a.steps != build_timeline(config(engine, scenario, seed=8)).steps


def test_rank_lines_follow_the_engines_prefixes() -> None:
    sg = build_timeline(config("sglang", "healthy")).lines()
    ends = [line for line in sg if "Load weight end." in line and "LlamaForCausalLMEagle3" not in
            line]
    assert len(ends) == 8
    assert all(re.match(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d TP\d\] Load weight end\. elapsed=", e)
               for e in ends)
    vl = build_timeline(config("vllm", "healthy")).lines()
    assert any(re.match(r"^\(Worker_TP7 pid=\d+\) INFO \d\d-\d\d \d\d:\d\d:\d\d "
                        r"\[default_loader\.py:\d+\] Loading weights took", line) for line in vl)
    assert vl[-1] == "INFO:     Application startup complete."


def test_sim_prints_the_engines_own_startup_figures() -> None:
    """SGLang's startup-timings line (its figures are the ones /metrics and /server_info serve)
    and vLLM's checkpoint size and prefetch lines, read as the real engines' would be."""
    sg = build_timeline(config("sglang", "healthy"))
    startup = next(s.startup for s in sg.steps if s.startup is not None)
    state = parse(sg.lines())
    times = state.startup.engine_times
    assert times is not None and times.source == "log"
    assert dict(times.figures)["load_weight"] == round(startup["load_weight"], 2)
    assert dict(times.phases)["cuda_graph"] == pytest.approx(
        sum(startup["cuda_graph"].values()), abs=0.03)
    cfg = config("vllm", "healthy")
    lines = build_timeline(cfg).lines()
    first_bar = next(i for i, x in enumerate(lines) if "checkpoint shards" in x)
    during = parse(lines[:first_bar])  # prefetched, before the loader's bar
    wb = during.startup.weight_bytes
    size = round(cfg.model.weights_gib, 2)
    assert wb is not None and wb.size_gib == size and wb.percent == 100.0
    from eagle_tui.model.views.steps import step_detail
    assert step_detail(during, "weights", "active") == (f"{size:.1f}/{size:.1f} GiB", 1.0)
    some = next(i for i, x in enumerate(lines) if "Prefetching checkpoint files: 20%" in x)
    got = parse(lines[: some + 1]).startup.weight_bytes
    assert got is not None and got.size_gib == size and got.percent is not None
    assert 20.0 <= got.percent < 100.0


@pytest.mark.parametrize("scenario", [s for s, spec in SCENARIOS.items() if spec.sglang_only])
def test_sglang_only_scenarios_are_refused_for_vllm(scenario: str) -> None:
    with pytest.raises(ValueError, match="SGLang's"):
        config("vllm", scenario)
