"""``watch --prometheus URL --instance INSTANCE``: the spec, the sources it builds, the figures'
source, and the fleet's drill-down spec when the instance's own address does not answer."""

from __future__ import annotations

import pytest

from eagle_tui.assembly.build import build_sources
from eagle_tui.assembly.fleet import FleetSpec, drill_spec, tcp_reachable
from eagle_tui.assembly.spec import DashboardSpec, check_sources, spec_from_args
from eagle_tui.cli import build_parser
from eagle_tui.errors import UsageError
from eagle_tui.model.events import MetricsSample
from eagle_tui.model.fleet.snapshot import FleetRow
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.figures import figures
from eagle_tui.sources.health import HealthPoller
from eagle_tui.sources.metrics import MetricsScraper
from eagle_tui.sources.prom_metrics import PromMetricsSource
from eagle_tui.transport.local import LocalTransport


def spec_of(*argv: str) -> DashboardSpec:
    return spec_from_args(build_parser().parse_args(["watch", *argv]), "watch")


def test_cli_builds_the_prometheus_spec() -> None:
    spec = spec_of("--prometheus", "prom:9090/", "--instance", "10.0.0.5:8000", "--gpu", "none")
    assert spec.prometheus == "http://prom:9090" and spec.prom_instance == "10.0.0.5:8000"
    assert spec.url is None and spec.health_decides()
    assert spec.source_label() == "10.0.0.5:8000 (prometheus)"
    with pytest.raises(UsageError, match="go together"):
        spec_of("--prometheus", "http://prom:9090")
    with pytest.raises(UsageError, match="go together"):
        check_sources(DashboardSpec(prom_instance="x:1"))


def test_sources_metrics_from_prometheus_health_from_up_or_the_url() -> None:
    only = build_sources(spec_of("--prometheus", "http://p:9090", "--instance", "h:1",
                                 "--gpu", "none"), LocalTransport(), lambda: None)
    (prom,) = [s for s in only if isinstance(s, PromMetricsSource)]
    assert prom.health and prom.instance == "h:1"
    assert not any(isinstance(s, MetricsScraper | HealthPoller) for s in only)
    both = build_sources(spec_of("--prometheus", "http://p:9090", "--instance", "h:1",
                                 "--url", "http://h:1", "--gpu", "none"),
                         LocalTransport(), lambda: None)
    (prom,) = [s for s in both if isinstance(s, PromMetricsSource)]
    assert not prom.health  # /health answers: it decides readiness
    assert any(isinstance(s, HealthPoller) for s in both)
    assert not any(isinstance(s, MetricsScraper) for s in both)


def test_the_figures_say_prometheus() -> None:
    state = reduce(DashboardState(), [MetricsSample(1.0, "vllm", gen_tps=100.0, accept_len=2.5,
        acceptance_rate=0.5, running=1, source="prometheus")])
    figs = figures(state)
    assert figs.tok_s.source == figs.accept_len.source == figs.accept_rate.source == "prometheus"
    assert figs.requests.source == "prometheus"
    plain = figures(reduce(DashboardState(), [MetricsSample(1.0, "vllm", gen_tps=100.0)]))
    assert plain.tok_s.source == "/metrics"


def test_drill_spec_without_a_reachable_address() -> None:
    row = FleetRow("10.0.0.5:8000", engine="vllm")
    spec = drill_spec(FleetSpec("http://prom:9090/"), row, [], set(), reachable=lambda _: False)
    assert spec.url is None and spec.prometheus == "http://prom:9090"
    assert spec.prom_instance == "10.0.0.5:8000"
    assert check_sources(spec) == spec
    # mapped over SSH: the instance's HTTP goes through the connection
    mapped = drill_spec(FleetSpec("http://prom:9090"), row, [("10.0.0.*", "ops@{host}")],
                        set(), reachable=lambda _: False)
    assert mapped.url == "http://10.0.0.5:8000" and mapped.prom_instance == "10.0.0.5:8000"
    assert not tcp_reachable("not-an-instance") and not tcp_reachable("127.0.0.1:1", 0.2)
