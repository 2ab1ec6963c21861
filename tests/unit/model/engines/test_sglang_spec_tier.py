"""SGLang's active speculative tier and DSpark's block figures (names of SGLang 0.5.23's
``metrics_collector.py``), and the drafts-rejected thresholds relative to the tier.

The exposition samples are the real 0.5.23 CPU server's (tests/fixtures/sglang-cpu/*-metrics.txt,
recorded with ``--enable-metrics``); the DSpark ones are written with 0.5.23's names and labels
(a DSpark server needs a GPU).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eagle_tui.model.events import DecodeStats, EngineDetected, MetricsSample, SpecConfig
from eagle_tui.model.fleet.flags import apply_flags
from eagle_tui.model.fleet.rows import FleetRow
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.alerts import evaluate_alerts
from eagle_tui.model.views.tier import Tier, thresholds, tier
from eagle_tui.model.views.tiertext import tier_dict, tier_text
from eagle_tui.sources.metrics import RateWindow, parse_metrics, to_sample

FIXTURES = Path(__file__).parents[3] / "fixtures" / "sglang-cpu"
LABELS = ('{engine_type="unified",model_name="m",moe_ep_rank="0",pp_rank="0",tp_rank="0"}')


def _sample(text: str, t: float = 100.0) -> MetricsSample:
    return to_sample(parse_metrics(text, t), RateWindow())


def _dspark(steps: float = 1, window: float = 17, cap: float = 12.4,
            block: float = 10.9) -> str:
    return "\n".join((
        f"sglang:num_running_reqs{LABELS} 2.0",
        f"sglang:spec_accept_length{LABELS} 10.2",
        f"sglang:spec_cap_length{LABELS} {cap}",
        f"sglang:spec_block_accept_length{LABELS} {block}",
        f"sglang:spec_num_steps{LABELS} {steps}",
        f"sglang:spec_num_draft_tokens{LABELS} {window}",
    )) + "\n"


def _state(*events: object) -> DashboardState:
    return reduce(DashboardState(), [EngineDetected("sglang", 0), *events])  # type: ignore[list-item]


def test_the_real_0_5_23_eagle3_server_exports_its_tier() -> None:
    s = _sample((FIXTURES / "eagle3-metrics.txt").read_text())
    assert (s.spec_steps, s.spec_draft_tokens) == (3, 4)
    assert s.spec_cap_len is None and s.spec_block_accept_len is None  # 0: no cap scheduled
    t = tier(_state(s))
    assert t == Tier(3, 4, None, True, source="/metrics") and t.ceiling == 4 and not t.off
    assert thresholds(t) == (1.10, 1.20)  # the fixed thresholds hold for 3 steps


def test_the_real_ngram_server_reads_as_its_window_not_as_drafting_off() -> None:
    s = _sample((FIXTURES / "ngram-metrics.txt").read_text())
    assert (s.spec_steps, s.spec_draft_tokens) == (0, 4)
    t = tier(_state(s))
    assert not t.off and t.drafts == 3


def test_a_server_without_speculation_has_no_tier() -> None:
    s = _sample((FIXTURES / "nospec-metrics.txt").read_text())
    assert tier(_state(s)) == Tier() and tier_dict(_state(s)) is None


def test_dspark_block_of_16_and_its_thresholds() -> None:
    s = _sample(_dspark())
    assert (s.spec_steps, s.spec_draft_tokens) == (1, 17)
    assert (s.spec_cap_len, s.spec_block_accept_len) == (12.4, 10.9)
    t = tier(_state(s))
    assert (t.block, t.ceiling, t.text()) == (16, 17, "block 16")
    low, high = thresholds(t)
    assert low == pytest.approx(1 + 0.1 * 16 / 3) and high == pytest.approx(1 + 0.2 * 16 / 3)
    d = tier_dict(_state(s))
    assert d is not None and d["block"] == 16 and d["max_accept_len"] == 17
    assert d["source"] == "/metrics"
    assert tier_text(_state(s)) == "tier block 16 [/metrics]"


def test_a_block_window_without_block_gauges_is_still_a_block() -> None:
    # cap-accept mode off: both block gauges 0, the window still says 1 step of a block
    t = tier(_state(_sample(_dspark(cap=0, block=0))))
    assert t.block == 16


def test_the_launch_settings_give_the_tier_without_metrics() -> None:
    st = _state(SpecConfig(algorithm="DSPARK", num_steps=1, eagle_topk=1, num_draft_tokens=9))
    t = tier(st)
    assert (t.block, t.active) == (8, False)
    d = tier_dict(st)
    assert d is not None and d["source"] == "launch"


@pytest.mark.parametrize("bad", ["NaN", "-3", "1e300", "+Inf"])
def test_tier_gauges_out_of_range_are_no_reading(bad: str) -> None:
    s = _sample(_dspark(steps=bad, window=bad, cap=bad, block=bad))  # type: ignore[arg-type]
    assert s.spec_steps is None and s.spec_draft_tokens is None
    assert s.spec_cap_len is None and s.spec_block_accept_len is None


def _lines(*values: float) -> list[DecodeStats]:
    return [DecodeStats(i + 1, accept_len=v, gen_tps=100.0, running=1)
            for i, v in enumerate(values)]


def _kinds(st: DashboardState) -> list[str]:
    return [a.kind for a in evaluate_alerts(st)]


def test_accept_length_10_is_healthy_for_a_block_of_16() -> None:
    st = _state(_sample(_dspark()), *_lines(10.1, 9.8, 10.3))
    assert "drafts_rejected" not in _kinds(st)


def test_a_low_accept_length_for_a_block_of_16_is_drafts_rejected() -> None:
    st = _state(_sample(_dspark()), *_lines(1.4, 1.35))
    found = [a for a in evaluate_alerts(st) if a.kind == "drafts_rejected"]
    assert found and "for block 16" in found[0].message and "≤ 1.53" in found[0].message
    # the same lines under 3 steps are not a rejection (the fixed 1.10 holds there)
    three = _state(SpecConfig(algorithm="EAGLE3", num_steps=3, num_draft_tokens=4),
                   *_lines(1.4, 1.35))
    assert "drafts_rejected" not in _kinds(three)


def test_an_adaptive_tier_of_0_steps_is_no_rejection() -> None:
    off = "\n".join((f"sglang:spec_num_steps{LABELS} 0", f"sglang:spec_num_draft_tokens{LABELS} 1",
                     f"sglang:num_running_reqs{LABELS} 40")) + "\n"
    st = _state(SpecConfig(algorithm="EAGLE3", num_steps=3, num_draft_tokens=4), _sample(off),
                *_lines(1.0, 1.0, 1.0))
    assert tier(st).off and tier(st).text() == "steps 0 (drafting off)"
    assert "drafts_rejected" not in _kinds(st)


def test_fleet_flag_follows_the_rows_tier() -> None:
    block = FleetRow("a:1", engine="sglang", spec=True, accept_len=1.4, spec_steps=1,
                     spec_draft_tokens=17, spec_block=16)
    fine = FleetRow("b:1", engine="sglang", spec=True, accept_len=10.0, spec_steps=1,
                    spec_draft_tokens=17, spec_block=16)
    chain = FleetRow("c:1", engine="sglang", spec=True, accept_len=1.4, spec_steps=3,
                     spec_draft_tokens=4)
    rows = {r.instance: r for r in apply_flags([block, fine, chain])}
    assert "drafts_rejected" in rows["a:1"].flags
    assert any("for block 16" in r for r in rows["a:1"].reasons)
    assert "drafts_rejected" not in rows["b:1"].flags
    assert "drafts_rejected" not in rows["c:1"].flags
    assert rows["a:1"].as_dict()["spec_block"] == 16


# a DSpark decode line in 0.5.23's wording (metrics_reporter.py: cap len and block accept len
# follow accept rate where they are above 0)
DSPARK_LINE = ("[2026-12-02 08:00:00 TP0] Decode batch, #running-req: 2, #token: 500, token usage: "
               "0.01, accept len: 10.20, accept rate: 0.57, cap len: 12.40, block accept len: "
               "10.90, cuda graph: True, gen throughput (token/s): 540.00, #queue-req: 0")


def test_a_dspark_decode_line_reads_on_the_fast_path_as_the_generic_one() -> None:
    from eagle_tui.model.engines.sglang.logs import (
        DECODE_FIELDS,
        decode_stats,
        decode_stats_generic,
    )

    assert DECODE_FIELDS.search(DSPARK_LINE) is not None
    fast = decode_stats(DSPARK_LINE, 1, None, DSPARK_LINE)
    assert fast == decode_stats_generic(DSPARK_LINE, 1, None, DSPARK_LINE)
    assert (fast.accept_len, fast.gen_tps, fast.running) == (10.2, 540.0, 2)


def test_the_simulator_prints_the_dspark_line_in_that_wording() -> None:
    from eagle_tui.sim import sglang_log
    from eagle_tui.sim.scenario import make_config

    cfg = make_config("sglang", "dspark", gpus=1)
    line = sglang_log.decode_line(cfg, 0.0, 2, 500, 0.01, 10.2, 540.0, 0, 17, 12.4, 10.9)
    assert line.split("] ", 1)[1] == DSPARK_LINE.split("] ", 1)[1]
    assert sglang_log.adaptive_line(cfg, 0.0, 3, 5, 4.12).endswith(
        "] Adaptive spec params updated: steps 3 -> 5 (ema_accept_len=4.12)")


ADAPTIVE_LINE = ("[2026-12-02 08:00:05 TP0] Adaptive spec params updated: steps 3 -> 5 "
                 "(ema_accept_len=4.12)")  # adaptive_spec_params.py, 0.5.23


def test_the_adaptive_line_gives_the_active_tier_from_the_log() -> None:
    from eagle_tui.model.events import SpecTier
    from eagle_tui.model.ingest.parser import LogParser

    events = LogParser().feed_line(ADAPTIVE_LINE)
    assert [e.steps for e in events if isinstance(e, SpecTier)] == [5]
    st = _state(SpecConfig(algorithm="EAGLE3", num_steps=3, eagle_topk=1, num_draft_tokens=4),
                *events)
    t = tier(st)
    assert (t.steps, t.draft_tokens, t.active, t.source) == (5, 6, True, "log")
    assert tier_text(st) == "tier steps 5 · 6 draft tok [log]"
    d = tier_dict(st)
    assert d is not None and d["source"] == "log" and d["max_accept_len"] == 6
    # the engine's gauges, where they come, are the newer word
    st = reduce(st, [_sample(f"sglang:spec_num_steps{LABELS} 7\n"
                             f"sglang:spec_num_draft_tokens{LABELS} 8\n")])
    assert (tier(st).steps, tier(st).source) == (7, "/metrics")


@pytest.mark.parametrize("text", [
    "Adaptive spec params updated: steps 3 -> ", "Adaptive spec params updated: steps x -> 5",
    "Adaptive spec params updated: steps 3 -> 99999999999"])
def test_a_broken_adaptive_line_is_no_tier(text: str) -> None:
    from eagle_tui.model.engines.sglang.tierlog import adaptive_tier

    assert adaptive_tier(text, 1, None) == []
