"""The status line and the Metrics pane show the same figures (eagle_tui.model.views.figures)."""

from __future__ import annotations

from eagle_tui.model.events import Event, MetricsSample, ServerInfo
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.ui.widgets.metrics import metrics_content
from eagle_tui.ui.widgets.status import status_line


def st(*events: Event) -> DashboardState:
    return reduce(DashboardState(), events)


def test_status_line_and_metrics_pane_agree_on_number_and_source() -> None:
    s = st(*(MetricsSample(float(t), gen_tps=90.0, accept_len=1.02) for t in range(1, 4)))
    status = status_line(s).plain
    assert "90.0 tok/s" in status and "accept 1.02" in status
    text = metrics_content(s, 80).plain.splitlines()
    assert text[0].split()[:2] == ["tok/s", "90.0"] and text[0].endswith("/metrics")
    assert text[1].split()[:2] == ["accept", "1.02"] and text[1].endswith("/metrics")


def test_the_lifetime_average_is_shown_by_the_pane_only() -> None:
    s = st(ServerInfo(1.0, avg_accept_len=2.75))
    assert "accept" not in status_line(s).plain
    row = metrics_content(s, 80).plain.splitlines()[1]
    assert "2.75  lifetime average" in row and row.endswith("server_info")
