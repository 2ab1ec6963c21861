"""The stats events' part of ``reduce``: ranks, work weights, idle intervals, ``/metrics``.

Split out of :mod:`.state` (the dispatch and the state's shape live there) because these rules
are the ones issue 12 is about and each has its own tests (``tests/unit/test_weighted_numbers.py``,
``tests/unit/test_liveness.py``):

- a stats line's numbers (:func:`decode`): another tensor-parallel rank's copy of a ``Decode
  batch`` line is dropped, DP groups' tok/s are summed (:func:`counted_rank`, :func:`dp_sum`;
  :mod:`.acceptance` says why);
- each accept-length point is stored with its work (``accept_w``, ``accept_wv``) so a window's
  mean is the counters' ratio (:func:`spec`);
- an idle interval (no request running, nothing generated) enters no series: it only marks the
  state idle (``idle_t``), so speedup and acceptance are never computed from it;
- counters that went down (``counter_reset``) begin a new run of the ``/metrics`` series.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .acceptance import decode_weight, rank_key, spec_interval
from .events import DecodeStats, MetricsSample, SpecStats
from .series import Series

if TYPE_CHECKING:
    from .batch import Batch

PP_WINDOW = 20  # spec-metrics intervals in the weighted per-position window
DP_FRESH_S = 15.0  # a DP group's tok/s counts in the sum this long after its newest line
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
    s = b.s
    for g, owner in s.rank_owner:
        if g == group:
            return group if owner == rank else None
    _setattr(s, "rank_owner", (*s.rank_owner, key))
    return group


def dp_sum(b: Batch, group: str, tps: float, now: float) -> float:
    """tok/s of all DP groups: each group's newest value, summed (one group: the value).

    A group whose newest line is older than :data:`DP_FRESH_S` is gone from the sum (an SGLang
    DP rank without requests prints nothing); an idle group's line counts 0.
    """
    s = b.s
    kept = tuple(e for e in s.dp_tps if e[0] != group and now - e[2] <= DP_FRESH_S)
    _setattr(s, "dp_tps", (*kept, (group, tps, now)))
    return tps + sum(v for _, v, _ in kept)


def decode(b: Batch, ev: DecodeStats) -> bool:
    """One ``Decode batch`` / ``Engine 000`` stats line's numbers; ``False`` for another
    tensor-parallel rank's copy of a counted line (nothing of it is kept)."""
    s = b.s
    group = counted_rank(b, ev)
    if group is None:
        return False
    _setattr(s, "last_decode", ev)
    if ev.running is not None:
        _setattr(s, "running", ev.running)
    if ev.queued is not None:
        _setattr(s, "queued", ev.queued)
    if ev.kv_usage is not None:
        _setattr(s, "kv_usage", ev.kv_usage)
    now = s.now if s.now is not None else 0.0
    if s.now is not None and (ev.gen_tps is not None or ev.accept_len is not None):
        _setattr(s, "data_t", now)
    idle = ev.running == 0 and not ev.gen_tps and not ev.queued
    tps = ev.gen_tps
    if group:  # one of several DP groups: the server's tok/s is the groups' sum
        tps = dp_sum(b, group, 0.0 if idle else (ev.gen_tps or 0.0), now)
        idle = idle and not tps  # idle only when every group is
    if idle:
        # an idle interval (vLLM's line after the load ended): no point in any series
        if s.idle_t is None:
            _setattr(s, "idle_t", now)
    else:
        if ev.gen_tps is not None or ev.accept_len is not None:
            _setattr(s, "idle_t", None)
            _setattr(s, "active_t", now)
        if ev.gen_tps is not None and tps is not None:
            b.point("gen_tps", now, tps)
        if ev.accept_len is not None and math.isfinite(ev.accept_len):
            w = decode_weight(ev)
            b.point("accept_len", now, ev.accept_len)
            b.point("accept_w", now, w)
            b.point("accept_wv", now, w * ev.accept_len)
        if ev.accept_rate is not None:
            b.point("accept_rate", now, ev.accept_rate)
    return True


def spec(b: Batch, ev: SpecStats, now: float) -> None:
    """A spec-metrics interval: its accept length weighed by its drafts (:mod:`.acceptance`)."""
    s = b.s
    b.set(last_spec=ev, per_position=ev.per_position or s.per_position)
    k = s.spec.num_steps if s.spec is not None else None
    interval = spec_interval(ev, k)
    if s.now is not None:
        b.set(data_t=now)
    if interval is None:
        return
    exact, drafts = interval
    b.set(idle_t=None, active_t=now if s.now is not None else s.active_t)
    b.point("accept_len", now, ev.mean_accept_len if ev.mean_accept_len is not None else exact)
    b.point("accept_w", now, drafts)
    b.point("accept_wv", now, drafts * exact)
    if ev.acceptance_rate is not None:
        b.point("accept_rate", now, ev.acceptance_rate)
    if ev.per_position:
        b.set(pp_window=(*s.pp_window, (drafts, ev.per_position))[-PP_WINDOW:])


def apply_metrics(b: Batch, ev: MetricsSample) -> None:
    s = b.s
    if ev.counter_reset and s.last_metrics is not None:
        # the counters went down: the server restarted, its windows start over
        b.set(m_gen_tps=Series(), m_accept_len=Series(), m_per_position=(),
              m_acceptance_rate=None, restart_t=ev.t)
    b.set(last_metrics=ev, data_t=ev.t)
    if ev.running == 0 and not ev.gen_tps and not ev.queued:
        # an idle window: a gauge's value is the last busy interval's, not a reading
        if s.idle_t is None:
            b.set(idle_t=ev.t)
    else:
        if ev.gen_tps:
            b.set(idle_t=None, active_t=ev.t)
        if ev.gen_tps is not None:
            b.point("m_gen_tps", ev.t, ev.gen_tps)
        if ev.accept_len is not None:
            b.point("m_accept_len", ev.t, ev.accept_len)
        if ev.acceptance_rate is not None:
            b.set(m_acceptance_rate=ev.acceptance_rate)
        if ev.per_position:
            b.set(m_per_position=ev.per_position)
    if s.last_decode is None:  # the log's own figures win when there are any
        if ev.running is not None:
            b.set(running=ev.running)
        if ev.queued is not None:
            b.set(queued=ev.queued)
        if ev.kv_usage is not None:
            b.set(kv_usage=ev.kv_usage)
    if s.engine == "unknown" and ev.engine != "unknown":
        b.set(engine=ev.engine)


__all__ = ["DP_FRESH_S", "PP_WINDOW", "apply_metrics", "counted_rank", "decode", "dp_sum", "spec"]
