"""The simulator's SGLang speculative modes print and answer what SGLang 0.5.23 does: the
adaptive tier's moves, DSpark's block figures, the tier gauges and ``/v1/loads`` per DP rank."""

from __future__ import annotations

from pathlib import Path

from eagle_tui.model.engines.sglang.loads import parse_loads
from eagle_tui.model.events import Baseline, EngineDetected, RankLoads
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.ranks import collapsed_ranks
from eagle_tui.model.views.tier import tier
from eagle_tui.report.builder import build_report
from eagle_tui.report.output import close
from eagle_tui.sim import metrics
from eagle_tui.sim.engine import ServingEngine
from eagle_tui.sim.specmodes import ADAPTIVE_EVERY
from eagle_tui.sim.timeline import build_timeline
from eagle_tui.sources.metrics import RateWindow, parse_metrics, to_sample
from tests.sim.test_scenarios import FakeClock, config, draft_event, parse


def _serve(scenario: str, requests: int, max_tokens: int) -> tuple[ServingEngine, list[str]]:
    cfg = config("sglang", scenario)
    clock = FakeClock()
    lines: list[str] = []
    engine = ServingEngine(cfg, lines.extend, lambda: cfg.t0 + 500.0 + clock.t, clock)
    engine.start_serving()
    for _ in range(requests):
        engine.submit(42, max_tokens)
        took = engine.prefill_seconds()
        clock.t += took
        engine.admit(took)
        while engine.running:
            clock.t += engine.step_seconds()
            engine.verify_step()
        clock.t += 0.05
    return engine, lines


def test_the_adaptive_tier_moves_and_says_so_as_sglang_does() -> None:
    cfg = config("sglang", "adaptive")
    engine, lines = _serve("adaptive", 4, 600)
    moves = [ln for ln in lines if "Adaptive spec params updated: steps " in ln]
    assert moves and moves[0].endswith(")") and "steps 3 -> 5 (ema_accept_len=" in moves[0]
    decode = [ln for ln in lines if "Decode batch" in ln]
    assert len(moves) == len(decode) // ADAPTIVE_EVERY  # (3, 5, 7, 5): every move a change
    targets = [int(ln.split(" -> ")[1].split()[0]) for ln in moves]
    assert targets[:4] == [5, 7, 5, 3]
    state = parse(build_timeline(cfg).lines() + lines, [Baseline(90.0, "demo"), draft_event(cfg)])
    assert state.config.spec is not None and state.config.spec.num_steps == 3
    assert not [a.kind for a in state.alerts if a.severity != "info"]
    sample = to_sample(parse_metrics(metrics.render(engine).decode(), 1.0), RateWindow())
    assert sample.spec_steps == engine.modes.steps
    assert sample.spec_draft_tokens == engine.modes.steps + 1


def test_dspark_serves_a_block_with_accept_length_near_10_and_no_alert() -> None:
    cfg = config("sglang", "dspark")
    engine, lines = _serve("dspark", 3, 800)
    state = parse(build_timeline(cfg).lines() + lines, [Baseline(90.0, "demo"), draft_event(cfg)])
    assert state.config.spec is not None and state.config.spec.algorithm == "DSPARK"
    assert tier(state).block == 16  # the launch's settings: 1 step, 17 draft tokens
    accepts = state.stats.accept_len.values()
    assert accepts and all(9.0 <= a <= 11.0 for a in accepts), accepts
    assert not [a.kind for a in state.alerts if a.severity != "info"]
    assert any("cap len: " in ln and "block accept len: " in ln for ln in lines)
    sample = to_sample(parse_metrics(metrics.render(engine).decode(), 1.0), RateWindow())
    assert (sample.spec_steps, sample.spec_draft_tokens) == (1, 17)
    assert sample.spec_cap_len is not None and sample.spec_block_accept_len is not None


def test_dp_ranks_answer_v1_loads_and_one_rank_collapses() -> None:
    engine, _ = _serve("dp-rank-collapse", 6, 200)
    before = parse_loads(engine.modes.loads(0, 0, 0, 0.0, 0.0), 1.0)
    engine2, _ = _serve("dp-rank-collapse", 8, 200)
    after = parse_loads(engine2.modes.loads(0, 0, 0, 0.0, 0.0), 2.0)
    assert [r for r, _ in after.accept] == [0, 1, 2, 3]
    values = dict(after.accept)
    assert values[2] < 1.5 and all(values[r] > 3.0 for r in (0, 1, 3)), values
    state = reduce(DashboardState(), [EngineDetected("sglang", 0), before, after])
    assert [r for r, _, _ in collapsed_ranks(state)] == [2]
    assert isinstance(before, RankLoads)


def test_one_rank_servers_answer_v1_loads_too() -> None:
    engine, _ = _serve("healthy", 1, 200)
    got = parse_loads(engine.modes.loads(1, 0, 100, 0.1, 150.0), 1.0)
    assert [r for r, _ in got.accept] == [0] and 3.0 <= got.accept[0][1] <= 3.5


def test_report_json_says_the_adaptive_servers_last_tier(tmp_path: Path) -> None:
    cfg = config("sglang", "adaptive")
    engine, lines = _serve("adaptive", 4, 600)
    log = tmp_path / "server.log"
    log.write_text("\n".join(build_timeline(cfg).lines() + lines) + "\n")
    with log.open("rb") as f:
        r = build_report(f, "server.log")
    try:
        assert r["tier"]["source"] == "log" and r["tier"]["steps"] == engine.modes.steps
        assert r["speculative"]["num_steps"] == 3  # the launch's, as before
        assert not [a for a in r["alerts"] if a["severity"] != "info"]
    finally:
        close(r)
