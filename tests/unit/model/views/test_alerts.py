"""Alert rules: pure functions of the state, one scenario each."""

from __future__ import annotations

from eagle_tui.model.events import (
    Baseline,
    CrashEvent,
    DecodeStats,
    DraftConfig,
    EngineDetected,
    Event,
    HealthSample,
    HiddenStateDims,
    MetricsSample,
    ModelInfo,
    ProcessExited,
    SourceFailed,
    SourceRecovered,
    SpecConfig,
)
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.alerts import (
    evaluate_alerts,
    is_eagle3_architecture,
    rule_below_baseline,
    rule_drafts_rejected,
    rule_eagle3_draft_with_eagle,
    rule_hidden_dims,
)


def st(*events: Event) -> DashboardState:
    return reduce(DashboardState(), events)


def decodes(*accepts: float, gen: float = 100.0) -> list[Event]:
    return [DecodeStats(i + 1, accept_len=a, gen_tps=gen) for i, a in enumerate(accepts)]


def kinds(state: DashboardState) -> list[str]:
    return [a.kind for a in state.alerts]


def test_drafts_rejected_needs_three_consecutive_low_values() -> None:
    assert rule_drafts_rejected(st(*decodes(1.05, 1.10))) is None
    assert rule_drafts_rejected(st(*decodes(1.05, 1.10, 1.02))) is not None
    assert rule_drafts_rejected(st(*decodes(1.05, 1.2, 1.02, 1.01))) is None  # not consecutive
    a = rule_drafts_rejected(st(*decodes(3.0, 1.0, 1.0, 1.0)))
    assert a is not None and a.severity == "critical" and "1.00" in a.message


def test_hidden_dims_against_the_draft_config() -> None:
    cfg = DraftConfig("/d", ("LlamaForCausalLMEagle3",), True, 7168)
    bad = rule_hidden_dims(st(cfg, HiddenStateDims(7168, 1)))
    assert bad is not None and "--speculative-algorithm EAGLE instead of EAGLE3" in bad.message
    assert rule_hidden_dims(st(cfg, HiddenStateDims(21504, 1))) is None


def test_hidden_dims_without_a_config_use_plausible_widths() -> None:
    assert rule_hidden_dims(st(HiddenStateDims(21504, 1))) is None  # 3 x 7168
    assert rule_hidden_dims(st(HiddenStateDims(12288, 1))) is None  # 3 x 4096
    assert rule_hidden_dims(st(HiddenStateDims(7168, 1))) is not None
    assert rule_hidden_dims(st(HiddenStateDims(4096 * 2, 1))) is not None


def test_eagle3_draft_launched_as_eagle_from_config_or_log() -> None:
    spec = SpecConfig("EAGLE", "/models/eagle3-draft")
    by_cfg = st(spec, DraftConfig("/models/eagle3-draft", ("LlamaForCausalLMEagle3",), True))
    a = rule_eagle3_draft_with_eagle(by_cfg)
    assert a is not None and "--speculative-algorithm EAGLE3" in a.message
    by_log = st(SpecConfig("NEXTN", "/d"), ModelInfo("draft", "LlamaForCausalLMEagle3", 9))
    assert rule_eagle3_draft_with_eagle(by_log) is not None
    assert rule_eagle3_draft_with_eagle(st(SpecConfig("EAGLE3", "/d"),
                                           ModelInfo("draft", "LlamaForCausalLMEagle3"))) is None
    assert rule_eagle3_draft_with_eagle(st(spec, ModelInfo("draft", "LlamaForCausalLM"))) is None
    assert rule_eagle3_draft_with_eagle(st(spec)) is None  # draft unknown: no guess
    assert is_eagle3_architecture("Eagle3LlamaForCausalLM")
    assert not is_eagle3_architecture(None) and not is_eagle3_architecture("")


def test_the_algorithm_alerts_carry_their_engines_fix() -> None:
    from eagle_tui.model.engines import profile_of

    cfg = DraftConfig("/d", ("LlamaForCausalLMEagle3",), True, 7168)
    for engine in ("sglang", "vllm"):
        profile = profile_of(engine)
        assert profile is not None and profile.launch.eagle3_remedy is not None
        s = st(EngineDetected(engine), SpecConfig("EAGLE", "/d"), cfg, HiddenStateDims(7168, 1))
        fired = {a.kind: a for a in s.alerts}
        for kind in ("eagle3_draft_with_eagle", "hidden_dims"):
            assert fired[kind].remedy == profile.launch.eagle3_remedy, (engine, kind)
        assert all(a.remedy is None for a in s.alerts if a.kind not in
                   ("eagle3_draft_with_eagle", "hidden_dims"))
    unknown = st(SpecConfig("EAGLE", "/d"), cfg, HiddenStateDims(7168, 1))
    assert all(a.remedy is None for a in unknown.alerts)  # no engine: no edit to offer


def test_below_baseline_uses_the_log_then_metrics_and_ignores_idle_zeros() -> None:
    slow = [Baseline(90.0), *decodes(2.0, 2.0, 2.0, gen=50.0)]
    a = rule_below_baseline(st(*slow))
    assert a is not None and a.severity == "warning" and "0.56×" in a.message
    assert rule_below_baseline(st(Baseline(90.0), *decodes(2.0, 2.0, 2.0, gen=150.0))) is None
    idle: list[Event] = [Baseline(90.0), *[DecodeStats(i, gen_tps=0.0) for i in range(5)]]
    assert rule_below_baseline(st(*idle)) is None
    metrics: list[Event] = [Baseline(90.0),
                            *[MetricsSample(float(i + 1), gen_tps=40.0) for i in range(3)]]
    assert rule_below_baseline(st(*metrics)) is not None
    assert rule_below_baseline(st(*decodes(1.0, 1.0, 1.0, gen=1.0))) is None  # no baseline


def test_crash_process_health_and_source_alerts_sorted_by_severity() -> None:
    s = st(SourceFailed("gpu", "no driver", 1.0),
           CrashEvent("cuda_oom", 12, "CUDA out of memory", "lower it"),
           ProcessExited(2.0, 42, 137))
    assert kinds(s) == ["crash", "source_failed"]  # the exit is explained by the crash
    assert "line 12" in s.alerts[0].message
    assert kinds(st(ProcessExited(2.0, 42, 1))) == ["process_exited"]
    assert kinds(st(HealthSample("ready", 1.0), HealthSample("error", 2.0, error="503"))) == [
        "health_lost"]
    assert kinds(st(HealthSample("starting", 1.0))) == []
    assert kinds(st(SourceFailed("gpu", "x", 1.0), SourceRecovered("gpu", 2.0))) == []


def test_evaluate_alerts_is_stable_within_a_severity() -> None:
    s = st(SpecConfig("EAGLE", "/d"), ModelInfo("draft", "LlamaForCausalLMEagle3"),
           HiddenStateDims(7168, 1), *decodes(1.0, 1.0, 1.0))
    assert [a.kind for a in evaluate_alerts(s)] == [
        "eagle3_draft_with_eagle", "hidden_dims", "drafts_rejected"]
