"""The startup details an engine reports itself, folded into ``state.startup``.

Its measured phase durations (the fullest report is kept; between equally full ones, the source
named first in ``TIMINGS_SOURCES``: the log line, the gauges and ``/server_info`` carry the same
figures, and which arrives first is a race the shown source must not follow), the step inside
compiling it is in, and the checkpoint's size and read percent (each line gives one of them;
a size line starts the next checkpoint: the drafter's after the target's).
"""

from __future__ import annotations

from eagle_tui.model.events import TIMINGS_SOURCES, EngineTimings, SubStep, WeightBytes
from eagle_tui.model.fold.batch import Batch


def _rank(t: EngineTimings) -> tuple[int, int]:
    """Fuller first, then the source's place in ``TIMINGS_SOURCES`` (smaller wins)."""
    place = TIMINGS_SOURCES.index(t.source) if t.source in TIMINGS_SOURCES else len(
        TIMINGS_SOURCES)
    return -len(t.phases), place


def startup_detail(b: Batch, ev: EngineTimings | SubStep | WeightBytes) -> None:
    st = b.s.startup
    if isinstance(ev, EngineTimings):
        old = st.engine_times
        if old is None or _rank(ev) < _rank(old):
            b.put("startup", engine_times=ev)
    elif isinstance(ev, SubStep):
        if st.substep != ev:
            b.put("startup", substep=ev)
    else:
        old_bytes = st.weight_bytes
        if old_bytes is not None and ev.size_gib is None:  # (a size: the next checkpoint)
            ev = WeightBytes(ev.lineno,
                             ev.size_gib if ev.size_gib is not None else old_bytes.size_gib,
                             ev.percent if ev.percent is not None else old_bytes.percent)
        if ev != old_bytes:
            b.put("startup", weight_bytes=ev)


__all__ = ["startup_detail"]
