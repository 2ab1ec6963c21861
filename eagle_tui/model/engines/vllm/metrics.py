"""vLLM's ``/metrics``, and its series as the fleet reads them.

vLLM exports lifetime counters. Rates over a sliding window of scrapes give the numbers that
match its own log line: acceptance length = 1 + Δaccepted / Δdrafts, per-position acceptance =
Δaccepted_per_pos / Δdrafts, acceptance rate = Δaccepted / Δdraft_tokens, tok/s =
Δgeneration_tokens / Δt. Old names (``gpu_cache_usage_perc``) are read where the new ones are
missing.
"""

from __future__ import annotations

from collections.abc import Mapping

from eagle_tui.model.engines.facets.fleet import Figure, FleetFacet, FleetReading, RateOf
from eagle_tui.model.engines.facets.metrics import (
    Delta,
    MetricsFacet,
    Scrape,
    first,
    whole,
)
from eagle_tui.model.events import MetricsSample

PREFIX = "vllm:"
DRAFTS = "vllm:spec_decode_num_drafts"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens"
PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"
GEN = "vllm:generation_tokens"
RUNNING = "vllm:num_requests_running"
QUEUED = "vllm:num_requests_waiting"
KV = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
GAUGES = (RUNNING, QUEUED, *KV)
COUNTERS = (DRAFTS, DRAFT_TOKENS, ACCEPTED, GEN)


def read(now: Scrape, base: Scrape, reset: bool) -> MetricsSample:
    """The counters' deltas over the window (``base`` its oldest scrape), the gauges as read."""
    g = now.gauges
    sample = MetricsSample(
        t=now.t,
        engine=now.engine,
        running=whole(first(g, RUNNING)),
        queued=whole(first(g, QUEUED)),
        kv_usage=first(g, *(k + "#mean" for k in KV)),
        counter_reset=reset,
    )
    dt = now.t - base.t
    if base is now or dt <= 0:
        return sample

    def delta(name: str) -> float | None:
        if name not in now.counters or name not in base.counters:
            return None
        return now.counters[name] - base.counters[name]

    gen = delta(GEN)
    drafts = delta(DRAFTS)
    accepted = delta(ACCEPTED)
    draft_tokens = delta(DRAFT_TOKENS)
    accept_len = per_position = rate = None
    if drafts and accepted is not None:
        accept_len = 1.0 + accepted / drafts
    if drafts and now.per_pos:
        per_position = tuple(
            (now.per_pos[p] - base.per_pos.get(p, 0.0)) / drafts for p in sorted(now.per_pos)
        )
    if draft_tokens and accepted is not None:
        rate = accepted / draft_tokens
    return MetricsSample(
        t=sample.t,
        engine=now.engine,
        gen_tps=gen / dt if gen is not None else None,
        accept_len=accept_len,
        acceptance_rate=rate,
        per_position=per_position or (),
        running=sample.running,
        queued=sample.queued,
        kv_usage=sample.kv_usage,
        counter_reset=reset,
    )


def window_accept(delta: Delta, _gen: float | None) -> tuple[float, float, str] | None:
    """``1 + Δaccepted / Δdrafts`` over a benchmark window, weighted by its drafts."""
    drafts, accepted = delta(DRAFTS), delta(ACCEPTED)
    if drafts and accepted is not None:
        return 1.0 + accepted / drafts, drafts, "counter deltas, by drafts"
    return None


# vLLM binds /metrics early: a scrape that also holds another engine's names is vLLM's
METRICS = MetricsFacet(prefix=PREFIX, gauges=GAUGES, counters=COUNTERS, per_position=PER_POS,
                       precedence=1, read=read, window_counters=(DRAFTS, ACCEPTED, GEN),
                       gen_counter=GEN, window_accept=window_accept)


def fleet_read(figure: Figure, positions: Mapping[int, float]) -> FleetReading:
    """Accept length ``1 + rate(accepted) / rate(drafts)``, acceptance rate ``rate(accepted) /
    rate(draft_tokens)``, per position ``rate(accepted_per_pos) / rate(drafts)``."""
    tok_s, drafts = figure("tok_s"), figure("drafts")
    if not drafts:
        return FleetReading(tok_s)
    accepted = figure("accepted") or 0.0
    dtoks = figure("draft_tokens")
    return FleetReading(tok_s, True, 1.0 + accepted / drafts,
                        accepted / dtoks if dtoks else None,
                        tuple(positions[p] / drafts for p in sorted(positions)))


def _accept(rate: RateOf) -> str:
    return f"1 + {rate((ACCEPTED + '_total',))} / {rate((DRAFTS + '_total',))}"


FLEET = FleetFacet(
    markers=(RUNNING, GEN + "_total"),
    gen_tokens=(GEN + "_total",),
    drafts=(DRAFTS + "_total",),
    draft_tokens=(DRAFT_TOKENS + "_total",),
    accepted=(ACCEPTED + "_total",),
    per_pos=(PER_POS + "_total",),
    running=(RUNNING,),
    queued=(QUEUED,),
    kv=KV,
    ttft=("vllm:time_to_first_token_seconds_bucket",),
    itl=("vllm:inter_token_latency_seconds_bucket",),
    itl_old=("vllm:time_per_output_token_seconds_bucket",),
    read=fleet_read,
    accept=_accept,
)

__all__ = ["FLEET", "METRICS", "read"]
