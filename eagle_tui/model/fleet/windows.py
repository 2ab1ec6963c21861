"""The fleet's rate windows: how far back each instance's rates look (pure).

A fixed window is slow for a young instance and for a fast scrape: a server that started
20 s ago is read through a minute of mostly nothing, and a configuration change mixes in the
old regime. So the window adapts: at least :data:`SAMPLES` scrape intervals (a rate needs
two samples; a few keep it steady) and :data:`FLOOR_S`, growing with the instance's serving
age up to the user's window. One refresh asks a few *tiers* of windows in the same request
(:func:`tiers`); each row takes the longest tier its age allows and that has data
(:func:`pick`). docs/fleet.md ("Rate windows") has the rules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping

from eagle_tui.model.boundary.loaders import LoadError, load_json

SAMPLES = 4  # scrape intervals in the shortest window
FLOOR_S = 10.0
TIER_FACTOR = 3.0  # each tier this much longer than the one before
MAX_TIERS = 3
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0,
          "y": 31536000.0}
_PART = re.compile(r"(\d{1,9})(ms|s|m|h|d|w|y)")  # bounded: linear on any text
MAX_DURATION_CHARS = 64


def parse_duration(text: str) -> float | None:
    """A Prometheus duration (``1m30s``, ``500ms``, ``15s``) in seconds; ``None`` if not one."""
    text = text.strip()
    if len(text) > MAX_DURATION_CHARS:
        return None
    pos, total = 0, 0.0
    while pos < len(text):
        m = _PART.match(text, pos)
        if m is None:
            return None
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    return total if text and pos == len(text) and total > 0 else None


def format_duration(seconds: float) -> str:
    """Seconds as a PromQL duration: whole seconds as ``15s``, else milliseconds."""
    ms = max(1, round(seconds * 1000))
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def shortest(scrape_s: float | None) -> float:
    """The shortest window for an instance scraped every ``scrape_s`` seconds."""
    return max(SAMPLES * scrape_s, FLOOR_S) if scrape_s else FLOOR_S


def rate_window(scrape_s: float | None, age_s: float | None, default_s: float) -> float:
    """The window an instance's rates should use: its serving age, at least
    :func:`shortest` and at most ``default_s`` (unless the scrape interval needs more).
    Unknown age: the default."""
    low = shortest(scrape_s)
    high = max(default_s, low) if scrape_s else default_s
    if age_s is None or not math.isfinite(age_s):
        return high
    return min(max(age_s, low), high)


def tiers(scrape_s: Iterable[float], default_s: float) -> tuple[float, ...]:
    """The windows one refresh asks (ascending, the last ``default_s``): from the shortest
    window of the fastest-scraped instance up, by :data:`TIER_FACTOR`."""
    known = [s for s in scrape_s if s > 0 and math.isfinite(s)]
    low = shortest(min(known)) if known else FLOOR_S
    out: list[float] = []
    w = low
    while w < default_s and len(out) < MAX_TIERS - 1:
        out.append(w)
        w *= TIER_FACTOR
    return (*out, default_s)


def pick(windows: tuple[float, ...], want_s: float, has_data: Callable[[int], bool],
         scrape_s: float | None = None) -> int | None:
    """The index of the window a row reads: the longest of ``windows`` not over ``want_s``
    (and at least two scrape intervals) with data, else the longest with data; ``None``
    when none has data."""
    order = sorted(range(len(windows)), key=lambda i: -windows[i])
    fits = [i for i in order if windows[i] <= want_s + 1e-9
            and (not scrape_s or windows[i] >= 2 * scrape_s)]
    for i in fits + [i for i in order if i not in fits]:
        if has_data(i):
            return i
    return None


def serving_age(samples: float | None, scrape_s: float | None,
                process_age_s: float | None) -> float | None:
    """How long an instance has served: its process' age where it says (a process start time
    series), and at most as long as Prometheus has scraped it (``samples`` of ``up`` in the
    longest window × the interval, a lower bound when the window is full)."""
    scraped = samples * scrape_s if samples is not None and scrape_s else None
    ages = [a for a in (scraped, process_age_s) if a is not None and a >= 0]
    return min(ages) if ages else None


def parse_targets(body: bytes) -> dict[str, float]:
    """``/api/v1/targets`` → instance → scrape interval in seconds (what it can read; a body
    that is not that answer gives nothing, never an error: the windows then fall back)."""
    try:
        doc = load_json(body, "/api/v1/targets")
    except LoadError:
        return {}
    data = doc.get("data") if isinstance(doc, dict) else None
    active = data.get("activeTargets") if isinstance(data, dict) else None
    out: dict[str, float] = {}
    for t in active if isinstance(active, list) else ():
        if not isinstance(t, dict):
            continue
        labels, interval = t.get("labels"), t.get("scrapeInterval")
        inst = labels.get("instance") if isinstance(labels, dict) else None
        secs = parse_duration(interval) if isinstance(interval, str) else None
        if isinstance(inst, str) and secs is not None:
            out[inst] = secs
    return out


def fastest(intervals: Mapping[str, float]) -> tuple[float, ...]:
    """The distinct scrape intervals, for :func:`tiers`."""
    return tuple(sorted(set(intervals.values())))


__all__ = [
    "FLOOR_S",
    "MAX_TIERS",
    "SAMPLES",
    "fastest",
    "format_duration",
    "parse_duration",
    "parse_targets",
    "pick",
    "rate_window",
    "serving_age",
    "shortest",
    "tiers",
]
