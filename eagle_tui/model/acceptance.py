"""How much work one stats interval stands for, and what acceptance looks like in depth.

**Weights.** A mean of ratios is only the ratio of the sums when every ratio is weighed by its
denominator. An accept length is tokens per verify step, so over a window it is
``Σ tokens / Σ verify steps``: each interval's value weighed by its verify steps. The plain mean
of the interval values lies whenever the intervals differ in work (a real vLLM EAGLE-3 run: the
counters gave 1 + 1459/621 = 3.35, the plain mean of five intervals 3.21, because one of them
held 25 drafts and an accept length of 2.52). Each engine's stats line gives its weight its own
way (vLLM: the interval's drafts; SGLang: ``#running-req``), and ranks that print the same
batch count once.

More in docs/architecture.md, "Module notes", ``model/acceptance``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from eagle_tui.model.events import DecodeStats, SpecStats

# ``[2025-11-20 10:16:03 DP1 TP4] `` → the parallel labels of the stamp
_RANKS = re.compile(r"\[[^\]]{0,40}?((?: (?:DP|PP|TP|EP|CP)\d+)+)\]", re.ASCII)
_LABEL = re.compile(r"(DP|PP|TP|EP|CP)(\d+)", re.ASCII)
_VLLM_ENGINE = re.compile(r"\] Engine (\d{1,6}): ", re.ASCII)


_RANK_KEYS: dict[str, tuple[str, str] | None] = {}  # label text → key (a handful of ranks)


def rank_key(text: str) -> tuple[str, str] | None:
    """``(group, rank)`` of an SGLang line's stamp: the ``DP`` label (or ``""``) and the rest;
    a vLLM data-parallel engine's stats line (``Engine 001:``) is group ``"engine 1"``.

    ``None`` for a line with no parallel label (TP=1): it always counts. The labels of a stamp
    repeat on every line (only its time changes), so each distinct label text is parsed once
    (this runs for every stats line of a flooding log).
    """
    if " TP" not in text[:48] and " DP" not in text[:48]:
        if "] Engine " in text:
            e = _VLLM_ENGINE.search(text)
            if e is not None:
                return f"engine {int(e.group(1))}", ""
        return None
    end = text.find("]", 0, 64)
    colon = text.rfind(":", 0, end)
    if end < 0 or colon < 0:
        return None
    labels_text = text[colon + 3:end]  # " DP1 TP4" after the time's seconds
    try:
        return _RANK_KEYS[labels_text]
    except KeyError:
        pass
    m = _RANKS.match(text)
    key: tuple[str, str] | None = None
    if m is not None:
        labels = dict(_LABEL.findall(m.group(1)))
        group = labels.pop("DP", "")
        key = (group, " ".join(f"{k}{v}" for k, v in sorted(labels.items())))
    if len(_RANK_KEYS) < 4096:  # bounded: garbage stamps cannot grow it
        _RANK_KEYS[labels_text] = key
    return key


def spec_interval(ev: SpecStats, k: int | None) -> tuple[float, float] | None:
    """``(accept length, drafts)`` of a vLLM spec-metrics interval; ``None`` for an empty one.

    ``k`` falls back on the count of per-position rates the line printed.
    """
    k = len(ev.per_position) or k
    if ev.accepted is not None and ev.drafted and k:
        drafts = ev.drafted / k
        return 1.0 + ev.accepted / drafts, drafts
    if ev.mean_accept_len is None:
        return None
    if ev.drafted == 0:
        return None  # nothing was drafted: an idle interval, no acceptance to speak of
    return ev.mean_accept_len, 1.0  # no counts (an old format): equal weights, all it allows


def decode_weight(ev: DecodeStats) -> float:
    """The verify steps an SGLang ``Decode batch`` interval stands for, up to a constant."""
    return float(ev.running) if ev.running else 1.0


def weighted_mean(values: Sequence[float], weights: Sequence[float]) -> float | None:
    """``Σ vᵢwᵢ / Σ wᵢ`` (``None`` when there is no weight)."""
    total = sum(weights)
    if total <= 0:
        return None
    return sum(v * w for v, w in zip(values, weights, strict=True)) / total


def weighted_rates(window: Sequence[tuple[float, tuple[float, ...]]]) -> tuple[float, ...]:
    """Per-position rates over ``(drafts, rates)`` intervals: each weighed by its drafts."""
    if not window:
        return ()
    width = max(len(r) for _, r in window)
    total = sum(w for w, r in window if len(r) == width)
    if total <= 0:
        return ()
    return tuple(sum(w * r[i] for w, r in window if len(r) == width) / total
                 for i in range(width))


def distribution_from_rates(rates: Sequence[float]) -> tuple[float, ...]:
    """P(exactly j drafts accepted), j = 0..k, from in-order per-position acceptance rates.

    Rates that rise with the position (rounding, or a sampler that accepts out of order) are
    clamped to the previous one, so the probabilities never go negative.
    """
    if not rates:
        return ()
    clamped: list[float] = []
    prev = 1.0
    for r in rates:
        prev = min(prev, max(0.0, r))
        clamped.append(prev)
    out = [1.0 - clamped[0]]
    out.extend(clamped[i - 1] - clamped[i] for i in range(1, len(clamped)))
    out.append(clamped[-1])
    return tuple(out)


def distribution_from_histogram(counts: Sequence[float]) -> tuple[float, ...]:
    """P(exactly j correct drafts) from SGLang's ``spec_correct_drafts_histogram``."""
    total = sum(counts)
    if total <= 0:
        return ()
    return tuple(c / total for c in counts)


def histogram_of(meta_info: Mapping[str, object]) -> tuple[int, ...] | None:
    """SGLang's ``spec_correct_drafts_histogram`` from a ``/generate`` answer's ``meta_info``
    (``None`` when absent or malformed: older SGLang, vLLM, no speculation)."""
    hist = meta_info.get("spec_correct_drafts_histogram")
    if not isinstance(hist, list) or not hist or len(hist) > 64:
        return None
    if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in hist):
        return None
    return tuple(hist)


def mean_accepted(dist: Sequence[float]) -> float | None:
    """Accept length (drafts accepted + the bonus token) a distribution implies."""
    if not dist:
        return None
    return 1.0 + sum(j * p for j, p in enumerate(dist))


__all__ = ["WorkTotals", "decode_weight", "distribution_from_histogram", "distribution_from_rates",
           "histogram_of", "mean_accepted", "rank_key", "spec_interval", "weighted_mean",
           "weighted_rates"]


class WorkTotals:
    """Σ drafts and Σ accepted (and per position) over every spec-metrics interval of a log.

    What ``report`` prints as the log's accept length: ``1 + Σaccepted / Σdrafts``, the counters'
    own ratio over the whole log (a sum of integers and exact fractions of them, so it does not
    depend on the order the chunks are folded in).
    """

    __slots__ = ("accepted", "drafts", "intervals", "pos")

    def __init__(self) -> None:
        self.drafts = 0.0
        self.accepted = 0.0
        self.intervals = 0
        self.pos: list[float] = []  # Σ drafts × rate, per position

    def add(self, ev: SpecStats, k: int | None) -> None:
        k = len(ev.per_position) or k
        if ev.accepted is None or not ev.drafted or not k:
            return
        drafts = ev.drafted / k
        self.drafts += drafts
        self.accepted += ev.accepted
        self.intervals += 1
        if len(ev.per_position) == k:
            if len(self.pos) < k:
                self.pos.extend([0.0] * (k - len(self.pos)))
            for i, r in enumerate(ev.per_position):
                self.pos[i] += drafts * r

    @property
    def accept_len(self) -> float | None:
        return 1.0 + self.accepted / self.drafts if self.drafts else None

    @property
    def distribution(self) -> tuple[float, ...]:
        if not self.drafts or not self.pos:
            return ()
        return distribution_from_rates([p / self.drafts for p in self.pos])
