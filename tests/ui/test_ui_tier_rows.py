"""The Metrics pane's tier and DP-rank rows: there where the engine reports them, absent
otherwise (so the panes of servers without them, and their snapshots, stay as they were)."""

from __future__ import annotations

from eagle_tui.model.events import EngineDetected, MetricsSample, RankLoads, SpecConfig
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.ui.widgets.metrics import metrics_content

SPEC = SpecConfig(algorithm="EAGLE3", num_steps=3, num_draft_tokens=4)


def _rows(*events: object) -> list[str]:
    st = reduce(DashboardState(), [EngineDetected("sglang", 0), SPEC, *events])  # type: ignore[list-item]
    return metrics_content(st, 90).plain.splitlines()


def test_no_tier_or_ranks_row_without_their_figures() -> None:
    rows = _rows(MetricsSample(t=1.0, engine="sglang", accept_len=3.1))
    assert not any(r.lstrip().startswith(("tier", "DP ranks")) for r in rows)
    one_rank = _rows(RankLoads(1.0, ((0, 3.1),)))
    assert not any("DP ranks" in r for r in one_rank)


def test_the_active_tier_row() -> None:
    rows = _rows(MetricsSample(t=1.0, engine="sglang", spec_steps=5, spec_draft_tokens=6))
    tier = [r for r in rows if r.lstrip().startswith("tier")]
    assert tier and "steps 5 · 6 draft tok · max accept 6" in tier[0]
    assert tier[0].rstrip().endswith("/metrics")


def test_the_block_tier_row() -> None:
    rows = _rows(MetricsSample(t=1.0, engine="sglang", spec_steps=1, spec_draft_tokens=17,
                               spec_cap_len=12.4, spec_block_accept_len=10.9))
    tier = [r for r in rows if r.lstrip().startswith("tier")]
    assert tier and "block 16 · cap 12.40 · block accept 10.90 · max accept 17" in tier[0]


def test_the_ranks_row_marks_the_collapsed_rank() -> None:
    rows = _rows(RankLoads(1.0, ((0, 3.2), (1, 1.1), (2, 3.3))),
                 RankLoads(2.0, ((0, 3.2), (1, 1.05), (2, 3.3))))
    ranks = [r for r in rows if "DP ranks" in r]
    assert ranks and "0:3.20 1:1.05✗ 2:3.30" in ranks[0]
    assert "/v1/loads · lifetime" in ranks[0]
