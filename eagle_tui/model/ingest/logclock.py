"""The server's own clock, read from the time text of its log lines.

Attached to a server that started an hour ago, eagle-tui sees every startup line in one
catch-up burst: the observed times are all "now", and phase durations from them read 0.0 s.
The log's timestamps say how long each phase really took, so phase marks carry the server's
time too, as seconds on a monotonic-enough scale: a date when the line has one (SGLang's
``[2026-12-01 10:00:00]``, Python logging's ``2026-12-01 10:00:00,123``), the day of the year
for vLLM's ``12-01 10:00:00`` (no year), else the second of the day (a stamp without a date:
a later time that is earlier than the previous one by more than 12 h is the next day).

Bounded: only a short text that matches one fixed pattern is parsed.
"""

from __future__ import annotations

import re
from datetime import date

_STAMP = re.compile(
    r"^(?:(\d{4})-(\d\d)-(\d\d)[ T]|(\d\d)-(\d\d) )?(\d\d):(\d\d):(\d\d)(?:[.,](\d{1,6}))?Z?$",
    re.ASCII)
DAY = 86_400.0


def log_seconds(text: str | None) -> float | None:
    """Seconds on the log's clock for a time text, or ``None`` when it is not one."""
    if not text or len(text) > 32:
        return None
    m = _STAMP.match(text)
    if m is None:
        return None
    year, month, day, vmonth, vday, hh, mm, ss, frac = m.groups()
    sod = int(hh) * 3600 + int(mm) * 60 + int(ss) + (float(f"0.{frac}") if frac else 0.0)
    if int(hh) > 23 or int(mm) > 59 or int(ss) > 60:
        return None
    try:
        if year:
            days = date(int(year), int(month), int(day)).toordinal()
        elif vmonth:
            days = date(2000, int(vmonth), int(vday)).toordinal()  # a leap year: 02-29 exists
        else:
            return sod
    except ValueError:
        return None
    return days * DAY + sod


def span(start: float | None, end: float | None) -> float | None:
    """Seconds from ``start`` to ``end`` on the log's clock (a wrap past midnight counted)."""
    if start is None or end is None:
        return None
    delta = end - start
    if delta < -DAY / 2:  # a time of day only, past midnight
        delta += DAY
    return delta if delta >= 0 else None





BURST_S = 0.25  # marks observed closer together than this were read in one catch-up burst


def best_span(observed: float | None, logged: float | None) -> float | None:
    """The duration to show: the observed one, unless the marks came in one catch-up burst
    (observed ≈ 0 while the log's clock says seconds passed) — then the log's."""
    if logged is not None and (observed is None or (observed < BURST_S and logged > 1.0)):
        return logged
    return observed
__all__ = ["BURST_S", "best_span", "log_seconds", "span"]
