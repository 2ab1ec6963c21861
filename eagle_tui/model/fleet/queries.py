"""The PromQL of the fleet view: a few requests per refresh, each grouped ``by (instance)``.

Why this shape: the refresh must cost the same for 10 and 1,000 instances, so no query is ever
per instance. Each *figure* (tok/s, drafts/s, running requests, TTFT p99, ...) is one PromQL
expression covering both engines at once (a ``__name__=~"vllm:…|sglang:…"`` selector: an
instance exports one engine's names only), and the figures of one *group* travel in one HTTP
request: each expression is tagged with ``label_replace(…, "fleet_q", NAME, "", "")`` and the
tagged vectors are joined with ``or`` (their label sets differ by the tag, so nothing is
dropped). A group that fails costs only its own figures; the others still answer.

Counting a number once: SGLang repeats a gauge per parallel rank (``tp_rank``, ``pp_rank``…), so
every figure first takes ``max without (<rank labels>)`` and then sums ``by (instance)`` what is
left (vLLM's data-parallel ``engine="0"``, ``"1"``), the same rule as ``sources/metrics.py``
applies to one server's ``/metrics``.

The metric names are the engines' real ones (FORMATS.md §1.7, §2.5; the recorded ``/metrics`` of
the real CPU servers in ``tests/fixtures``), old names included where an engine renamed one.
"""

from __future__ import annotations

from dataclasses import dataclass

RANK_LABELS = ("tp_rank", "pp_rank", "moe_ep_rank", "attn_cp_rank", "moe_dp_rank")
TAG = "fleet_q"
DEFAULT_WINDOW = "1m"
DEFAULT_LOOKBACK = "15m"

GEN_TOKENS = ("vllm:generation_tokens_total", "sglang:generation_tokens_total")
VLLM_DRAFTS = ("vllm:spec_decode_num_drafts_total",)
VLLM_DRAFT_TOKENS = ("vllm:spec_decode_num_draft_tokens_total",)
VLLM_ACCEPTED = ("vllm:spec_decode_num_accepted_tokens_total",)
VLLM_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
SGLANG_VERIFY = ("sglang:spec_verify_calls_total",)
RUNNING = ("vllm:num_requests_running", "sglang:num_running_reqs", "sglang:num_requests_running")
QUEUED = ("vllm:num_requests_waiting", "sglang:num_queue_reqs", "sglang:num_requests_waiting")
KV_USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage")
SGLANG_GEN_GAUGE = ("sglang:gen_throughput",)
SGLANG_ACCEPT_GAUGE = ("sglang:spec_accept_length",)
SGLANG_RATE_GAUGE = ("sglang:spec_accept_rate",)
TTFT = ("vllm:time_to_first_token_seconds_bucket", "sglang:time_to_first_token_seconds_bucket")
ITL = ("vllm:inter_token_latency_seconds_bucket", "sglang:inter_token_latency_seconds_bucket")
ITL_OLD = ("vllm:time_per_output_token_seconds_bucket",
           "sglang:time_per_output_token_seconds_bucket")
VLLM_MARKERS = ("vllm:num_requests_running", "vllm:generation_tokens_total")
SGLANG_MARKERS = ("sglang:num_running_reqs", "sglang:num_requests_running",
                  "sglang:generation_tokens_total")


def normalize_selector(selector: str | None) -> str:
    """``'{job="llm"}'`` or ``'job="llm"'`` → ``'job="llm"'`` (the matchers inside the braces)."""
    sel = (selector or "").strip()
    if sel.startswith("{") and sel.endswith("}"):
        sel = sel[1:-1].strip()
    return sel


def stored_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """Each name as Prometheus may store it: as exposed, and with ``:`` escaped to ``_``.

    Why: a newer ``prometheus_client`` (the real SGLang 0.5.23 server's) answers Prometheus'
    OpenMetrics ``Accept`` header with ``escaping=underscores``: ``sglang:num_running_reqs`` is
    exposed, and stored, as ``sglang_num_running_reqs`` (its ``# TYPE`` line keeps the colon).
    """
    out = list(names)
    out += [n.replace(":", "_") for n in names if ":" in n]
    return tuple(dict.fromkeys(out))


def series(names: tuple[str, ...] | str, selector: str) -> str:
    """A selector for one or several metric names (both spellings) plus the user's matchers."""
    if isinstance(names, str):
        names = (names,)
    names = stored_names(names)
    parts = [f'__name__=~"{"|".join(names)}"' if len(names) > 1 else f'__name__="{names[0]}"']
    if selector:
        parts.append(selector)
    return "{" + ", ".join(parts) + "}"


def _once(expr: str) -> str:
    return f"max without ({', '.join(RANK_LABELS)}) ({expr})"


def sum_rate(names: tuple[str, ...] | str, sel: str, window: str, by: str = "instance") -> str:
    return f"sum by ({by}) ({_once(f'rate({series(names, sel)}[{window}])')})"


def sum_now(names: tuple[str, ...], sel: str) -> str:
    return f"sum by (instance) ({_once(series(names, sel))})"


def avg_now(names: tuple[str, ...], sel: str) -> str:
    return f"avg by (instance) ({series(names, sel)})"


def quantile(q: float, names: tuple[str, ...], sel: str, window: str) -> str:
    return f"histogram_quantile({q}, sum by (instance, le) (rate({series(names, sel)}[{window}])))"


def _engine(engine: str, names: tuple[str, ...], sel: str, lookback: str) -> str:
    seen = f"count by (instance, model_name) (last_over_time({series(names, sel)}[{lookback}]))"
    return f'label_replace({seen}, "engine", "{engine}", "", "")'


@dataclass(frozen=True, slots=True)
class QueryGroup:
    """One HTTP request: ``figures`` (name → PromQL) joined into one tagged expression."""

    name: str
    figures: tuple[tuple[str, str], ...]

    @property
    def expr(self) -> str:
        return " or ".join(f'label_replace({e}, "{TAG}", "{n}", "", "")' for n, e in self.figures)


def fleet_groups(selector: str | None = None, window: str = DEFAULT_WINDOW,
                 lookback: str = DEFAULT_LOOKBACK) -> tuple[QueryGroup, ...]:
    """The requests of one refresh (four, whatever the number of instances)."""
    s, w = normalize_selector(selector), window
    itl = (f"({quantile(0.5, ITL, s, w)}) or ({quantile(0.5, ITL_OLD, s, w)})",
           f"({quantile(0.99, ITL, s, w)}) or ({quantile(0.99, ITL_OLD, s, w)})")
    return (
        QueryGroup("state", (
            ("up", f"max by (instance) (up{{{s}}})"),
            ("engine_vllm", _engine("vllm", VLLM_MARKERS, s, lookback)),
            ("engine_sglang", _engine("sglang", SGLANG_MARKERS, s, lookback)),
            ("gen_total", sum_now(GEN_TOKENS, s)),
            ("resets", f"max by (instance) (resets({series(GEN_TOKENS, s)}[{lookback}]))"),
            ("starts", "max by (instance) "
                       f"(changes({series('process_start_time_seconds', s)}[{lookback}]))"),
        )),
        QueryGroup("rates", (
            ("tok_s", sum_rate(GEN_TOKENS, s, w)),
            ("drafts", sum_rate(VLLM_DRAFTS, s, w)),
            ("draft_tokens", sum_rate(VLLM_DRAFT_TOKENS, s, w)),
            ("accepted", sum_rate(VLLM_ACCEPTED, s, w)),
            ("per_pos", sum_rate(VLLM_PER_POS, s, w, by="instance, position")),
            ("verify", sum_rate(SGLANG_VERIFY, s, w)),
        )),
        QueryGroup("gauges", (
            ("running", sum_now(RUNNING, s)),
            ("queued", sum_now(QUEUED, s)),
            ("kv", avg_now(KV_USAGE, s)),
            ("tps_gauge", sum_now(SGLANG_GEN_GAUGE, s)),
            ("accept_gauge", avg_now(SGLANG_ACCEPT_GAUGE, s)),
            ("rate_gauge", avg_now(SGLANG_RATE_GAUGE, s)),
        )),
        QueryGroup("latency", (
            ("ttft_p50", quantile(0.5, TTFT, s, w)),
            ("ttft_p99", quantile(0.99, TTFT, s, w)),
            ("itl_p50", itl[0]),
            ("itl_p99", itl[1]),
        )),
    )


def sparkline_queries(selector: str | None = None,
                      window: str = DEFAULT_WINDOW) -> tuple[tuple[str, str], ...]:
    """``/api/v1/query_range`` expressions for the sparklines: tok/s and vLLM's accept length.

    SGLang's accept length over time is tok/s ÷ verify calls/s; both are in one tagged range
    query so one request draws every row's two lines.
    """
    s = normalize_selector(selector)
    accept = (f"1 + {sum_rate(VLLM_ACCEPTED, s, window)} / {sum_rate(VLLM_DRAFTS, s, window)}"
              f" or {sum_rate(('sglang:generation_tokens_total',), s, window)}"
              f" / {sum_rate(SGLANG_VERIFY, s, window)}")
    return (("tok_s", sum_rate(GEN_TOKENS, s, window)), ("accept_len", f"({accept})"))


def sparkline_group(selector: str | None = None, window: str = DEFAULT_WINDOW) -> QueryGroup:
    return QueryGroup("spark", sparkline_queries(selector, window))


__all__ = [
    "DEFAULT_LOOKBACK",
    "DEFAULT_WINDOW",
    "RANK_LABELS",
    "TAG",
    "QueryGroup",
    "fleet_groups",
    "normalize_selector",
    "series",
    "sparkline_group",
    "sparkline_queries",
    "stored_names",
]
