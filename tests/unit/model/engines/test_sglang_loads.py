"""SGLang's ``/v1/loads`` (its JSON as SGLang 0.5.23's ``v1_loads.py`` and
``LoadSnapshot.to_dict`` build it), the per-rank acceptance and the collapsed-rank alert."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.engines.sglang.loads import MAX_RANKS, parse_loads
from eagle_tui.model.events import EngineDetected, RankLoads, SpecConfig
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.alerts import evaluate_alerts
from eagle_tui.model.views.ranks import collapsed_ranks, rule_rank_collapsed
from eagle_tui.model.views.tiertext import ranks_dict, tier_text

# the core keys of LoadSnapshot (0.5.23), in its field order
CORE = ("timestamp", "dp_rank", "num_running_reqs", "num_waiting_reqs",
        "num_waiting_uncached_tokens", "num_used_tokens", "num_total_tokens",
        "num_active_tokens", "num_prealloc_ready_tokens", "max_total_num_tokens",
        "max_running_requests", "token_usage", "gen_throughput", "cache_hit_rate",
        "utilization", "total_prefill_uncached_tokens", "total_prefill_busy_us",
        "decode_moments")


def load(rank: int, accept: float | None, running: int = 2) -> dict[str, Any]:
    d: dict[str, Any] = dict.fromkeys(CORE, 0)
    d.update(dp_rank=rank, num_running_reqs=running, decode_moments=None)
    if accept is not None:  # the section exists once the rank verified a draft
        d["speculative"] = {"accept_length": accept, "accept_rate": (accept - 1) / 3}
    return d


def answer(*loads: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-12-02T08:00:00+00:00", "version": "0.5.23",
            "accelerator": "NVIDIA H200", "num_accelerators": 2, "loads": list(loads)}


def test_reads_each_ranks_accept_length_and_running_requests() -> None:
    got = parse_loads(answer(load(0, 3.2), load(1, 3.1, 5), load(2, None, 0)), 5.0)
    assert got == RankLoads(t=5.0, accept=((0, 3.2), (1, 3.1)),
                            running=((0, 2), (1, 5), (2, 0)))


@pytest.mark.parametrize("bad", [[], "x", {"loads": "x"}, {"loads": None}, None, 3])
def test_an_answer_without_a_load_list_is_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_loads(bad, 0.0)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -2.0, 0.5, 10**400, True, "3"])
def test_an_accept_length_no_server_can_give_is_not_read(value: object) -> None:
    got = parse_loads({"loads": [{"dp_rank": 0, "speculative": {"accept_length": value}}]}, 0)
    assert got.accept == ()


def test_repeated_negative_and_huge_ranks_are_ignored_and_the_list_is_bounded() -> None:
    loads = [load(0, 3.0), load(0, 1.0), {"dp_rank": -1, "speculative": {"accept_length": 2}},
             {"dp_rank": 10**30}, {"dp_rank": True}, "junk",
             *(load(i, 2.0) for i in range(1, MAX_RANKS + 50))]
    got = parse_loads({"loads": loads}, 0)
    assert got.accept[0] == (0, 3.0)  # the first answer of a rank counts
    assert len(got.accept) < MAX_RANKS


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["loads", "dp_rank", "speculative", "accept_length",
                         "num_running_reqs", "x"]), inner, max_size=4),
    max_leaves=40)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(JSONISH)
def test_any_json_reads_or_is_refused_with_a_value_error(doc: object) -> None:
    try:
        got = parse_loads(doc, 0.0)
    except ValueError:
        return
    assert all(isinstance(r, int) and r >= 0 and math.isfinite(v) and v >= 1.0
               for r, v in got.accept)


def test_deep_or_large_answers_stop_at_the_bounded_loader() -> None:
    deep = '{"loads": ' + "[" * 10_000 + "]" * 10_000 + "}"
    with pytest.raises(LoadError):
        load_json(deep, "the /v1/loads answer")
    with pytest.raises(LoadError):
        load_json(json.dumps(answer(*(load(i, 3.0) for i in range(4)))), "x", max_bytes=100)


def _state(*answers: RankLoads) -> DashboardState:
    return reduce(DashboardState(), [EngineDetected("sglang", 0),
                                     SpecConfig(algorithm="EAGLE3", num_steps=3,
                                                num_draft_tokens=4), *answers])


def _loads(t: float, *values: float) -> RankLoads:
    return RankLoads(t, tuple(enumerate(values)))


def test_one_collapsed_rank_is_named_once_two_answers_show_it() -> None:
    one = _state(_loads(1, 3.2, 3.1, 1.05, 3.3))
    assert rule_rank_collapsed(one) is None  # one answer may be a rank just started
    two = _state(_loads(1, 3.2, 3.1, 1.1, 3.3), _loads(2, 3.2, 3.1, 1.05, 3.3))
    assert collapsed_ranks(two) == ((2, 1.05, 3.2),)
    alert = rule_rank_collapsed(two)
    assert alert is not None and alert.kind == "rank_collapsed"
    assert "DP rank 2: accept length 1.05 against 3.20" in alert.message
    assert "/v1/loads" in alert.message
    assert "rank_collapsed" in [a.kind for a in evaluate_alerts(two)]
    assert [r["collapsed"] for r in ranks_dict(two)] == [False, False, True, False]
    assert tier_text(two) == "DP ranks 0:3.20 1:3.10 2:1.05✗ 3:3.30"


def test_no_collapse_when_every_rank_is_low_or_the_rank_only_lags() -> None:
    all_low = _state(_loads(1, 1.05, 1.02, 1.04), _loads(2, 1.05, 1.02, 1.04))
    assert rule_rank_collapsed(all_low) is None  # the drafts-rejected alert's case
    lagging = _state(_loads(1, 3.2, 2.6, 3.3), _loads(2, 3.2, 2.6, 3.3))
    assert rule_rank_collapsed(lagging) is None
    single = _state(_loads(1, 1.0), _loads(2, 1.0))
    assert rule_rank_collapsed(single) is None and tier_text(single) is None
