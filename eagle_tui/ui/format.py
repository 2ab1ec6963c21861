"""Pure text formatting for the panes: numbers, durations, bars and sparklines.

Kept apart from the widgets so that the exact strings the dashboard shows are unit-tested without
a terminal, and so every pane formats "unknown" the same way (an em dash, never "None" or 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from eagle_tui.model.views.numtext import fixed

NA = "—"
_SPARK = "▁▂▃▄▅▆▇█"
_EIGHTHS = " ▏▎▍▌▋▊▉"
GIB = 1024**3


def fmt_duration(seconds: float | None) -> str:
    """``42.0s`` under a minute, ``m:ss`` under an hour, ``h:mm:ss`` beyond."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return NA
    if seconds < 60:
        return f"{seconds:.1f}s"
    total = int(seconds)
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def fmt_clock(seconds: float | None) -> str:
    """Elapsed time as ``m:ss`` / ``h:mm:ss`` always (for the ticking total)."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return NA
    total = int(seconds)
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def clock_step(seconds: float) -> float:
    """How finely a growing elapsed time is shown: every second for the first minute, then
    every 5 s, every 10 s past ten minutes and every minute past the hour. A shown number that
    moves repaints its row (a pass of Textual's compositor): an uptime must
    not cost a repaint a second for as long as the dashboard is open (at idle that was most of
    its CPU)."""
    for limit, step in ((60, 1.0), (600, 5.0), (3600, 10.0)):
        if seconds < limit:
            return step
    return 60.0


def age_step(seconds: float) -> float:
    """How finely an age ("no data 45.0s", "2:10 old") is shown: every second for 10 s, then
    every 5 s for a minute, 10 s for ten minutes, a minute for an hour, then every 5 minutes."""
    for limit, step in ((10, 1.0), (60, 5.0), (600, 10.0), (3600, 60.0)):
        if seconds < limit:
            return step
    return 300.0


def _floor_to(seconds: float | None, step: Callable[[float], float]) -> float | None:
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return seconds
    size = step(seconds)
    return math.floor(seconds / size) * size


def coarse_clock(seconds: float | None) -> str:
    """:func:`fmt_clock` of ``seconds`` floored to :func:`clock_step`."""
    return fmt_clock(_floor_to(seconds, clock_step))


def coarse_age(seconds: float | None) -> str:
    """:func:`fmt_duration` of ``seconds`` floored to :func:`age_step`."""
    return fmt_duration(_floor_to(seconds, age_step))


def fmt_gib(nbytes: int | float | None, digits: int = 1) -> str:
    if nbytes is None:
        return NA
    return fixed(nbytes / GIB, digits)


def fmt_bytes(nbytes: int | float | None) -> str:
    """Human size with a binary unit: ``512 B``, ``3.2 GiB``, ``140 GiB``."""
    if nbytes is None:
        return NA
    value = float(nbytes)
    unit = "B"
    for next_unit in ("KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024:
            break
        value /= 1024
        unit = next_unit
    if unit == "B":
        return f"{int(value)} B"
    return f"{fixed(value, 1)} {unit}" if abs(value) < 100 else f"{fixed(value, 0)} {unit}"


def fmt_num(value: float | None, digits: int = 1) -> str:
    if value is None or not math.isfinite(value):
        return NA
    return fixed(value, digits)


def fmt_pct(fraction: float | None, digits: int = 0) -> str:
    """A 0..1 fraction as a percentage."""
    if fraction is None or not math.isfinite(fraction):
        return NA
    return f"{fixed(fraction * 100, digits)}%"


def bar(fraction: float | None, width: int) -> str:
    """A horizontal bar of exactly ``width`` cells with eighth-cell resolution."""
    if width <= 0:
        return ""
    if fraction is None or not math.isfinite(fraction):
        return " " * width
    fraction = min(1.0, max(0.0, fraction))
    eighths = round(fraction * width * 8)
    full, part = divmod(eighths, 8)
    text = "█" * full + (_EIGHTHS[part] if part and full < width else "")
    return text.ljust(width)


def sparkline(
    values: Sequence[float],
    width: int,
    lo: float | None = None,
    hi: float | None = None,
) -> str:
    """The last ``width`` values as block characters, right-aligned, padded with spaces.

    The scale is ``lo``..``hi`` when given (utilisation 0..100), else the window's own min..max;
    a flat series draws at the bottom so that a constant reads as "no change", not "maxed out".
    """
    if width <= 0:
        return ""
    vals = [v for v in values if math.isfinite(v)][-width:]
    if not vals:
        return " " * width
    low = min(vals) if lo is None else lo
    high = max(vals) if hi is None else hi
    span = high - low
    chars = []
    for v in vals:
        if span <= 0:
            idx = 0
        else:
            idx = int((min(high, max(low, v)) - low) / span * (len(_SPARK) - 1) + 0.5)
        chars.append(_SPARK[idx])
    return "".join(chars).rjust(width)


def truncate(text: str, width: int) -> str:
    """Cut ``text`` to ``width`` characters, marking the cut with an ellipsis."""
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    return text[: width - 1] + "…"


__all__ = [
    "GIB",
    "NA",
    "bar",
    "fmt_bytes",
    "fmt_clock",
    "fmt_duration",
    "fmt_gib",
    "fmt_num",
    "fmt_pct",
    "sparkline",
    "truncate",
]
