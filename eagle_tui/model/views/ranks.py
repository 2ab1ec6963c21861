"""Each data-parallel rank's acceptance, and the alert when one rank collapses alone.

Under DP attention every rank drafts for its own requests, so one rank can lose its drafts (a
bad shard of the draft, a rank-local bug) while the server's mean only sags. The figures are
the engine's load endpoint's (:class:`~eagle_tui.model.events.RankLoads`): each rank's accept
length over its life, so a collapse shows as that rank falling away from the others. A rank is
collapsed when, in the newest answer and the one before it, its gain over 1 (nothing accepted)
is at most :data:`COLLAPSE_FRACTION` of the other ranks' median gain while they are healthy
(above the tier's recovery threshold, :mod:`.tier`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eagle_tui.model.engines import profile_of
from eagle_tui.model.state.alert import Alert
from eagle_tui.model.views.numtext import fixed
from eagle_tui.model.views.tier import thresholds, tier

if TYPE_CHECKING:
    from eagle_tui.model.events import RankLoads
    from eagle_tui.model.state import DashboardState

COLLAPSE_FRACTION = 0.25
MIN_RANKS = 2  # one rank has no peers to fall behind


def rank_accept(state: DashboardState) -> tuple[tuple[int, float], ...]:
    """``(rank, accept length)`` of each rank with one, in rank order (newest answer)."""
    r = state.metrics.ranks
    return r.accept if r is not None else ()


def _collapsed(loads: RankLoads, healthy_above: float) -> dict[int, tuple[float, float]]:
    """Rank → (its accept length, the others' median) for each collapsed rank."""
    out: dict[int, tuple[float, float]] = {}
    if len(loads.accept) < MIN_RANKS:
        return out
    import statistics  # here: it imports random, decimal and fractions; ``report`` never needs

    for rank, value in loads.accept:
        others = statistics.median(v for r, v in loads.accept if r != rank)
        if others > healthy_above and value - 1.0 <= COLLAPSE_FRACTION * (others - 1.0):
            out[rank] = (value, others)
    return out


def collapsed_ranks(state: DashboardState) -> tuple[tuple[int, float, float], ...]:
    """``(rank, accept length, the others' median)`` of each rank collapsed in the newest two
    answers (a rank that fell in one answer only may be noise, or a rank just started)."""
    now, before = state.metrics.ranks, state.metrics.ranks_before
    if now is None or before is None:
        return ()
    healthy_above = thresholds(tier(state))[1]
    earlier = _collapsed(before, healthy_above)
    return tuple((r, v, o) for r, (v, o) in _collapsed(now, healthy_above).items()
                 if r in earlier)


def rule_rank_collapsed(state: DashboardState) -> Alert | None:
    found = collapsed_ranks(state)
    if not found:
        return None
    profile = profile_of(state.startup.engine)
    where = profile.endpoints.loads if profile is not None and profile.endpoints.loads else \
        "the load endpoint"
    parts = "; ".join(f"DP rank {r}: accept length {fixed(v, 2)} against {fixed(o, 2)} on the "
                      "other ranks" for r, v, o in found[:4])
    which = "rank" if len(found) == 1 else "ranks"
    return Alert(
        "rank_collapsed", "warning",
        f"Drafts collapsed on one data-parallel {which} while the others are fine ({parts}; "
        f"lifetime averages from {where}). That rank's requests decode without their drafts: "
        "check that rank's log for errors and the draft model's placement on it.")


__all__ = ["COLLAPSE_FRACTION", "collapsed_ranks", "rank_accept", "rule_rank_collapsed"]
