"""The fleet's adaptive rate windows: the choice per scrape interval and serving age
(generated), the tiers one refresh asks, and a row reading the tier its age allows."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eagle_tui.model.fleet.queries import fleet_groups, tiered
from eagle_tui.model.fleet.snapshot import RatePlan, any_young, build_snapshot
from eagle_tui.model.fleet.windows import (
    FLOOR_S,
    MAX_TIERS,
    SAMPLES,
    format_duration,
    parse_duration,
    parse_targets,
    pick,
    rate_window,
    serving_age,
    shortest,
    tiers,
)

intervals = st.one_of(st.none(), st.floats(min_value=0.1, max_value=120.0))
ages = st.one_of(st.none(), st.floats(min_value=0.0, max_value=86400.0))
defaults = st.floats(min_value=1.0, max_value=3600.0)


@given(intervals, ages, defaults)
def test_window_bounds(scrape: float | None, age: float | None, default: float) -> None:
    w = rate_window(scrape, age, default)
    assert w >= FLOOR_S or w == default  # never under the floor unless the user's is
    if scrape:
        assert w >= SAMPLES * scrape  # enough samples for a steady rate
        assert w <= max(default, shortest(scrape))
    else:
        assert w <= max(default, FLOOR_S)
    if age is None:
        assert w == (max(default, shortest(scrape)) if scrape else default)


@given(intervals, st.floats(min_value=0.0, max_value=86400.0),
       st.floats(min_value=0.0, max_value=86400.0), defaults)
def test_window_grows_with_age_up_to_the_default(scrape: float | None, a: float, b: float,
                                                 default: float) -> None:
    young, old = sorted((a, b))
    assert rate_window(scrape, young, default) <= rate_window(scrape, old, default)
    if old >= default:
        assert rate_window(scrape, old, default) == max(default, shortest(scrape)) \
            if scrape else default


@given(st.lists(st.floats(min_value=0.1, max_value=120.0), max_size=6), defaults)
def test_tiers_ascend_to_the_default(scrapes: list[float], default: float) -> None:
    found = tiers(scrapes, default)
    assert found[-1] == default and len(found) <= MAX_TIERS
    assert list(found) == sorted(set(found))
    low = shortest(min(scrapes)) if scrapes else FLOOR_S
    assert all(w >= low for w in found[:-1])


def test_tiers_examples() -> None:
    assert tiers([1.0], 60.0) == (10.0, 30.0, 60.0)
    assert tiers([5.0], 60.0) == (20.0, 60.0)
    assert tiers([15.0], 60.0) == (60.0,)  # four scrapes already fill the minute
    assert tiers([], 60.0) == (10.0, 30.0, 60.0)


@given(st.lists(st.booleans(), min_size=1, max_size=4), st.floats(min_value=0.0, max_value=100.0),
       intervals)
def test_pick_longest_fitting_with_data(data: list[bool], want: float,
                                        scrape: float | None) -> None:
    windows = tuple(10.0 * 3 ** i for i in range(len(data)))
    chosen = pick(windows, want, lambda i: data[i], scrape)
    if not any(data):
        assert chosen is None
        return
    assert chosen is not None and data[chosen]
    fits = [i for i, w in enumerate(windows) if w <= want and data[i]
            and (not scrape or w >= 2 * scrape)]
    assert chosen == (max(fits) if fits else max(i for i, d in enumerate(data) if d))


def test_serving_age_and_durations() -> None:
    assert serving_age(12, 5.0, None) == 60.0
    assert serving_age(12, 5.0, 20.0) == 20.0  # restarted: the process is younger
    assert serving_age(None, None, None) is None
    assert serving_age(12, None, None) is None
    assert [parse_duration(t) for t in ("1m", "15s", "1m30s", "500ms", "2h", "x", "", "5")] \
        == [60.0, 15.0, 90.0, 0.5, 7200.0, None, None, None]
    assert [format_duration(s) for s in (10.0, 30.0, 0.25, 90.0)] == ["10s", "30s", "250ms",
                                                                        "90s"]


def test_parse_targets() -> None:
    body = json.dumps({"status": "success", "data": {"activeTargets": [
        {"labels": {"instance": "a:8000"}, "scrapeInterval": "15s"},
        {"labels": {"instance": "b:8000"}, "scrapeInterval": "1m"},
        {"labels": {"instance": "c:8000"}},
        "junk"]}}).encode()
    assert parse_targets(body) == {"a:8000": 15.0, "b:8000": 60.0}
    assert parse_targets(b"not json") == {} and parse_targets(b"[1]") == {}


def test_groups_ask_each_tier_in_the_same_request() -> None:
    groups = {g.name: dict(g.figures) for g in fleet_groups('job="x"', "1m", "15m",
                                                            ("10s", "30s"))}
    rates = groups["rates"]
    assert "[1m]" in rates["tok_s"] and "[10s]" in rates[tiered("tok_s", "10s")]
    assert "[30s]" in rates[tiered("verify", "30s")]
    assert {"samples", "process_age"} <= set(groups["state"])
    assert len(groups) == 4
    assert " and on (instance) " not in rates[tiered("tok_s", "10s")]
    # with the scrape interval known, the shorter tiers are asked for young instances only
    rates = {g.name: dict(g.figures) for g in fleet_groups(
        'job="x"', "1m", "15m", ("10s",), young_samples=60, window_s=60.0)}["rates"]
    short = rates[tiered("per_pos", "10s")]
    assert short.endswith(') and on (instance) ((count_over_time(up{job="x"}[1m]) < 60) or on '
                          '(instance) ((time() - {__name__="process_start_time_seconds", '
                          'job="x"}) < 60))'), short
    assert " and on (instance) " not in rates["tok_s"]  # the user's window: every instance


def _answers(age_samples: float, short_accept: bool) -> dict[str, list[tuple[dict[str, str],
                                                                             float]]]:
    inst = {"instance": "v:8000"}

    def one(x: float) -> list[tuple[dict[str, str], float]]:
        return [(inst, x)]

    out = {"up": one(1.0), "engine_vllm": [({**inst, "engine": "vllm", "model_name": "m"}, 1.0)],
           "samples": one(age_samples), "running": one(4.0),
           # the minute mixes an earlier healthy run (accept 3) with the last seconds' 1.0
           "tok_s": one(100.0), "drafts": one(40.0), "accepted": one(80.0)}
    if short_accept:
        out |= {tiered("tok_s", "10s"): one(40.0), tiered("drafts", "10s"): one(40.0),
                tiered("accepted", "10s"): one(0.4)}
    return out


@pytest.mark.parametrize(("samples", "window", "flagged"), [(3, 10.0, True), (60, 60.0, False)])
def test_a_young_instance_reads_its_short_window(samples: int, window: float,
                                                 flagged: bool) -> None:
    plan = RatePlan(60.0, (("10s", 10.0), ("30s", 30.0)), {"v:8000": 1.0})
    row = build_snapshot(_answers(samples, True), [], 1.0, plan=plan).rows[0]
    assert row.window_s == window
    assert ("drafts_rejected" in row.flags) is flagged


def test_a_short_tier_without_data_falls_back_to_a_longer_one() -> None:
    plan = RatePlan(60.0, (("10s", 10.0), ("30s", 30.0)), {"v:8000": 1.0})
    row = build_snapshot(_answers(3, False), [], 1.0, plan=plan).rows[0]
    assert row.window_s == 60.0 and row.accept_len == pytest.approx(3.0)


def test_any_young() -> None:
    plan = RatePlan(60.0, (("10s", 10.0),), {"v:8000": 1.0})
    inst = {"instance": "v:8000"}
    assert any_young({"samples": [(inst, 20.0)]}, plan)  # 20 scrapes of 1 s
    assert not any_young({"samples": [(inst, 61.0)]}, plan)
    assert any_young({"samples": [(inst, 61.0)], "process_age": [(inst, 5.0)]}, plan)
    # an instance whose scrape interval is not known: its age cannot be told from samples
    assert not any_young({"samples": [({"instance": "other:1"}, 3.0)]}, plan)
    assert not any_young({"samples": [(inst, 3.0)]}, RatePlan())
