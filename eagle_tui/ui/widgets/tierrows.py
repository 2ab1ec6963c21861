"""The Metrics pane's rows for the active speculative tier and each data-parallel rank.

Shown only where the engine reports them: the ``tier`` row when ``/metrics`` has the active
tier (an adaptive engine's steps, a block drafter's block with its mean verify window and
uncapped block accept length), the ``ranks`` row when the load endpoint names more than one
rank (a collapsed rank, :mod:`eagle_tui.model.views.ranks`, in the error colour).
"""

from __future__ import annotations

from collections.abc import Callable

from textual.content import Content

from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.numtext import fixed
from eagle_tui.model.views.ranks import collapsed_ranks, rank_accept
from eagle_tui.model.views.tier import tier

Row = Callable[[str, list[str | tuple[str, str] | Content], str, int], Content]
MAX_RANKS_SHOWN = 16


def tier_row(state: DashboardState, width: int, row: Row) -> Content | None:
    t = tier(state)
    if not t.active:
        return None
    bits = [t.text()]
    if t.cap_len is not None:
        bits.append(f"cap {fixed(t.cap_len, 2)}")
    if t.block_accept_len is not None:
        bits.append(f"block accept {fixed(t.block_accept_len, 2)}")
    if t.ceiling is not None:
        bits.append(f"max accept {t.ceiling}")
    return row("tier", [("  " + " · ".join(bits), "$text")], t.source, width)


def ranks_row(state: DashboardState, width: int, row: Row,
              loads_path: str | None) -> Content | None:
    ranks = rank_accept(state)
    if len(ranks) < 2:
        return None
    bad = {r for r, _, _ in collapsed_ranks(state)}
    parts: list[str | tuple[str, str] | Content] = [("  ", "$text")]
    for i, (r, v) in enumerate(ranks[:MAX_RANKS_SHOWN]):
        sep = " " if i else ""
        parts.append((f"{sep}{r}:{fixed(v, 2)}" + ("✗" if r in bad else ""),
                      "$error bold" if r in bad else "$text"))
    if len(ranks) > MAX_RANKS_SHOWN:
        parts.append((f" +{len(ranks) - MAX_RANKS_SHOWN}", "$text-muted"))
    return row("DP ranks", parts, f"{loads_path or 'loads'} · lifetime", width)


__all__ = ["ranks_row", "tier_row"]
