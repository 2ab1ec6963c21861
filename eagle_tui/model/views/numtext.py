"""Numbers as text of bounded width: a figure read from a log is as wide as any other.

A server log (or a record file, a Prometheus answer) can say ``gen throughput (token/s): 999…``
with three hundred digits; shown with ``:.1f`` it filled the Metrics pane and pushed every
figure after it off the header. :func:`fixed` is ``:.{digits}f`` up to :data:`PLAIN_BELOW`
and the short exponent form beyond (``1.23e+300``): never more than a dozen characters.
"""

from __future__ import annotations

import math

PLAIN_BELOW = 1e9  # magnitudes below this are written out; a real figure is far below it


def fixed(value: float, digits: int = 1) -> str:
    """``f"{value:.{digits}f}"``, or ``f"{value:.3g}"`` from :data:`PLAIN_BELOW` on."""
    if not math.isfinite(value) or abs(value) < PLAIN_BELOW:
        return f"{value:.{digits}f}"
    return f"{value:.3g}"


__all__ = ["PLAIN_BELOW", "fixed"]
