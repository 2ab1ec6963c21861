"""The stats events' part of ``reduce``: ranks, work weights, idle intervals, ``/metrics``.

Split out of :mod:`.state` (the dispatch and the state's shape live there) because these rules
are the subtle ones of the weighted figures and each has its own tests
(``tests/unit/model/views/test_weighted_numbers.py``, ``tests/unit/model/views/test_liveness.py``):

- a stats line's numbers (:func:`decode`): another tensor-parallel rank's copy of a ``Decode
  batch`` line is dropped, DP groups' tok/s are summed (:func:`counted_rank`, :func:`dp_sum`;
  :mod:`.acceptance` says why);
- each accept-length point is stored with its work (``stats.accept_w``, ``stats.accept_wv``) so
  a window's mean is the counters' ratio (:func:`spec`);
- an idle interval (no request running, nothing generated) enters no series: it only marks the
  state idle (``liveness.idle_t``), so speedup and acceptance are never computed from it;
- counters that went down (``counter_reset``) begin a new run of the ``/metrics`` series.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from eagle_tui.model.acceptance import decode_weight, rank_key, spec_interval
from eagle_tui.model.events import DecodeStats, MetricsSample, SpecStats
from eagle_tui.model.events.live import idle_reading
from eagle_tui.model.runtotals import add_counters
from eagle_tui.model.series import Series

if TYPE_CHECKING:
    from eagle_tui.model.fold.batch import Batch

PP_WINDOW = 20  # spec-metrics intervals in the weighted per-position window
DP_FRESH_S = 15.0  # a DP group's tok/s counts in the sum this long after its newest line
# the series points are buffered under (record, field) (:meth:`.batch.Batch.point`)
GEN_TPS, ACCEPT_RATE = ("stats", "gen_tps"), ("stats", "accept_rate")
ACCEPT_LEN, ACCEPT_W = ("stats", "accept_len"), ("stats", "accept_w")
ACCEPT_WV = ("stats", "accept_wv")
M_GEN_TPS, M_ACCEPT_LEN = ("metrics", "gen_tps"), ("metrics", "accept_len")
_setattr = object.__setattr__


def counted_rank(b: Batch, ev: DecodeStats) -> str | None:
    """The DP group of a line that counts, ``None`` for another TP rank's copy of a line.

    The rank is in the stamp of the line just before (each stats event follows its line).
    """
    recent = b.recent
    if not recent or recent[-1].lineno != ev.lineno or ev.source != "log":
        return ""
    key = rank_key(recent[-1].text)
    if key is None:
        return ""
    group, rank = key
    owners = b.s.stats.rank_owner
    for g, owner in owners:
        if g == group:
            return group if owner == rank else None
    b.put("stats", rank_owner=(*owners, key))
    return group


def dp_sum(b: Batch, group: str, tps: float, now: float) -> float:
    """tok/s of all DP groups: each group's newest value, summed (one group: the value).

    A group whose newest line is older than :data:`DP_FRESH_S` is gone from the sum (an SGLang
    DP rank without requests prints nothing); an idle group's line counts 0.
    """
    kept = tuple(e for e in b.s.stats.dp_tps if e[0] != group and now - e[2] <= DP_FRESH_S)
    b.put("stats", dp_tps=(*kept, (group, tps, now)))
    return tps + sum(v for _, v, _ in kept)


def decode(b: Batch, ev: DecodeStats) -> bool:
    """One ``Decode batch`` / ``Engine 000`` stats line's numbers; ``False`` for another
    tensor-parallel rank's copy of a counted line (nothing of it is kept)."""
    group = counted_rank(b, ev)
    if group is None:
        return False
    s = b.s
    stats = b.mut("stats")  # (the hot path: a stats line always changes ``last_decode``)
    _setattr(stats, "last_decode", ev)
    if ev.running is not None:
        _setattr(stats, "running", ev.running)
    if ev.queued is not None:
        _setattr(stats, "queued", ev.queued)
    if ev.kv_usage is not None:
        _setattr(stats, "kv_usage", ev.kv_usage)
    clock_now = s.clock.now
    now = clock_now if clock_now is not None else 0.0
    if clock_now is not None and (ev.gen_tps is not None or ev.accept_len is not None) \
            and s.liveness.data_t != now:
        _setattr(b.mut("liveness"), "data_t", now)
    idle = idle_reading(ev.running, ev.gen_tps, ev.queued)
    tps = ev.gen_tps
    if group:  # one of several DP groups: the server's tok/s is the groups' sum
        tps = dp_sum(b, group, 0.0 if idle else (ev.gen_tps or 0.0), now)
        idle = idle and not tps  # idle only when every group is
    if idle:
        # an idle interval (vLLM's line after the load ended): no point in any series
        if s.liveness.idle_t is None:
            b.put("liveness", idle_t=now)
    else:
        if ev.gen_tps is not None or ev.accept_len is not None:
            live = s.liveness
            if live.idle_t is not None or live.active_t != now:
                b.put("liveness", idle_t=None, active_t=now)
        if ev.gen_tps is not None and tps is not None:
            b.point(GEN_TPS, now, tps)
            if tps > 0:
                b.put("stats", run_tps=stats.run_tps + tps, run_tps_n=stats.run_tps_n + 1)
        if ev.accept_len is not None and math.isfinite(ev.accept_len):
            w = decode_weight(ev)
            b.point(ACCEPT_LEN, now, ev.accept_len)
            b.point(ACCEPT_W, now, w)
            b.point(ACCEPT_WV, now, w * ev.accept_len)
            run_totals(b, w, w * ev.accept_len)
        if ev.accept_rate is not None:
            b.point(ACCEPT_RATE, now, ev.accept_rate)
    return True


def run_totals(b: Batch, w: float, wv: float) -> None:
    """One interval's work into the run's totals (``stats.run_w``, ``stats.run_wv``)."""
    st = b.s.stats
    b.put("stats", run_w=st.run_w + w, run_wv=st.run_wv + wv, run_n=st.run_n + 1)


def spec(b: Batch, ev: SpecStats, now: float) -> None:
    """A spec-metrics interval: its accept length weighed by its drafts (:mod:`.acceptance`)."""
    s = b.s
    b.put("stats", last_spec=ev, per_position=ev.per_position or s.stats.per_position)
    config = s.config.spec
    k = config.num_steps if config is not None else None
    interval = spec_interval(ev, k)
    if s.clock.now is not None:
        b.put("liveness", data_t=now)
    if interval is None:
        return
    exact, drafts = interval
    b.put("liveness", idle_t=None,
          active_t=now if s.clock.now is not None else s.liveness.active_t)
    b.point(ACCEPT_LEN, now,
            ev.mean_accept_len if ev.mean_accept_len is not None else exact)
    b.point(ACCEPT_W, now, drafts)
    b.point(ACCEPT_WV, now, drafts * exact)
    run_totals(b, drafts, drafts * exact)
    if ev.acceptance_rate is not None:
        b.point(ACCEPT_RATE, now, ev.acceptance_rate)
    if ev.per_position:
        b.put("stats", pp_window=(*s.stats.pp_window, (drafts, ev.per_position))[-PP_WINDOW:])


def apply_metrics(b: Batch, ev: MetricsSample) -> None:
    s = b.s
    if ev.counter_reset and s.metrics.last is not None:
        # the counters went down: the server restarted, its windows start over
        b.put("metrics", gen_tps=Series(), accept_len=Series(), per_position=(),
              acceptance_rate=None)
        b.put("startup", restart_t=ev.t, restart_reason="")
    b.put("metrics", last=ev)
    if ev.counters:
        b.put("metrics", run=add_counters(s.metrics.run, dict(ev.counters)))
    b.put("liveness", data_t=ev.t)
    if idle_reading(ev.running, ev.gen_tps, ev.queued):
        # an idle window: a gauge's value is the last busy interval's, not a reading
        if s.liveness.idle_t is None:
            b.put("liveness", idle_t=ev.t)
    else:
        if ev.gen_tps:
            b.put("liveness", idle_t=None, active_t=ev.t)
        if ev.gen_tps is not None:
            b.point(M_GEN_TPS, ev.t, ev.gen_tps)
        if ev.accept_len is not None:
            b.point(M_ACCEPT_LEN, ev.t, ev.accept_len)
        if ev.acceptance_rate is not None:
            b.put("metrics", acceptance_rate=ev.acceptance_rate)
        if ev.per_position:
            b.put("metrics", per_position=ev.per_position)
    if s.stats.last_decode is None:  # the log's own figures win when there are any
        if ev.running is not None:
            b.put("stats", running=ev.running)
        if ev.queued is not None:
            b.put("stats", queued=ev.queued)
        if ev.kv_usage is not None:
            b.put("stats", kv_usage=ev.kv_usage)
    if s.startup.engine == "unknown" and ev.engine != "unknown":
        b.put("startup", engine=ev.engine)


__all__ = ["DP_FRESH_S", "PP_WINDOW", "apply_metrics", "counted_rank", "decode", "dp_sum",
           "run_totals", "spec"]
