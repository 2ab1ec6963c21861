"""A third engine registered from one place is scraped, queried by the fleet, and read.

The toy engine below is one profile: a metrics prefix, its own sample reader, fleet markers
and series. Nothing else changes, and every metrics consumer (the ``/metrics`` scrape, the
Prometheus drill-down, the fleet's PromQL and rows, a benchmark window) uses it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eagle_tui.model.bench.benchfiles import counter_totals, metrics_figures
from eagle_tui.model.engines import EngineProfile, register, unregister
from eagle_tui.model.engines.facets import FleetFacet, MetricsFacet
from eagle_tui.model.engines.facets.metrics import Delta
from eagle_tui.model.fleet.queries import fleet_groups, sparkline_queries
from eagle_tui.model.fleet.snapshot import build_snapshot, group_figures
from eagle_tui.sources.metrics import RateWindow, parse_metrics, wanted_names
from eagle_tui.sources.prom_metrics import exposed_names, reading_of
from tests.support.toy_engine import read_fleet, read_scrape

TEXT = """# TYPE toy:running gauge
toy:running{{tp_rank="0"}} {r}
toy:running{{tp_rank="1"}} {r}
# TYPE toy:tokens counter
toy:tokens_total {g}
toy:tokens_created 1.7e9
# TYPE toy:steps counter
toy:steps_total {s}
"""


def _window(delta: Delta, gen: float | None) -> tuple[float, float, str] | None:
    steps = delta("toy:steps")
    return (gen / steps, steps, "toy steps") if steps and gen is not None else None


TOY = EngineProfile(
    name="toy", label="Toy", default_port=9999,
    metrics=MetricsFacet(prefix="toy:", gauges=("toy:running",),
                         counters=("toy:tokens", "toy:steps"), read=read_scrape,
                         window_counters=("toy:tokens", "toy:steps"), gen_counter="toy:tokens",
                         window_accept=_window),
    fleet=FleetFacet(markers=("toy:running",), gen_tokens=("toy:tokens_total",),
                     verify=("toy:steps_total",), running=("toy:running",), read=read_fleet,
                     accept=lambda rate: f"{rate(('toy:tokens_total',))} / "
                                         f"{rate(('toy:steps_total',))}"),
)


@pytest.fixture(autouse=True)
def toy() -> Iterator[EngineProfile]:
    register(TOY)
    yield TOY
    unregister("toy")


def test_its_scrape_is_read_by_its_own_reader() -> None:
    assert {"toy:running", "toy:tokens", "toy:steps"} <= set(wanted_names())
    w = RateWindow()
    first = w.add(parse_metrics(TEXT.format(r=2, g=100, s=50), 0.0))
    assert first.engine == "toy" and first.running == 2 and first.gen_tps is None
    second = w.add(parse_metrics(TEXT.format(r=2, g=300, s=100), 4.0))
    assert second.gen_tps == pytest.approx(50.0) and second.accept_len == pytest.approx(4.0)
    third = w.add(parse_metrics(TEXT.format(r=1, g=10, s=5), 6.0))  # a restart
    assert third.counter_reset


def test_prometheus_drill_down_maps_its_stored_names_back() -> None:
    assert exposed_names()["toy_tokens_total"] == "toy:tokens_total"
    up = b'{"status":"success","data":{"resultType":"vector","result":[' \
         b'{"metric":{"q":"up"},"value":[1,"1"]}]}}'
    series = b'{"status":"success","data":{"resultType":"vector","result":[' \
             b'{"metric":{"__name__":"toy_running","instance":"t:1"},"value":[1,"3"]}]}}'
    assert reading_of(up, series).samples == (("toy:running", {}, 3.0),)


def test_the_fleet_asks_for_it_and_shows_its_rows() -> None:
    groups = {g.name: dict(g.figures) for g in fleet_groups('job="x"')}
    assert "engine_toy" in group_figures()["state"]
    assert '"engine", "toy"' in groups["state"]["engine_toy"]
    assert "toy:running" in groups["state"]["engine_toy"]
    assert "toy:tokens_total" in groups["rates"]["tok_s"]
    assert "toy:steps_total" in groups["rates"]["verify"]
    assert "toy:steps_total" in dict(sparkline_queries())["accept_len"]
    inst = {"instance": "t:1"}
    snap = build_snapshot({
        "up": [(inst, 1.0)],
        "engine_toy": [({**inst, "engine": "toy", "model_name": "m"}, 1.0)],
        "tok_s": [(inst, 30.0)], "verify": [(inst, 10.0)],
    }, [], 1.0)
    (row,) = snap.rows
    assert (row.engine, row.model, row.state, row.tok_s) == ("toy", "m", "serving", 30.0)
    assert row.spec and row.accept_len == pytest.approx(3.0)


def test_a_benchmark_window_reads_its_counters() -> None:
    before = counter_totals(TEXT.format(r=0, g=100, s=50))
    after = counter_totals(TEXT.format(r=0, g=400, s=150))
    assert before == {"toy:tokens": 100.0, "toy:steps": 50.0}
    fig = metrics_figures(before, after, 10.0)
    assert fig is not None and fig.accept_len == pytest.approx(3.0)
    assert fig.tok_s == pytest.approx(30.0) and fig.note == "toy steps"
