"""Fleet rows: what Prometheus' answers say about each engine instance (pure).

The source hands over, per refresh, the answers of the query groups of
:mod:`.fleet_queries` (figure name → ``[(labels, value), …]``) and the names of the groups that
failed; :func:`build_snapshot` turns them into one immutable :class:`FleetSnapshot`. Nothing
here knows HTTP, so every rule (state, acceptance maths, flags, stale marking) is unit-tested on
canned vectors.

The maths of each engine is its profile's (``FleetFacet.read``), and matches the single-server
metrics source (``sources/metrics.py``). A row's state is ``down or starting`` for ``up == 0``
unless a caller that can reach the host says which (``hints``, see :mod:`.fleet_probe`);
``starting``, ``serving``, ``ready``, ``idle`` or ``sleeping`` (its sleep gauge) for ``up == 1``.
A row's rates all come from one window tier (:class:`RatePlan`, :mod:`.windows`).
docs/architecture.md ("Module notes") has the rules in full.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace

from eagle_tui.model.engines import UNKNOWN, profile_of, profiles
from eagle_tui.model.engines.facets.fleet import FleetReading
from eagle_tui.model.fleet.flags import apply_flags
from eagle_tui.model.fleet.queries import RATE_FIGURES, TAG, engine_figure, fleet_groups, tiered
from eagle_tui.model.fleet.rows import DOWN_OR_STARTING, FleetRow, FleetSnapshot, instance_host
from eagle_tui.model.fleet.windows import pick, rate_window, serving_age
from eagle_tui.model.record import Record, record

MAX_TIER = 1 << 16  # draft tokens per verify step: more is not a reading

Labels = Mapping[str, str]
Vector = Sequence[tuple[Labels, float]]
Answers = Mapping[str, Vector]  # figure name -> its vector

CRASHED = "crashed"
SLEEPING = "sleeping"  # the engine's sleep gauge says so (its level: FleetRow.sleep_level)
STATES = ("serving", "idle", "ready", "starting", SLEEPING, DOWN_OR_STARTING, "down")


def group_figures() -> dict[str, tuple[str, ...]]:
    """Each query group's figure names (the ``engine_NAME`` of every registered engine too)."""
    return {g.name: tuple(name for name, _ in g.figures) for g in fleet_groups()}


_FIELDS_OF_GROUP = {
    "rates": ("tok_s", "accept_len", "accept_rate", "per_position", "spec", "window_s"),
    "gauges": ("running", "queued", "kv_usage", "spec_steps", "spec_draft_tokens",
               "spec_block"),
    "latency": ("ttft_p50", "ttft_p99", "itl_p50", "itl_p99"),
}


def split_tagged(result: Vector) -> dict[str, list[tuple[Labels, float]]]:
    """One group's answer → figure name → vector (the tag label removed)."""
    out: dict[str, list[tuple[Labels, float]]] = {}
    for labels, value in result:
        name = labels.get(TAG)
        if name is None:
            continue
        out.setdefault(name, []).append(
            ({k: v for k, v in labels.items() if k != TAG}, value))
    return out


def _by_instance(vec: Vector | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for labels, value in vec or ():
        inst = labels.get("instance")
        if inst is not None and math.isfinite(value):
            out[inst] = value
    return out


def _positions(vec: Vector | None) -> dict[str, dict[int, float]]:
    out: dict[str, dict[int, float]] = {}
    for labels, value in vec or ():
        inst, pos = labels.get("instance"), labels.get("position", "")
        if inst is not None and pos.isdigit() and math.isfinite(value):
            out.setdefault(inst, {})[int(pos)] = value
    return out


@record
class RatePlan(Record):
    """The windows one refresh asked: ``default_s`` (the plain figure names) and the
    ``shorter`` tiers (names ``tok_s@10s``: label → seconds, ascending), and each instance's
    scrape interval where Prometheus said it."""

    default_s: float | None = None
    shorter: tuple[tuple[str, float], ...] = ()
    scrape: Mapping[str, float] = field(default_factory=dict)


def _engines(answers: Answers) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    # the higher precedence last, so it wins a tie (vLLM: it binds /metrics early)
    for profile in sorted(profiles(), key=lambda p: p.metrics.precedence):
        for labels, _ in answers.get(engine_figure(profile.name), ()):
            inst = labels.get("instance")
            if inst is not None:
                out[inst] = (labels.get("engine", profile.name), labels.get("model_name", ""))
    return out


def _int(v: float | None) -> int | None:
    return None if v is None else round(v)


def is_hint(state: str | None) -> bool:
    """Whether ``state`` is an answer a reachable host gave for an ``up == 0`` instance
    (:mod:`.fleet_probe`): what replaces ``down or starting``."""
    return state in ("starting", "down") or (state or "").startswith(f"{CRASHED}:")


def _state(up: bool | None, known_engine: bool, running: int | None, tok_s: float | None,
           gen_total: float | None, hint: str | None) -> str:
    if up is False or up is None:
        return hint if hint is not None and is_hint(hint) else DOWN_OR_STARTING
    if not known_engine:
        return "starting"
    if (running or 0) > 0 or (tok_s or 0.0) > 0.0:
        return "serving"
    return "ready" if not gen_total else "idle"


_RATES = frozenset(name for name, _ in RATE_FIGURES)


def any_young(answers: Answers, plan: RatePlan) -> bool:
    """Whether some instance has served less than the user's window (its rows may read a
    shorter tier); an age nobody can tell (no scrape interval, no process start) is not."""
    if plan.default_s is None:
        return False
    samples = _by_instance(answers.get("samples"))
    started = _by_instance(answers.get("process_age"))
    for inst in set(samples) | set(started):
        age = serving_age(samples.get(inst), plan.scrape.get(inst), started.get(inst))
        if age is not None and age < plan.default_s:
            return True
    return False


@record
class _Index(Record):
    """The answers indexed once by instance (a row then costs O(figures), not O(fleet))."""

    values: dict[str, dict[str, float]]
    positions: dict[str, dict[str, dict[int, float]]]  # figure -> instance -> position

    @classmethod
    def of(cls, a: Answers) -> _Index:
        pos = {name: _positions(vec) for name, vec in a.items() if name.startswith("per_pos")}
        return cls({name: _by_instance(vec) for name, vec in a.items()
                    if not name.startswith("per_pos")}, pos)


def _tier(inst: str, ix: _Index, plan: RatePlan,
          get: Callable[[str], float | None]) -> tuple[str | None, float | None]:
    """The window tier this instance's rates are read at: (its name suffix, seconds)."""
    if not plan.shorter:
        return None, plan.default_s
    tiers = (*plan.shorter, (None, plan.default_s or 0.0))
    scrape = plan.scrape.get(inst)
    age = serving_age(get("samples"), scrape, get("process_age"))
    want = rate_window(scrape, age, plan.default_s or 0.0)

    def has_data(i: int) -> bool:
        key = tiers[i][0]
        return any(ix.values.get(tiered(f, key), {}).get(inst) is not None
                   for f in ("tok_s", "drafts", "verify"))

    chosen = pick(tuple(w for _, w in tiers), want, has_data, scrape)
    return tiers[-1] if chosen is None else tiers[chosen]


def _row(inst: str, ix: _Index, engines: dict[str, tuple[str, str]],
         hint: str | None, plan: RatePlan) -> FleetRow:
    def get(name: str) -> float | None:
        return ix.values.get(name, {}).get(inst)

    key, window_s = _tier(inst, ix, plan, get)

    def figure(name: str) -> float | None:
        return get(tiered(name, key) if name in _RATES else name)

    engine, model = engines.get(inst, (UNKNOWN, ""))
    up_v = get("up")
    up = None if up_v is None else up_v >= 1.0
    if up is None and (get("gen_total") is not None or get("running") is not None):
        up = True  # no ``up`` of its own (an exporter of many, honor_labels): live series
    gen_total = get("gen_total")
    profile = profile_of(engine)
    positions = ix.positions.get(tiered("per_pos", key), {}).get(inst, {})
    reading = (profile.fleet.read(figure, positions) if profile is not None
               else FleetReading(tok_s=figure("tok_s")))
    tok_s = reading.tok_s
    running = _int(get("running"))
    restarts = max(_int(get("resets")) or 0, _int(get("starts")) or 0)
    steps, window = _tier_int(get("steps_gauge")), _tier_int(get("window_gauge"))
    block = window - 1 if window and window > 1 and (get("block_gauge") or 0) > 0 else None
    state = _state(up, inst in engines, running, tok_s, gen_total, hint)
    level = _sleep_level(get) if up else None
    return FleetRow(
        instance=inst, engine=engine, model=model, up=up,
        state=SLEEPING if level is not None else state, sleep_level=level,
        tok_s=tok_s, accept_len=reading.accept_len, accept_rate=reading.accept_rate,
        per_position=reading.per_position, spec=reading.spec, running=running,
        queued=_int(get("queued")), kv_usage=get("kv"),
        ttft_p50=get("ttft_p50"), ttft_p99=get("ttft_p99"), itl_p50=get("itl_p50"),
        itl_p99=get("itl_p99"), restarts=restarts, gen_total=gen_total,
        window_s=window_s if reading.tok_s is not None or reading.spec else None,
        spec_steps=steps, spec_draft_tokens=window, spec_block=block,
    )


def _tier_int(v: float | None) -> int | None:
    """A tier gauge as a count: 0 (no drafter) and what no tier can be are not readings."""
    n = _int(v)
    return n if n is not None and 0 < n <= MAX_TIER else None


def _sleep_level(get: Callable[[str], float | None]) -> int | None:
    """The sleep level an instance's sleep gauge reads (0: scheduling only), None: awake or
    no such gauge."""
    awake = get("sleep_awake")
    if awake is None or awake >= 1:
        return None
    levels = {lv for p in profiles() for _, lv in p.hold.level_values}
    return max((lv for lv in levels if (get(f"sleep_level_{lv}") or 0) >= 1), default=0)


def _carry(row: FleetRow, prev: FleetRow | None, failed: Sequence[str]) -> FleetRow:
    """Figures of failed groups: the last good ones, and the row marked stale."""
    if not failed:
        return row
    if prev is None:
        return replace(row, stale=True)
    kept = {f: getattr(prev, f) for g in failed for f in _FIELDS_OF_GROUP.get(g, ())}
    return replace(row, **kept, stale=True)


def build_snapshot(answers: Answers, failed: Sequence[str], t: float, *,
                   prev: FleetSnapshot | None = None, errors: Sequence[str] = (),
                   latency_s: float | None = None,
                   hints: Mapping[str, str] | None = None,
                   plan: RatePlan | None = None) -> FleetSnapshot:
    """Rows from one refresh's answers; failed groups keep ``prev``'s figures, marked stale.

    When the ``state`` group (up and engine) failed there is nothing new to build rows from:
    the previous rows are kept whole, marked stale, and the snapshot says ``stale``.
    """
    last_ok = t if not failed else (prev.last_ok_t if prev else None)
    if "state" in failed or (not answers.get("up") and failed):
        rows = tuple(replace(r, stale=True) for r in prev.rows) if prev else ()
        return FleetSnapshot(t, rows, "stale", tuple(errors), last_ok, latency_s,
                             prev.sparks if prev else {})
    engines = _engines(answers)
    up = _by_instance(answers.get("up"))
    # engine instances: known engines, plus targets that are down (a server not yet seen)
    instances = sorted(set(engines) | {i for i, v in up.items() if v < 1.0})
    before = {r.instance: r for r in prev.rows} if prev else {}
    ix = _Index.of(answers)
    plan = plan or RatePlan()
    built = [_carry(_row(i, ix, engines, (hints or {}).get(i), plan), before.get(i), failed)
            for i in instances]
    status = "partial" if failed else "ok"
    return FleetSnapshot(t, tuple(apply_flags(built)), status, tuple(errors), last_ok, latency_s,
                         prev.sparks if prev else {})


__all__ = [
    "CRASHED",
    "DOWN_OR_STARTING",
    "SLEEPING",
    "STATES",
    "Answers",
    "FleetRow",
    "FleetSnapshot",
    "Labels",
    "RatePlan",
    "Vector",
    "any_young",
    "build_snapshot",
    "group_figures",
    "instance_host",
    "is_hint",
    "split_tagged",
]
