"""A tqdm progress bar in a log line: its description, count, total and tqdm's own time left.

Both of tqdm's shapes the engines print: the loaders' ``{desc}: {percentage:3.0f}% Completed |
{n_fmt}/{total_fmt} [{elapsed}<{remaining}, ...]`` (one ``_BAR_FORMAT`` in SGLang and vLLM)
and tqdm's default ``{desc}: NN%|███   | n/total [elapsed<remaining, ...]``. Redraws glued
on one line (a log copied without its ``\\r``) are read at their last bar. What the
description means (a weight loader, a graph capture) is each engine's to say.
"""

from __future__ import annotations

import re

from eagle_tui.model.ingest.classify import small_int
from eagle_tui.model.record import Record, record

# The last bars of a line are read: a line of glued redraws is as long as the log allows.
TAIL_CHARS = 4096
DESC_CHARS = 200
# Bounded repeats, and a number starts only after a non-digit: an unbounded ``\d+%`` retried at
# every digit of a long digit run is quadratic in the line's length.
# The count must be followed by its times' "[": a line cut inside the count ("12/34" of
# "12/345") is not read. The time left only when whole (followed by "," or "]").
_BAR = re.compile(
    r"(?<!\d)(\d{1,15})%(?: Completed \| |\|[^|\n]{0,512}\| )(\d{1,15})/(\d{1,15}) \["
    r"(?:[\d:]{1,20}<(\d{1,9}(?::\d\d){0,2})(?=[,\]])|)",
    re.ASCII,
)


@record
class Bar(Record):
    """One bar: ``done`` of ``total`` (``0 < total``, ``done <= total``), ``left_s`` as tqdm
    estimates it (``None``: it printed ``?`` or no times)."""

    desc: str
    done: int
    total: int
    left_s: float | None


def clock_seconds(text: str) -> float | None:
    """tqdm's ``format_interval`` (``mm:ss`` or ``h:mm:ss``) in seconds; ``None`` otherwise."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or not all(p.isdigit() and len(p) <= 9 for p in parts):
        return None
    seconds = 0
    for p in parts:
        seconds = seconds * 60 + int(p)
    return float(seconds)


def last_bar(msg: str) -> Bar | None:
    """The line's last tqdm bar with a known total, or ``None`` (no bar, or one that cannot be
    right: a zero total, more done than the total, a number no bar prints)."""
    if "%" not in msg:  # (the cheap test: most lines end here)
        return None
    tail = msg[-TAIL_CHARS:]
    last = prev_end = None
    for m in _BAR.finditer(tail):
        prev_end = last.end() if last is not None else 0
        last = m
    if last is None or prev_end is None:
        return None
    done, total = small_int(last.group(2)), small_int(last.group(3))
    if done is None or total is None or total <= 0 or done > total:
        return None
    desc = tail[prev_end:last.start(1)]
    if prev_end and "]" in desc:  # the glued bar before ends its times with "]"
        desc = desc[desc.rindex("]") + 1:]
    desc = desc.rstrip().removesuffix(":").strip()[-DESC_CHARS:]
    left = last.group(4)
    return Bar(desc, done, total, clock_seconds(left) if left else None)


__all__ = ["DESC_CHARS", "TAIL_CHARS", "Bar", "clock_seconds", "last_bar"]
