"""The PromQL of the fleet view: a few requests per refresh, each grouped ``by (instance)``.

Why this shape: the refresh must cost the same for 10 and 1,000 instances, so no query is ever
per instance. Each *figure* (tok/s, drafts/s, running requests, TTFT p99, ...) is one PromQL
expression covering every registered engine at once, and the figures of one *group* travel in
one HTTP request, tagged with ``label_replace(…, "fleet_q", NAME, "", "")`` and joined with
``or``. A group that fails costs only its own figures; the others still answer.

Every figure counts a number once: ``max without (<rank labels>)``, then a sum ``by
(instance)``, the same rule as ``sources/metrics.py`` applies to one server's ``/metrics``.
Which series feed which figure is each engine's (its profile's ``FleetFacet``).
docs/architecture.md ("Module notes") has the details.
"""

from __future__ import annotations

from collections.abc import Callable

from eagle_tui.model.engines import EngineProfile, profiles
from eagle_tui.model.record import Record, record

RANK_LABELS = ("tp_rank", "pp_rank", "moe_ep_rank", "attn_cp_rank", "moe_dp_rank")
TAG = "fleet_q"
# the fleet's figures that engines feed with series (each a :class:`FleetFacet` field)
FIGURE_SERIES = ("gen_tokens", "live_tokens", "drafts", "draft_tokens", "accepted", "per_pos",
                 "verify", "running", "queued", "kv", "tps_gauge", "accept_gauge", "rate_gauge",
                 "steps_gauge", "window_gauge", "block_gauge", "ttft", "itl", "itl_old")
# the rate figures (name, its feeding figure, grouping), asked at every window tier
RATE_FIGURES = (("tok_s", "gen_tokens"), ("live_tok_s", "live_tokens"), ("drafts", "drafts"),
                ("draft_tokens", "draft_tokens"), ("accepted", "accepted"),
                ("per_pos", "per_pos"), ("verify", "verify"))
TIER_SEP = "@"
BY_POSITION = "instance, position"
DEFAULT_WINDOW = "1m"
DEFAULT_LOOKBACK = "15m"



def _ordered() -> list[EngineProfile]:
    """The registered engines, the highest metrics precedence first (the order their names
    take in a selector and their expressions in an ``or``)."""
    return sorted(profiles(), key=lambda p: -p.metrics.precedence)


def names_of(figure: str) -> tuple[str, ...]:
    """Every registered engine's series of one figure (a :class:`FleetFacet` field)."""
    out: tuple[str, ...] = ()
    for profile in _ordered():
        found = getattr(profile.fleet, figure)
        assert isinstance(found, tuple)
        out += found
    return out


def engine_figure(name: str) -> str:
    """The figure that says an instance runs engine ``name`` (its ``engine`` label)."""
    return f"engine_{name}"


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


@record
class QueryGroup(Record):
    """One HTTP request: ``figures`` (name → PromQL) joined into one tagged expression."""

    name: str
    figures: tuple[tuple[str, str], ...]

    @property
    def expr(self) -> str:
        return " or ".join(f'label_replace({e}, "{TAG}", "{n}", "", "")' for n, e in self.figures)


def _figures(pairs: tuple[tuple[str, str | None], ...]) -> tuple[tuple[str, str], ...]:
    """The figures that some registered engine has series for."""
    return tuple((n, e) for n, e in pairs if e is not None)


def tiered(figure: str, window: str | None) -> str:
    """A rate figure's name at a shorter window tier (``tok_s@10s``); the user's window keeps
    the plain name."""
    return figure if window is None else f"{figure}{TIER_SEP}{window}"


def young(selector: str, window: str, samples: int, window_s: float) -> str:
    """The instances that may read a shorter window: fewer than ``samples`` scrapes of ``up``
    in ``window``, or a process younger than it (an old instance never pays for the tiers)."""
    started = series("process_start_time_seconds", selector)
    return (f"(count_over_time(up{{{selector}}}[{window}]) < {samples}) "
            f"or on (instance) ((time() - {started}) < {window_s:g})")


def _with_match(selector: str, figure: str) -> str:
    """The user's matchers plus the label matcher an engine gives its live-token series."""
    if figure != "live_tokens":
        return selector
    match = next((p.fleet.live_tokens_match for p in _ordered()
                  if p.fleet.live_tokens and p.fleet.live_tokens_match), "")
    return ", ".join(m for m in (selector, match) if m)


def hold_figures(selector: str) -> tuple[tuple[str, str], ...]:
    """Each engine's sleep gauge as figures: ``sleep_awake`` (the least awake of an
    instance's engines) and ``sleep_level_N`` (whether any reads level N); one expression per
    figure name, the engines' joined with ``or``."""
    exprs: dict[str, list[str]] = {}
    for p in _ordered():
        h = p.hold
        if h.sleep_gauge is None:
            continue
        gauge = h.sleep_gauge

        def of(value: str, how: str, g: str = gauge, label: str = h.sleep_label) -> str:
            sel = ", ".join(m for m in (selector, f'{label}="{value}"') if m)
            return f"{how} by (instance) ({series(g, sel)})"

        exprs.setdefault("sleep_awake", []).append(of(h.awake_value, "min"))
        for value, level in h.level_values:
            exprs.setdefault(f"sleep_level_{level}", []).append(of(value, "max"))
    return tuple((name, " or ".join(f"({e})" for e in es) if len(es) > 1 else es[0])
                 for name, es in exprs.items())


def fleet_groups(selector: str | None = None, window: str = DEFAULT_WINDOW,
                 lookback: str = DEFAULT_LOOKBACK, shorter: tuple[str, ...] = (),
                 young_samples: int | None = None,
                 window_s: float | None = None) -> tuple[QueryGroup, ...]:
    """The requests of one refresh (four, whatever the number of instances); the rates are
    asked at ``window`` and at each of the ``shorter`` windows, in the same request, the
    shorter ones for young instances only (:func:`young`) when ``young_samples`` is given."""
    s, w = normalize_selector(selector), window
    n = {f: names_of(f) for f in FIGURE_SERIES}
    only = (young(s, w, young_samples, window_s)
            if young_samples is not None and window_s is not None else None)

    def rate(f: str, by: str = "instance", win: str = w) -> str | None:
        if not n[f]:
            return None
        expr = sum_rate(n[f], _with_match(s, f), win, by)
        return f"({expr}) and on (instance) ({only})" if win != w and only else expr

    def rates(win: str | None) -> tuple[tuple[str, str | None], ...]:
        at = w if win is None else win
        return tuple((tiered(name, win), rate(f, BY_POSITION if name == "per_pos" else
                                             "instance", at)) for name, f in RATE_FIGURES)

    def now(f: str, how: Callable[[tuple[str, ...], str], str] = sum_now) -> str | None:
        return how(n[f], s) if n[f] else None

    def q(p: float, f: str) -> str:
        return quantile(p, n[f], s, w)

    itl = ((f"({q(0.5, 'itl')}) or ({q(0.5, 'itl_old')})",
            f"({q(0.99, 'itl')}) or ({q(0.99, 'itl_old')})") if n["itl"] and n["itl_old"] else
           (q(0.5, "itl"), q(0.99, "itl")) if n["itl"] else (None, None))
    gen = n["gen_tokens"]
    engines = tuple((engine_figure(p.name), _engine(p.name, p.fleet.markers, s, lookback))
                    for p in _ordered() if p.fleet.markers)
    return (
        QueryGroup("state", (
            ("up", f"max by (instance) (up{{{s}}})"),
            *engines,
            *_figures((
                ("gen_total", now("gen_tokens")),
                ("resets", f"max by (instance) (resets({series(gen, s)}[{lookback}]))"
                 if gen else None),
            )),
            ("starts", "max by (instance) "
                       f"(changes({series('process_start_time_seconds', s)}[{lookback}]))"),
            # how long each instance has served, for its rate window (model/fleet/windows.py)
            ("samples", f"max by (instance) (count_over_time(up{{{s}}}[{w}]))"),
            ("process_age",
             f"min by (instance) (time() - {series('process_start_time_seconds', s)})"),
        )),
        QueryGroup("rates", _figures(tuple(
            pair for win in (None, *shorter) for pair in rates(win)))),
        QueryGroup("gauges", _figures((
            ("running", now("running")),
            ("queued", now("queued")),
            ("kv", now("kv", avg_now)),
            ("tps_gauge", now("tps_gauge")),
            ("accept_gauge", now("accept_gauge", avg_now)),
            ("rate_gauge", now("rate_gauge", avg_now)),
            ("steps_gauge", now("steps_gauge", avg_now)),
            ("window_gauge", now("window_gauge", avg_now)),
            ("block_gauge", now("block_gauge", avg_now)),
        )) + hold_figures(s)),
        QueryGroup("latency", _figures((
            ("ttft_p50", q(0.5, "ttft") if n["ttft"] else None),
            ("ttft_p99", q(0.99, "ttft") if n["ttft"] else None),
            ("itl_p50", itl[0]),
            ("itl_p99", itl[1]),
        ))),
    )


def sparkline_queries(selector: str | None = None,
                      window: str = DEFAULT_WINDOW) -> tuple[tuple[str, str], ...]:
    """``/api/v1/query_range`` expressions for the sparklines: tok/s and the accept length.

    Each engine says how its accept length over time is computed from rates (vLLM's
    ``1 + accepted / drafts``, SGLang's tokens ÷ verify calls); they are joined with ``or``
    into one tagged range query, so one request draws every row's two lines.
    """
    s = normalize_selector(selector)

    def rate(names: tuple[str, ...]) -> str:
        return sum_rate(names, s, window)

    accepts = [p.fleet.accept(rate) for p in _ordered() if p.fleet.accept is not None]
    out = [("tok_s", rate(names_of("gen_tokens")))]
    if accepts:
        out.append(("accept_len", f"({' or '.join(accepts)})"))
    return tuple(out)


def sparkline_group(selector: str | None = None, window: str = DEFAULT_WINDOW) -> QueryGroup:
    return QueryGroup("spark", sparkline_queries(selector, window))


__all__ = [
    "DEFAULT_LOOKBACK",
    "DEFAULT_WINDOW",
    "FIGURE_SERIES",
    "RANK_LABELS",
    "RATE_FIGURES",
    "TAG",
    "TIER_SEP",
    "QueryGroup",
    "engine_figure",
    "fleet_groups",
    "hold_figures",
    "names_of",
    "normalize_selector",
    "series",
    "sparkline_group",
    "sparkline_queries",
    "stored_names",
    "tiered",
    "young",
]
