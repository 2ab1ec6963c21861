"""A run's acceptance is its counters' ratio over the whole run, restarts included, never the
last interval's value; the log's intervals over the run weighted by their work when the server
has no counters."""

from __future__ import annotations

import random

import pytest

from eagle_tui.model.events import DecodeStats, MetricsSample, Phase, PhaseEvent, SpecStats, Tick
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.runtotals import CounterRun, add_counters, restarted, totals_of
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.runsummary import (
    COUNTERS,
    counter_accept,
    figures_summary,
    run_accept,
    with_counters,
    with_final,
)

V_DRAFTS, V_ACC, V_GEN = ("vllm:spec_decode_num_drafts", "vllm:spec_decode_num_accepted_tokens",
                          "vllm:generation_tokens")
S_VERIFY, S_GEN = "sglang:spec_verify_calls", "sglang:generation_tokens"
K3 = (0.9, 0.8, 0.7)  # three per-position rates: k = 3 drafted tokens per draft


def lives(seed: int, n_lives: int) -> tuple[list[dict[str, float]], dict[str, float]]:
    """Scrapes of a vLLM server that restarts ``n_lives - 1`` times (its counters start at zero
    in each life), and the true totals of the run (what each life counted)."""
    rng = random.Random(seed)
    scrapes: list[dict[str, float]] = []
    truth = {V_DRAFTS: 0.0, V_ACC: 0.0, V_GEN: 0.0}
    for _ in range(n_lives):
        life = {V_DRAFTS: 0.0, V_ACC: 0.0, V_GEN: 0.0}
        # a server answers /metrics before its first request (a restart takes far longer
        # than the 2 s between scrapes), so each life's first scrape is its zero
        scrapes.append(dict(life))
        for _ in range(rng.randint(1, 30)):
            drafts = rng.choice([0, 0, rng.randint(1, 500)])  # idle scrapes too
            accepted = rng.randint(0, 3 * drafts)
            life[V_DRAFTS] += drafts
            life[V_ACC] += accepted
            life[V_GEN] += drafts + accepted
            scrapes.append(dict(life))
        for k in truth:
            truth[k] += life[k]
    return scrapes, truth


@pytest.mark.parametrize("seed", range(40))
def test_generated_counters_with_restarts_add_up_to_each_lifes_own(seed: int) -> None:
    n_lives = 1 + seed % 4
    scrapes, truth = lives(seed, n_lives)
    run = totals_of(scrapes)
    for name, value in truth.items():
        assert run.total(name) == pytest.approx(value)
    # a life that counted nothing restarts unseen (and loses nothing); the others are seen
    assert run.restarts <= n_lives - 1
    found = counter_accept("vllm", run)
    if truth[V_DRAFTS]:
        assert found is not None and found.source == COUNTERS
        assert found.value == pytest.approx(1 + truth[V_ACC] / truth[V_DRAFTS])
        assert found.weight == pytest.approx(truth[V_DRAFTS])


def test_a_restart_counts_the_new_lifes_value_from_zero() -> None:
    run = totals_of([{S_GEN: 100.0, S_VERIFY: 40.0}, {S_GEN: 300.0, S_VERIFY: 100.0},
                     {S_GEN: 30.0, S_VERIFY: 10.0}, {S_GEN: 90.0, S_VERIFY: 30.0}])
    assert run.restarts == 1
    assert run.total(S_GEN) == 390.0 and run.total(S_VERIFY) == 130.0
    found = counter_accept("sglang", run)
    assert found is not None and found.value == pytest.approx(3.0)
    assert "1 restart(s)" in found.note


def test_a_counter_that_vanished_is_a_restart_and_garbage_is_not_a_reading() -> None:
    assert restarted({S_GEN: 5.0}, {S_VERIFY: 1.0})
    assert not restarted({S_GEN: 5.0}, {S_GEN: 5.0, S_VERIFY: 1.0})
    run = add_counters(CounterRun(), {S_GEN: float("nan"), S_VERIFY: -3.0})
    assert run.totals == ()
    assert add_counters(run, {}) is run


def test_a_final_scrape_never_replaces_a_watchers_totals_over_more_lives() -> None:
    two_lives = {"accept_len": 3.0, "accept_source": COUNTERS, "accept_weight": 500.0}
    assert with_counters(two_lives, "vllm", {V_DRAFTS: 100.0, V_ACC: 100.0}) == two_lives
    got = with_counters(two_lives, "vllm", {V_DRAFTS: 600.0, V_ACC: 600.0})
    assert got["accept_len"] == 2.0 and got["accept_weight"] == 600.0


def test_no_profile_or_no_work_has_no_counter_figure() -> None:
    assert counter_accept("unknown", totals_of([{S_GEN: 5.0}])) is None
    assert counter_accept("vllm", totals_of([{V_DRAFTS: 0.0, V_ACC: 0.0}])) is None
    assert with_counters({"tok_s_median": 5.0}, "vllm", {V_DRAFTS: 0.0}) == {"tok_s_median": 5.0}


def _metrics(t: float, counters: dict[str, float], engine: str = "vllm") -> MetricsSample:
    return MetricsSample(t=t, engine=engine, gen_tps=10.0, accept_len=9.9,
                         counters=tuple(sorted(counters.items())))


def test_the_record_has_the_runs_counter_ratio_not_the_last_intervals() -> None:
    evs: list[object] = [Tick(1.0)]
    life = {V_DRAFTS: 0.0, V_ACC: 0.0, V_GEN: 0.0}
    for i, (drafts, accepted) in enumerate([(100, 300), (100, 300), (25, 13)]):
        life[V_DRAFTS] += drafts
        life[V_ACC] += accepted
        evs += [Tick(2.0 + i), _metrics(2.0 + i, life)]
    state = reduce(DashboardState(), evs)  # type: ignore[arg-type]
    summary = figures_summary(state)
    assert summary["accept_len"] == pytest.approx(1 + 613 / 225, abs=1e-3)
    assert summary["accept_source"] == COUNTERS
    assert state.metrics.accept_len.last == 9.9  # the interval's figure is another thing
    # a final scrape before a stop adds what came after the last one
    final = with_final(state, {V_DRAFTS: 325.0, V_ACC: 913.0, V_GEN: 1.0})
    assert figures_summary(final)["accept_len"] == pytest.approx(1 + 913 / 325, abs=1e-3)


def test_without_counters_the_logs_intervals_over_the_run_weighted_by_drafts() -> None:
    evs: list[object] = [Tick(1.0)]
    # 600+ intervals: more than a series keeps; the totals still hold the whole run
    for i in range(700):
        evs += [Tick(2.0 + i), SpecStats(i + 1, None, 1 + 400 / 100, 400, 300, K3)]
    evs += [Tick(800.0), SpecStats(800, None, 1 + 13 / 25, 13, 75, K3)]  # a small last interval
    state = reduce(DashboardState(), evs)  # type: ignore[arg-type]
    acc = run_accept(state)
    assert acc is not None and acc.source == "log"
    assert acc.value == pytest.approx(1 + (700 * 400 + 13) / (700 * 100 + 25))
    assert "701 intervals" in acc.note and "drafts" in acc.note


def test_sglang_decode_lines_weighted_by_running_requests_over_the_run() -> None:
    evs: list[object] = [Tick(1.0), PhaseEvent(Phase.INIT, 1, None)]
    evs += [Tick(2.0), DecodeStats(2, None, 100.0, 3.6, running=8)]
    evs += [Tick(3.0), DecodeStats(3, None, 100.0, 3.6, running=8)]
    evs += [Tick(4.0), DecodeStats(4, None, 20.0, 2.0, running=2)]
    state = reduce(DashboardState(), evs)  # type: ignore[arg-type]
    summary = figures_summary(state)
    assert summary["accept_len"] == pytest.approx((3.6 * 16 + 2.0 * 2) / 18, abs=1e-3)
    assert summary["accept_source"] == "log"
    assert "running requests" in summary["accept_note"]
    assert summary["tok_s_mean"] == pytest.approx(220 / 3, abs=0.01)


def test_tok_s_over_the_run_counts_every_interval_not_the_series_last() -> None:
    evs: list[object] = [Tick(1.0)]
    for i in range(900):  # more intervals than a series keeps
        evs += [Tick(2.0 + i), DecodeStats(i + 2, None, 100.0 if i < 450 else 200.0, 3.0,
                                           running=1)]
    evs += [Tick(1000.0), DecodeStats(1000, None, 0.0, None, running=0)]  # idle: not counted
    summary = figures_summary(reduce(DashboardState(), evs))  # type: ignore[arg-type]
    assert summary["tok_s_mean"] == 150.0 and summary["intervals"] == 900
    assert summary["tok_s_median"] == 200.0  # the series' last 600 points only
