"""SGLang's ``/metrics``, and its series as the fleet reads them.

SGLang exports gauges that are already interval values (``gen_throughput``,
``spec_accept_length``, ``spec_accept_rate``, ``num_running_reqs``, ``num_queue_reqs``,
``token_usage``): they are passed through, except where the newer counters exist:
``spec_verify_calls_total`` with ``generation_tokens_total`` give the accept length over the
window as Δgeneration_tokens / Δverify_calls (SGLang's own per-request ``completion_tokens /
spec_verify_ct``) and tok/s as Δgeneration_tokens / Δt. A window with no verify call has no
accept length (the gauge then still holds the last busy interval's value: not a reading).
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
from eagle_tui.model.engines.sglang import startup
from eagle_tui.model.events import MetricsSample

PREFIX = "sglang:"
VERIFY = "sglang:spec_verify_calls"
GEN = "sglang:generation_tokens"
GEN_TPS = "sglang:gen_throughput"
ACCEPT_LEN = "sglang:spec_accept_length"
ACCEPT_RATE = "sglang:spec_accept_rate"
RUNNING = ("sglang:num_running_reqs", "sglang:num_requests_running")
QUEUED = ("sglang:num_queue_reqs", "sglang:num_requests_waiting")
KV = "sglang:token_usage"
# the active tier (an adaptive server changes it) and a block drafter's (DSpark) verify window
# and uncapped block accept length: gauges of SGLang 0.5.23's metrics_collector.py
NUM_STEPS = "sglang:spec_num_steps"
NUM_DRAFT_TOKENS = "sglang:spec_num_draft_tokens"
CAP_LEN = "sglang:spec_cap_length"
BLOCK_ACCEPT_LEN = "sglang:spec_block_accept_length"
TIER = (NUM_STEPS, NUM_DRAFT_TOKENS, CAP_LEN, BLOCK_ACCEPT_LEN)
GAUGES = (GEN_TPS, ACCEPT_LEN, ACCEPT_RATE, *RUNNING, *QUEUED, KV, *TIER)
COUNTERS = (VERIFY, GEN)
MAX_TIER = 1 << 16  # draft tokens per verify step: more is not a reading


def _positive(v: float | None) -> float | None:
    """A block gauge's reading: 0 is SGLang's "none" (no block drafter, no cap scheduled)."""
    return v if v is not None and 0 < v <= MAX_TIER else None


def _count(v: float | None) -> int | None:
    """A tier gauge's count: 0 is a reading (an adaptive server's steps 0: drafting off)."""
    return int(v) if v is not None and 0 <= v <= MAX_TIER else None


def gauge_sample(now: Scrape) -> MetricsSample:
    """The gauges alone (an SGLang without ``spec_verify_calls``)."""
    g = now.gauges
    # one tier per server: the ranks' mean (they run one setting), not their sum
    steps, tokens = (_count(first(g, n + "#mean")) for n in (NUM_STEPS, NUM_DRAFT_TOKENS))
    return MetricsSample(
        t=now.t,
        engine=now.engine,
        gen_tps=first(g, GEN_TPS),
        accept_len=first(g, ACCEPT_LEN + "#mean"),
        acceptance_rate=first(g, ACCEPT_RATE + "#mean"),
        running=whole(first(g, *RUNNING)),
        queued=whole(first(g, *QUEUED)),
        kv_usage=first(g, KV + "#mean"),
        spec_steps=steps,
        spec_draft_tokens=tokens,
        spec_cap_len=_positive(first(g, CAP_LEN + "#mean")),
        spec_block_accept_len=_positive(first(g, BLOCK_ACCEPT_LEN + "#mean")),
    )


def windowed(now: Scrape) -> bool:
    """Only the verify-call counter makes a window worth keeping."""
    return VERIFY in now.counters


def read(now: Scrape, base: Scrape, reset: bool) -> MetricsSample:
    """The gauges, or, with ``spec_verify_calls``, accept length and tok/s from the counters'
    deltas over the window (``base`` its oldest scrape)."""
    gauge = gauge_sample(now)
    if not windowed(now):
        return gauge
    dt = now.t - base.t
    gen_tps = accept = None
    if base is not now and dt > 0:
        gen = now.counters.get(GEN, 0.0) - base.counters.get(GEN, 0.0)
        verify = now.counters[VERIFY] - base.counters.get(VERIFY, 0.0)
        if GEN in now.counters:
            gen_tps = gen / dt
            accept = gen / verify if verify > 0 else None
    return MetricsSample(
        t=now.t, engine=now.engine, gen_tps=gen_tps if gen_tps is not None else gauge.gen_tps,
        accept_len=accept, acceptance_rate=gauge.acceptance_rate if accept else None,
        running=gauge.running, queued=gauge.queued,
        kv_usage=gauge.kv_usage, counter_reset=reset, spec_steps=gauge.spec_steps,
        spec_draft_tokens=gauge.spec_draft_tokens, spec_cap_len=gauge.spec_cap_len,
        spec_block_accept_len=gauge.spec_block_accept_len,
    )


def window_accept(delta: Delta, gen: float | None) -> tuple[float, float, str] | None:
    """Tokens per verify step over a benchmark window."""
    verify = delta(VERIFY)
    if verify and gen is not None:
        return gen / verify, verify, "counter deltas, tokens per verify step"
    return None


METRICS = MetricsFacet(prefix=PREFIX, gauges=GAUGES, counters=COUNTERS, windowed=windowed,
                       read=read, window_counters=(GEN, VERIFY), gen_counter=GEN,
                       window_accept=window_accept,
                       block_algorithms=("DSPARK",),  # speculative_hook.py, 0.5.23
                       missing_hint="SGLang needs --enable-metrics for it",
                       labelled=startup.LABELLED, startup=startup.from_scrape)


def fleet_read(figure: Figure, _positions: Mapping[int, float]) -> FleetReading:
    """With verify calls the accept length is ``rate(generation_tokens) / rate(verify_calls)``;
    without a reading from them, the last-interval gauge while requests run."""
    tok_s = figure("tok_s")
    running = figure("running") or 0.0
    if tok_s is None or (tok_s <= 0 and running > 0):
        # the counter moves when a request finishes: flat under long requests, which are not
        # a stall; the scheduler's per-step token counter is the figure then (a stall shows
        # there), else its throughput gauge (the last decode interval's)
        live, gauge = figure("live_tok_s"), figure("tps_gauge")
        tok_s = live if live is not None else gauge if gauge is not None else tok_s
    verify = figure("verify")
    if verify:
        # a ratio below 1, which no server can produce (a window that splits what was
        # counted apart), is not a reading (and no false "drafts rejected")
        ratio = (figure("tok_s") or 0.0) / verify
        if ratio >= 1.0:
            return FleetReading(tok_s, True, ratio, figure("rate_gauge"))
    # both counters move only when a request finishes: under long requests they stay flat
    # for minutes, while the scheduler's gauge holds the last decode interval's figure (0
    # until its first one, and on a server without speculative decoding)
    gauge = figure("accept_gauge")
    busy = (tok_s or 0.0) > 0 or running > 0
    if gauge is not None and gauge >= 1.0 and busy:
        return FleetReading(tok_s, True, gauge, figure("rate_gauge"))
    return FleetReading(tok_s, bool(verify))


def _accept(rate: RateOf) -> str:
    return f"{rate((GEN + '_total',))} / {rate((VERIFY + '_total',))}"


FLEET = FleetFacet(
    markers=("sglang:num_running_reqs", "sglang:num_requests_running", GEN + "_total"),
    gen_tokens=(GEN + "_total",),
    live_tokens=("sglang:realtime_tokens_total",),  # the scheduler's, at every step
    live_tokens_match='mode="decode"',
    verify=(VERIFY + "_total",),
    running=RUNNING,
    queued=QUEUED,
    kv=(KV,),
    tps_gauge=(GEN_TPS,),
    accept_gauge=(ACCEPT_LEN,),
    rate_gauge=(ACCEPT_RATE,),
    steps_gauge=(NUM_STEPS,),
    window_gauge=(NUM_DRAFT_TOKENS,),
    block_gauge=(CAP_LEN, BLOCK_ACCEPT_LEN),
    ttft=("sglang:time_to_first_token_seconds_bucket",),
    itl=("sglang:inter_token_latency_seconds_bucket",),
    itl_old=("sglang:time_per_output_token_seconds_bucket",),
    read=fleet_read,
    accept=_accept,
)

__all__ = ["FLEET", "METRICS", "gauge_sample", "read"]
