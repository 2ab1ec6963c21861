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


HUGE = [1e300, -1e300, 1e9, 123456789012.5, 9.99e99]


def test_absurd_figures_keep_their_width() -> None:
    """A log's ``gen throughput`` of 300 digits filled the Metrics pane and pushed the header's
    fields off: every figure is written in at most a dozen characters (``numtext.fixed``)."""
    for value in HUGE:
        s = st(*(MetricsSample(float(t), gen_tps=value, accept_len=value) for t in range(1, 4)))
        status = status_line(s).plain
        assert "accept" in status and len(status) < 160, status
        rows = metrics_content(s, 60).plain.splitlines()
        labels = [r.split()[0] for r in rows if r.startswith(" ") and r[1:2].isalpha()]
        assert labels[:3] == ["tok/s", "accept", "accept"], rows  # (the row under stays one)
        assert len(rows) <= 12 and all(len(r) <= 60 for r in rows), rows
