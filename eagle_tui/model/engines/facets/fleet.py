"""An engine as the fleet view sees it through Prometheus (PromQL over its series).

The fleet's queries (``model/fleet/queries.py``) ask a fixed set of *figures* (tok/s, drafts/s,
running requests, TTFT, ...), each one PromQL expression over every engine's series at once;
an engine's facet says which of its series feed which figure, which series mark an instance as
its own (the ``engine`` label), and how its figures become a row's speculative numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from eagle_tui.model.record import Record, record


@record
class FleetReading(Record):
    """A row's throughput and speculative figures, as one engine's series give them."""

    tok_s: float | None = None
    spec: bool = False
    accept_len: float | None = None
    accept_rate: float | None = None
    per_position: tuple[float, ...] = ()


# a figure of this instance by the fleet query's name (``"tok_s"``, ``"drafts"``...), or None
Figure = Callable[[str], float | None]
# (the instance's figures, its per-position rates by position) → its reading
FleetReader = Callable[[Figure, Mapping[int, float]], FleetReading]
# a ``sum by (instance)`` rate over the given series → PromQL (for :attr:`FleetFacet.accept`)
RateOf = Callable[[tuple[str, ...]], str]


def plain(figure: Figure, _positions: Mapping[int, float]) -> FleetReading:
    """An engine without speculative figures of its own: the generation rate alone."""
    return FleetReading(tok_s=figure("tok_s"))


@record
class FleetFacet(Record):
    """Series whose presence on an instance says it runs this engine, and the series of each
    fleet figure (names as exposed, counters with ``_total``; old names where one changed)."""

    markers: tuple[str, ...] = ()
    gen_tokens: tuple[str, ...] = ()  # the generation-token counter (tok/s, totals, restarts)
    # a token counter that moves at every step, where ``gen_tokens`` moves only when a request
    # finishes (tok/s while long requests run), and the label matcher that picks its tokens
    live_tokens: tuple[str, ...] = ()
    live_tokens_match: str = ""
    drafts: tuple[str, ...] = ()
    draft_tokens: tuple[str, ...] = ()
    accepted: tuple[str, ...] = ()
    per_pos: tuple[str, ...] = ()  # accepted tokens by ``position`` label
    verify: tuple[str, ...] = ()  # verify steps (accept length = tokens / verify steps)
    running: tuple[str, ...] = ()
    queued: tuple[str, ...] = ()
    kv: tuple[str, ...] = ()
    tps_gauge: tuple[str, ...] = ()  # a tok/s gauge, read when no counter rate is there
    accept_gauge: tuple[str, ...] = ()
    rate_gauge: tuple[str, ...] = ()
    # the active speculative tier: draft steps, draft tokens per verify step, and a series that
    # is above 0 only while a block drafter verifies (its draft tokens are then the block + 1)
    steps_gauge: tuple[str, ...] = ()
    window_gauge: tuple[str, ...] = ()
    block_gauge: tuple[str, ...] = ()
    ttft: tuple[str, ...] = ()  # histogram buckets
    itl: tuple[str, ...] = ()
    itl_old: tuple[str, ...] = ()  # the old name of the inter-token histogram
    read: FleetReader = plain
    # the accept length over time, PromQL (the sparkline); None: the engine has none
    accept: Callable[[RateOf], str] | None = None


__all__ = ["Figure", "FleetFacet", "FleetReader", "FleetReading", "RateOf", "plain"]
