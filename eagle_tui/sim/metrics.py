"""``GET /metrics`` in each engine's real metric names and types (as recorded in
``tests/fixtures/sglang-cpu/*-metrics.txt`` and ``tests/fixtures/vllm-cpu/metrics-*.txt``).

The text is produced by ``prometheus_client`` itself from a collector that reads the engine's
counters, so the exposition format (``# HELP``/``# TYPE``, ``_total``/``_created`` suffixes,
histogram ``_bucket``/``_sum``/``_count``) is exactly what real servers expose: SGLang gauges
``sglang:*`` labelled ``model_name, engine_type, tp_rank, pp_rank``; vLLM counters with
``_total`` labelled ``engine, model_name`` and per-position spec counters.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)

from .histogram import Histogram

if TYPE_CHECKING:
    from .engine import ServingEngine

class _Collector:
    def __init__(self, engine: ServingEngine) -> None:
        self.engine = engine

    def collect(self) -> Iterator[Any]:
        if self.engine.cfg.engine == "sglang":
            yield from _sglang(self.engine)
        else:
            yield from _vllm(self.engine)


def _hist(name: str, doc: str, labels: dict[str, str], h: Histogram) -> HistogramMetricFamily:
    fam = HistogramMetricFamily(name, doc, labels=list(labels))
    fam.add_metric(list(labels.values()), h.cumulative(), h.total)
    return fam


Row = tuple[str, str, float]  # (name, help, value)


def _families(rows: tuple[Row, ...], kind: str, labels: dict[str, str],
              created: float) -> Iterator[Any]:
    """One single-sample gauge or counter family per row, all with the same labels."""
    keys, vals = list(labels), list(labels.values())
    for name, doc, value in rows:
        if kind == "counter":
            c = CounterMetricFamily(name, doc, labels=keys)
            c.add_metric(vals, float(value), created=created)
            yield c
        else:
            g = GaugeMetricFamily(name, doc, labels=keys)
            g.add_metric(vals, float(value))
            yield g


def _tier(e: ServingEngine) -> tuple[Row, ...]:
    """The active tier and DSpark's block figures (metrics_collector.py, 0.5.23): 0 until the
    first decode line, as the real gauges read (DSpark's steps are 1, its window the block + 1)."""
    m = e.modes
    on = m.reported
    steps = (1 if e.cfg.scenario.block else m.steps) if on else 0
    return (
        ("sglang:spec_cap_length", "Mean DSpark confidence-scheduled verify window per verify "
         "step, incl the bonus slot (0 when no cap is scheduled).", m.last_cap_len),
        ("sglang:spec_block_accept_length", "Mean uncapped full-block accept length per verify "
         "step (accept + cap-trimmed drafts; exact only in DSpark cap-accept mode).",
         m.last_block_accept_len),
        ("sglang:spec_num_steps", "Currently active speculative_num_steps.", steps),
        ("sglang:spec_num_draft_tokens", "Currently active speculative_num_draft_tokens "
         "(decouples from steps under topk>1).", m.draft_tokens if on else 0),
    )


def _sglang(e: ServingEngine) -> Iterator[Any]:
    labels = {"model_name": e.cfg.served_name, "engine_type": "unified", "tp_rank": "0",
              "pp_rank": "0"}
    gauges: tuple[Row, ...] = (
        ("sglang:num_running_reqs", "The number of running requests.", len(e.running)),
        ("sglang:num_used_tokens", "The number of used tokens.", e.used_tokens),
        ("sglang:token_usage", "The token usage.", e.token_usage),
        ("sglang:gen_throughput", "The generation throughput (token/s).", e.last_gen_throughput),
        ("sglang:num_queue_reqs", "The number of requests in the waiting queue.", len(e.waiting)),
        ("sglang:cache_hit_rate", "The prefix cache hit rate.", 0.0),
        ("sglang:spec_accept_length", "The average acceptance length of speculative decoding.",
         e.last_accept_len),
        ("sglang:spec_accept_rate", "The average acceptance rate of speculative decoding.",
         e.last_accept_rate),
        *_tier(e),
        ("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.",
         e.cfg.kv_tokens),
        ("sglang:is_cuda_graph", "Whether the batch is using CUDA graph.", 1.0),
    )
    yield from _families(gauges, "gauge", labels, e.created)
    # tokenizer-side, counted when a request finishes (the real server's
    # observe_one_finished_request): a long request moves them only at its end
    counters: tuple[Row, ...] = (
        ("sglang:prompt_tokens", "Number of prefill tokens processed.", e.done_prompt_tokens),
        ("sglang:generation_tokens", "Number of generation tokens processed.",
         e.done_generation_tokens),
        ("sglang:num_requests", "Number of requests processed.", e.finished_requests),
    )
    yield from _families(counters, "counter", labels, e.created)
    # scheduler-side, at every step (the real server's increment_realtime_tokens)
    realtime = CounterMetricFamily("sglang:realtime_tokens_total",
                                   "Total number of tokens processed (updated on each log "
                                   "interval). mode: prefill_compute, prefill_cache, decode.",
                                   labels=[*labels, "mode"])
    for mode, value in (("prefill_compute", e.prompt_tokens), ("decode", e.generation_tokens)):
        realtime.add_metric([*labels.values(), mode], float(value), created=e.created)
    yield realtime
    # tokenizer-side, no rank labels (as the real server: tests/fixtures/sglang-cpu/*-metrics)
    verify: tuple[Row, ...] = (
        ("sglang:spec_verify_calls", "The number of speculative verify calls.",
         e.done_verify_calls),
    )
    yield from _families(verify, "counter", {"engine_type": "unified",
                                             "model_name": e.cfg.served_name}, e.created)
    if e.startup_time is not None:
        yield from _startup(e.startup_time, {"engine_type": "unified",
                                             "model_name": e.cfg.served_name})
    yield _hist("sglang:time_to_first_token_seconds", "Histogram of time to first token in "
                "seconds.", labels, e.ttft)
    yield _hist("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in "
                "seconds.", labels, e.itl)
    yield _hist("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency "
                "in seconds", labels, e.e2e)


def _startup(startup: dict[str, Any], labels: dict[str, str]) -> Iterator[Any]:
    """0.5.23 ``emit_startup_time``: one gauge per phase (tokenizer-side: no rank labels, as
    tests/fixtures/sglang-cpu/*-metrics.txt), the graph families on a gauge of their own."""
    top = GaugeMetricFamily("sglang:startup_time_seconds",
                            "Engine startup duration by phase in seconds.",
                            labels=[*labels, "phase"])
    for phase in ("load_weight", "kv_cache_allocation", "scheduler_e2e", "tokenizer_e2e"):
        top.add_metric([*labels.values(), phase], float(startup[phase]))
    yield top
    graphs = GaugeMetricFamily("sglang:startup_cuda_graph_time_seconds",
                               "CUDA graph capture duration by phase in seconds.",
                               labels=[*labels, "phase"])
    for phase, duration in startup["cuda_graph"].items():
        graphs.add_metric([*labels.values(), phase], float(duration))
    yield graphs


def _sleep_state(e: ServingEngine, keys: list[str], vals: list[str]) -> GaugeMetricFamily:
    """vLLM 0.32's ``vllm:engine_sleep_state`` (``v1/metrics/loggers.py``): one series per
    ``sleep_state``; level 0 (scheduling paused) reads awake 0 with neither level set."""
    g = GaugeMetricFamily("vllm:engine_sleep_state", "Engine sleep state; awake = 0 means "
                          "engine is sleeping; awake = 1 means engine is awake; "
                          "weights_offloaded = 1 means sleep level 1; discard_all = 1 means "
                          "sleep level 2.", labels=[*keys, "sleep_state"])
    level = e.sleep_level
    for state, value in (("awake", level is None), ("weights_offloaded", level == 1),
                         ("discard_all", level == 2)):
        g.add_metric([*vals, state], float(value))
    return g


def _vllm(e: ServingEngine) -> Iterator[Any]:
    labels = {"engine": "0", "model_name": e.cfg.served_name}
    keys, vals = list(labels), list(labels.values())
    counters: tuple[Row, ...] = (
        ("vllm:prompt_tokens", "Number of prefill tokens processed.", e.prompt_tokens),
        ("vllm:generation_tokens", "Number of generation tokens processed.",
         e.generation_tokens),
        ("vllm:num_preemptions", "Cumulative number of preemption from the engine.", 0),
        ("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried "
         "tokens.", e.prompt_tokens),
        ("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", 0),
        ("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.", e.drafts),
        ("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.", e.draft_tokens),
        ("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.", e.accepted),
    )
    yield from _families(counters, "counter", labels, e.created)
    pos = CounterMetricFamily("vllm:spec_decode_num_accepted_tokens_per_pos",
                              "Accepted tokens per draft position.", labels=[*keys, "position"])
    for i, n in enumerate(e.accepted_per_pos):
        pos.add_metric([*vals, str(i)], float(n), created=e.created)
    yield pos
    ok = CounterMetricFamily("vllm:request_success", "Count of successfully processed requests.",
                             labels=[keys[0], "finished_reason", keys[1]])
    for reason in ("stop", "length", "abort"):
        ok.add_metric([vals[0], reason, vals[1]], float(e.finished_by_reason.get(reason, 0)),
                      created=e.created)
    yield ok
    gauges: tuple[Row, ...] = (
        ("vllm:num_requests_running", "Number of requests in model execution batches.",
         len(e.running)),
        ("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
         len(e.waiting)),
        ("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
         e.token_usage),
    )
    yield from _families(gauges, "gauge", labels, e.created)
    yield _sleep_state(e, keys, vals)
    info = GaugeMetricFamily("vllm:cache_config_info", "Information of the LLMEngine CacheConfig",
                             labels=["block_size", "cache_dtype", "engine", "num_gpu_blocks"])
    info.add_metric(["16", "auto", "0", str(e.cfg.kv_tokens // 16)], 1.0)
    yield info
    yield _hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in "
                "seconds.", labels, e.ttft)
    yield _hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in "
                "seconds.", labels, e.itl)
    yield _hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in "
                "seconds.", labels, e.e2e)


OPENMETRICS_TYPE = ("application/openmetrics-text; version=1.0.0; charset=utf-8; "
                    "escaping=underscores")


def _registry(engine: ServingEngine) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(engine))
    return registry


def render(engine: ServingEngine) -> bytes:
    """The full ``/metrics`` body for the engine's current counters."""
    return generate_latest(_registry(engine))


def render_openmetrics(engine: ServingEngine) -> bytes:
    """The body a real server's prometheus_client (0.26) gives Prometheus' OpenMetrics
    ``Accept`` header: names escaped to underscores (``sglang:x`` → ``sglang_x``)."""
    from prometheus_client.openmetrics.exposition import generate_latest as openmetrics

    body: bytes = openmetrics(_registry(engine), escaping="underscores")  # type: ignore[no-untyped-call]
    return body
