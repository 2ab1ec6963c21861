"""The speculative tier and the per-rank acceptance as plain data and as text: what headless
output and ``report`` print (the Metrics pane shows the same, :mod:`.tier`, :mod:`.ranks`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eagle_tui.model.views.numtext import fixed
from eagle_tui.model.views.ranks import collapsed_ranks, rank_accept
from eagle_tui.model.views.tier import thresholds, tier

if TYPE_CHECKING:
    from eagle_tui.model.state import DashboardState


def tier_dict(state: DashboardState) -> dict[str, Any] | None:
    """``{"steps", "draft_tokens", "block", "max_accept_len", "source", ...}`` (``None``: no
    tier known). ``source``: ``"/metrics"`` / ``"prometheus"`` (the engine's active-tier
    gauges), ``"log"`` (an adaptive server's line) or ``"launch"``."""
    t = tier(state)
    if t.steps is None and t.draft_tokens is None and t.block is None:
        return None
    low, high = thresholds(t)
    return {
        "steps": t.steps, "draft_tokens": t.draft_tokens, "block": t.block,
        "drafting": not t.off, "max_accept_len": t.ceiling,
        "cap_len": None if t.cap_len is None else round(t.cap_len, 3),
        "block_accept_len": None if t.block_accept_len is None else round(t.block_accept_len, 3),
        "rejected_at_or_below": round(low, 3), "recovered_above": round(high, 3),
        "source": t.source if t.active else "launch",
    }


def ranks_dict(state: DashboardState) -> list[dict[str, Any]]:
    """Each data-parallel rank's lifetime accept length (empty: no load endpoint answer)."""
    bad = {r for r, _, _ in collapsed_ranks(state)}
    return [{"dp_rank": r, "accept_len": round(v, 3), "collapsed": r in bad}
            for r, v in rank_accept(state)]


def tier_text(state: DashboardState) -> str | None:
    """``"tier steps 5 · 6 draft tok [/metrics]"`` / ``"DP ranks 0:3.20 1:1.04✗"`` (joined
    with `` | ``); ``None`` where neither is reported live."""
    parts: list[str] = []
    t = tier(state)
    if t.active:
        parts.append(f"tier {t.text()} [{t.source}]")
    ranks = rank_accept(state)
    if len(ranks) > 1:
        bad = {r for r, _, _ in collapsed_ranks(state)}
        parts.append("DP ranks " + " ".join(f"{r}:{fixed(v, 2)}" + ("✗" if r in bad else "")
                                            for r, v in ranks[:16]))
    return " | ".join(parts) or None


__all__ = ["ranks_dict", "tier_dict", "tier_text"]
