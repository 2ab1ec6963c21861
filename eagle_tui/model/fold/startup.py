"""The startup details an engine reports itself, folded into ``state.startup``.

Its measured phase durations (the first report is kept, unless a later one names more phases:
the log line, the gauges and ``/server_info`` carry the same figures), the step inside
compiling it is in, and the checkpoint's size and read percent (each line gives one of them;
a size line starts the next checkpoint: the drafter's after the target's).
"""

from __future__ import annotations

from eagle_tui.model.events import EngineTimings, SubStep, WeightBytes
from eagle_tui.model.fold.batch import Batch


def startup_detail(b: Batch, ev: EngineTimings | SubStep | WeightBytes) -> None:
    st = b.s.startup
    if isinstance(ev, EngineTimings):
        old = st.engine_times
        if old is None or len(ev.phases) > len(old.phases):
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
