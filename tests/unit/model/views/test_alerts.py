"""Alert rules: pure functions of the state, one scenario each."""

from __future__ import annotations

from dataclasses import replace

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
from eagle_tui.model.series import Series
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.alerts import (
    RECOVERED_SHOWN,
    evaluate_alerts,
    is_eagle3_architecture,
    rule_below_baseline,
    rule_drafts_rejected,
    rule_eagle3_draft_with_eagle,
    rule_hidden_dims,
    rule_no_drafts_verified,
)


def st(*events: Event) -> DashboardState:
    return reduce(DashboardState(), events)


def decodes(*accepts: float, gen: float = 100.0) -> list[Event]:
    return [DecodeStats(i + 1, accept_len=a, gen_tps=gen) for i, a in enumerate(accepts)]


def kinds(state: DashboardState) -> list[str]:
    return [a.kind for a in state.alerts]


def test_drafts_rejected_needs_two_consecutive_low_values() -> None:
    assert rule_drafts_rejected(st(*decodes(1.05, 1.15))) is None
    assert rule_drafts_rejected(st(*decodes(1.05, 1.15, 1.02))) is None  # not consecutive
    assert rule_drafts_rejected(st(*decodes(1.05, 1.2, 1.02, 1.2))) is None  # not consecutive
    assert rule_drafts_rejected(st(*decodes(1.05, 1.15, 1.02, 1.03))) is not None
    # the simulator's and the seed's misconfiguration reads ~1.05: at the threshold's edge
    assert rule_drafts_rejected(st(*decodes(3.0, 1.08, 1.06))) is not None
    a = rule_drafts_rejected(st(*decodes(3.0, 1.03, 1.03)))  # two at 1.03 are enough
    assert a is not None and a.kind == "drafts_rejected" and a.severity == "critical"
    assert "1.03" in a.message and "2+ consecutive" in a.message
    a = rule_drafts_rejected(st(*decodes(3.0, 1.0, 1.0, 1.0)))
    assert a is not None and a.severity == "critical" and "1.00" in a.message
    assert rule_drafts_rejected(st(*decodes(3.0, 1.12, 1.12, 1.12))) is None  # above 1.10


def test_drafts_rejected_clears_only_after_a_sustained_recovery_and_says_so() -> None:
    # one or two lines above the recovery threshold, or lines between the thresholds: still on
    for tail in ((2.5,), (2.5, 2.5), (1.15, 1.15, 1.15, 1.15), (2.5, 1.1, 2.5, 2.5)):
        a = rule_drafts_rejected(st(*decodes(3.0, 1.02, 1.01, *tail)))
        assert a is not None and a.kind == "drafts_rejected", tail
        assert "1.01" in a.message and f"Now {tail[-1]:.2f}" in a.message
    # three consecutive lines above 1.20: recovered, and the alert says that it did
    a = rule_drafts_rejected(st(*decodes(3.0, 1.02, 1.01, 2.5, 2.6, 2.7, 2.8)))
    assert a is not None and (a.kind, a.severity) == ("drafts_recovered", "info")
    assert "recovered to 2.70" in a.message  # the line that completed the recovery
    # a new episode after the recovery fires again
    a = rule_drafts_rejected(st(*decodes(1.02, 1.01, 2.5, 2.6, 2.7, 1.0, 1.0)))
    assert a is not None and a.kind == "drafts_rejected"
    # a healthy run never had an episode: nothing to recover from
    assert rule_drafts_rejected(st(*decodes(2.5, 2.6, 2.7, 2.8))) is None
    # the recovery is announced for RECOVERED_SHOWN lines after it, then healthy is just healthy
    episode = (1.02, 1.01, 2.5, 2.6, 2.7)
    shown = rule_drafts_rejected(st(*decodes(*episode, *[2.5] * (RECOVERED_SHOWN - 3))))
    assert shown is not None and shown.kind == "drafts_recovered"
    assert rule_drafts_rejected(st(*decodes(*episode, *[2.5] * (RECOVERED_SHOWN + 1)))) is None


def test_recovery_is_dated_by_the_runs_clock() -> None:
    state = DashboardState()
    pts = ((100.0, 1.0), (110.0, 1.0), (120.0, 2.0), (130.0, 2.0), (190.0, 2.5))
    state = replace(state, clock=replace(state.clock, t_start=70.0, now=190.0),
                    stats=replace(state.stats, accept_len=Series(pts)))
    a = rule_drafts_rejected(state)
    assert a is not None and a.message.startswith("Acceptance recovered to 2.50 at 2:00 into")


def test_speculation_configured_but_no_draft_ever_verified() -> None:
    spec = SpecConfig("EAGLE3", "/drafts/eagle3", source="server_info")
    serving = [DecodeStats(i + 1, gen_tps=50.0) for i in range(5)]
    a = rule_no_drafts_verified(st(spec, *serving))
    assert a is not None and a.kind == "no_drafts_verified" and "EAGLE3" in a.message
    assert "5 stats intervals" in a.message
    assert rule_no_drafts_verified(st(spec, *serving[:4])) is None  # not for a while yet
    assert rule_no_drafts_verified(st(*serving)) is None  # speculation not configured
    idle = [DecodeStats(i + 1, gen_tps=0.0, running=0) for i in range(9)]
    assert rule_no_drafts_verified(st(spec, *idle)) is None  # not serving
    assert rule_no_drafts_verified(st(spec, *serving, *decodes(2.5))) is None  # one verified
    assert "no_drafts_verified" in kinds(st(spec, *serving))


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
