"""The fleet model on canned Prometheus vectors: maths, states, flags, sort/filter, staleness."""

from __future__ import annotations

import pytest

from eagle_tui.model.fleet.flags import FleetFilter, apply_flags, sort_rows
from eagle_tui.model.fleet.queries import fleet_groups, normalize_selector, series
from eagle_tui.model.fleet.snapshot import (
    DOWN_OR_STARTING,
    FleetRow,
    build_snapshot,
    instance_host,
    split_tagged,
)


def v(**per_instance: float) -> list[tuple[dict[str, str], float]]:
    return [({"instance": k.replace("_", ":")}, x) for k, x in per_instance.items()]


def eng(engine: str, model: str, *insts: str) -> list[tuple[dict[str, str], float]]:
    return [({"instance": i.replace("_", ":"), "engine": engine, "model_name": model}, 1.0)
            for i in insts]


def answers(**extra: list[tuple[dict[str, str], float]]) -> dict[str, list[
        tuple[dict[str, str], float]]]:
    base: dict[str, list[tuple[dict[str, str], float]]] = {
        "up": v(v1_8000=1, v2_8000=1, s1_30000=1),
        "engine_vllm": eng("vllm", "llama", "v1_8000", "v2_8000"),
        "engine_sglang": eng("sglang", "llama", "s1_30000"),
        "gen_total": v(v1_8000=1000, v2_8000=900, s1_30000=500),
        "tok_s": v(v1_8000=100.0, v2_8000=50.0, s1_30000=90.0),
        "drafts": v(v1_8000=40.0, v2_8000=49.0),
        "draft_tokens": v(v1_8000=120.0, v2_8000=147.0),
        "accepted": v(v1_8000=60.0, v2_8000=1.0),
        "per_pos": [({"instance": "v1:8000", "position": "0"}, 30.0),
                    ({"instance": "v1:8000", "position": "1"}, 20.0),
                    ({"instance": "v1:8000", "position": "2"}, 10.0)],
        "verify": v(s1_30000=30.0),
        "running": v(v1_8000=4, v2_8000=4, s1_30000=2),
        "queued": v(v1_8000=0, v2_8000=1, s1_30000=0),
        "kv": v(v1_8000=0.25),
        "accept_gauge": v(s1_30000=2.5),
        "rate_gauge": v(s1_30000=0.5),
        "ttft_p99": v(v1_8000=0.2),
    }
    base.update(extra)
    return base


def rows_by_instance(snap_rows: tuple[FleetRow, ...]) -> dict[str, FleetRow]:
    return {r.instance: r for r in snap_rows}


def test_vllm_and_sglang_maths() -> None:
    rows = rows_by_instance(build_snapshot(answers(), [], 100.0).rows)
    v1 = rows["v1:8000"]
    assert v1.accept_len == pytest.approx(1 + 60 / 40)
    assert v1.accept_rate == pytest.approx(60 / 120)
    assert v1.per_position == pytest.approx((0.75, 0.5, 0.25))
    assert (v1.state, v1.running, v1.kv_usage, v1.ttft_p99) == ("serving", 4, 0.25, 0.2)
    s1 = rows["s1:30000"]
    assert s1.accept_len == pytest.approx(90 / 30)  # generation tokens / verify calls
    assert s1.engine == "sglang" and s1.spec


def test_misconfigured_instance_flagged_and_sorted_first() -> None:
    snap = build_snapshot(answers(), [], 100.0)
    v2 = rows_by_instance(snap.rows)["v2:8000"]
    assert v2.accept_len == pytest.approx(1 + 1 / 49)
    assert "drafts_rejected" in v2.flags
    assert sort_rows(snap.rows)[0].instance == "v2:8000"
    assert not rows_by_instance(snap.rows)["v1:8000"].flags


def test_sglang_without_verify_counter_uses_gauge_only_when_busy() -> None:
    a = answers(verify=[])
    s1 = rows_by_instance(build_snapshot(a, [], 1.0).rows)["s1:30000"]
    assert s1.accept_len == 2.5 and s1.accept_rate == 0.5
    a = answers(verify=[], tok_s=v(v1_8000=100.0, v2_8000=50.0, s1_30000=0.0),
                running=v(v1_8000=4, v2_8000=4, s1_30000=0))
    s1 = rows_by_instance(build_snapshot(a, [], 1.0).rows)["s1:30000"]
    assert s1.accept_len is None  # the gauge holds the last busy interval: not a reading


def test_sglang_flat_counters_under_long_requests_read_the_gauge() -> None:
    """Both SGLang counters move when a request finishes: requests running and no verify call
    counted in the window is a busy server whose gauge is its figure (a collapsed one flags);
    a gauge under 1 (before the first decode interval, no speculation) is never a reading."""
    flat = v(v1_8000=100.0, v2_8000=50.0, s1_30000=0.0)
    a = answers(verify=v(s1_30000=0.0), tok_s=flat, accept_gauge=v(s1_30000=1.0))
    s1 = rows_by_instance(build_snapshot(a, [], 1.0).rows)["s1:30000"]
    assert s1.accept_len == 1.0 and s1.spec and "drafts_rejected" in s1.flags
    a = answers(verify=v(s1_30000=0.0), tok_s=flat, accept_gauge=v(s1_30000=0.0))
    s1 = rows_by_instance(build_snapshot(a, [], 1.0).rows)["s1:30000"]
    assert s1.accept_len is None and "drafts_rejected" not in s1.flags
    # flat counters under running requests are not a stall: the throughput gauge is the figure
    a = answers(verify=v(s1_30000=0.0), tok_s=flat, tps_gauge=v(s1_30000=55.0))
    s1 = rows_by_instance(build_snapshot(a, [], 1.0).rows)["s1:30000"]
    assert s1.tok_s == 55.0 and "stalled" not in s1.flags
    # the scheduler's per-step counter, where exported, is the figure: a stall shows there
    a = answers(verify=v(s1_30000=0.0), tok_s=flat, tps_gauge=v(s1_30000=55.0),
                live_tok_s=v(s1_30000=80.0))
    s1 = rows_by_instance(build_snapshot(a, [], 1.0).rows)["s1:30000"]
    assert s1.tok_s == 80.0 and "stalled" not in s1.flags
    a = answers(verify=v(s1_30000=0.0), tok_s=flat, tps_gauge=v(s1_30000=55.0),
                live_tok_s=v(s1_30000=0.0))
    s1 = rows_by_instance(build_snapshot(a, [], 1.0).rows)["s1:30000"]
    assert s1.tok_s == 0.0 and "stalled" in s1.flags
    a = answers(verify=[], accept_gauge=v(s1_30000=0.0))  # tokens flow, no speculation
    s1 = rows_by_instance(build_snapshot(a, [], 1.0).rows)["s1:30000"]
    assert s1.accept_len is None and not s1.spec


def test_states_down_starting_ready_idle() -> None:
    a = answers(up=v(v1_8000=1, v2_8000=0, s1_30000=1, new_9000=0, prom_9090=1),
                running=v(v1_8000=0, s1_30000=0), tok_s=v(v1_8000=0.0, s1_30000=0.0),
                gen_total=v(v1_8000=0.0, s1_30000=10.0), drafts=[], verify=[])
    rows = rows_by_instance(build_snapshot(a, [], 1.0).rows)
    assert rows["v1:8000"].state == "ready"
    assert rows["s1:30000"].state == "idle"
    assert rows["v2:8000"].state == DOWN_OR_STARTING and rows["v2:8000"].flags == ("down",)
    assert rows["new:9000"].engine == "unknown" and rows["new:9000"].up is False
    assert "prom:9090" not in rows  # up, but no engine series: not an engine
    hinted = build_snapshot(a, [], 1.0, hints={"v2:8000": "starting"})
    assert rows_by_instance(hinted.rows)["v2:8000"].state == "starting"


def test_stalled_and_restarted() -> None:
    a = answers(tok_s=v(v1_8000=0.0, v2_8000=50.0, s1_30000=90.0), resets=v(s1_30000=1))
    rows = rows_by_instance(build_snapshot(a, [], 1.0).rows)
    assert "stalled" in rows["v1:8000"].flags
    assert rows["s1:30000"].flags == ("restarted",) and rows["s1:30000"].restarts == 1


def test_below_median_needs_peers() -> None:
    def row(i: str, tps: float) -> FleetRow:
        return FleetRow(i, "vllm", "m", True, "serving", tok_s=tps, accept_len=3.0, spec=True)

    flagged = apply_flags([row("a", 100), row("b", 110), row("c", 30)])
    assert [r.flags for r in flagged] == [(), (), ("below_median",)]
    assert [r.flags for r in apply_flags([row("a", 100), row("c", 30)])] == [(), ()]


def test_failed_groups_keep_last_figures_marked_stale() -> None:
    first = build_snapshot(answers(), [], 1.0)
    partial = build_snapshot(answers(tok_s=[], drafts=[], accepted=[]), ["rates"], 2.0,
                             prev=first, errors=["rates: no answer within 5 s"])
    v1 = rows_by_instance(partial.rows)["v1:8000"]
    assert partial.status == "partial" and v1.stale and v1.tok_s == 100.0
    assert v1.accept_len == pytest.approx(2.5) and partial.last_ok_t == 1.0
    gone = build_snapshot({}, ["state", "rates", "gauges", "latency"], 3.0, prev=partial,
                          errors=["state: unreachable"])
    assert gone.status == "stale" and all(r.stale for r in gone.rows)
    assert len(gone.rows) == 3 and gone.last_ok_t == 1.0 and gone.errors == (
        "state: unreachable",)


def test_filter_and_sort() -> None:
    rows = build_snapshot(answers(), [], 1.0).rows
    assert [r.instance for r in FleetFilter(flag="any").apply(rows)] == ["v2:8000"]
    assert [r.instance for r in FleetFilter(host="s1").apply(rows)] == ["s1:30000"]
    assert FleetFilter(model="LLAMA").apply(rows) == list(rows)
    assert [r.instance for r in sort_rows(rows, "tok_s")] == ["v1:8000", "s1:30000", "v2:8000"]
    with pytest.raises(ValueError):
        sort_rows(rows, "nope")


def test_json_entry_has_the_required_keys() -> None:
    d = build_snapshot(answers(), [], 1.0).as_dict()
    entry = d["instances"][0]  # type: ignore[index]
    for key in ("instance", "engine", "up", "state", "tok_s", "accept_len", "flags"):
        assert key in entry


def test_hosts_and_selector() -> None:
    assert instance_host("10.0.0.5:8000") == "10.0.0.5"
    assert instance_host("[::1]:8000") == "::1"
    assert instance_host("gpu-node-3") == "gpu-node-3"
    assert normalize_selector('{job="llm"}') == 'job="llm"'
    assert series(("a", "b"), 'job="x"') == '{__name__=~"a|b", job="x"}'
    # the real SGLang's prometheus_client escapes ':' to '_' for Prometheus' OpenMetrics scrape
    assert series("sglang:num_running_reqs", "") == (
        '{__name__=~"sglang:num_running_reqs|sglang_num_running_reqs"}')


def test_queries_are_a_few_tagged_groups() -> None:
    groups = fleet_groups('job="llm"', "30s")
    assert len(groups) == 4
    for g in groups:
        assert 'job="llm"' in g.expr and "by (instance" in g.expr
        assert g.expr.count("fleet_q") == len(g.figures)
    tagged = [({"fleet_q": "up", "instance": "a"}, 1.0), ({"instance": "x"}, 2.0)]
    assert split_tagged(tagged) == {"up": [({"instance": "a"}, 1.0)]}


def test_instances_without_their_own_up_are_up_while_their_series_are_live() -> None:
    a = answers(up=v(exporter_9400=1))  # one exporter serving all three (honor_labels)
    rows = rows_by_instance(build_snapshot(a, [], 1.0).rows)
    assert set(rows) == {"v1:8000", "v2:8000", "s1:30000"}
    assert all(r.up and r.state == "serving" for r in rows.values())


def test_sglang_ratio_below_one_is_not_a_reading() -> None:
    a = answers(tok_s=v(v1_8000=100.0, v2_8000=50.0, s1_30000=10.0),  # 10 / 30 verify calls
                accept_gauge=[])
    s1 = rows_by_instance(build_snapshot(a, [], 1.0).rows)["s1:30000"]
    assert s1.accept_len is None and "drafts_rejected" not in s1.flags
    # with the scheduler's gauge there, the gauge is the figure (never the ratio)
    a = answers(tok_s=v(v1_8000=100.0, v2_8000=50.0, s1_30000=10.0))
    s1 = rows_by_instance(build_snapshot(a, [], 1.0).rows)["s1:30000"]
    assert s1.accept_len == 2.5 and "drafts_rejected" not in s1.flags
