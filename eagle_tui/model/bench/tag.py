"""The tag of a bench window marker (``?eagle-tui-bench=ID`` in a request's URL): alone, so that
the report's workers, which look for markers, need not import the windows and the events."""

from __future__ import annotations

BENCH_TAG = "eagle-tui-bench"

__all__ = ["BENCH_TAG"]
