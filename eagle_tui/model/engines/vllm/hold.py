"""vLLM's sleep, pause and fault-tolerance states: its gauge, endpoints and log lines.

Every string here was read in vLLM 0.32's installed code: the gauge ``vllm:engine_sleep_state``
(``v1/metrics/loggers.py``: label ``sleep_state`` = ``awake`` / ``weights_offloaded`` (level
1) / ``discard_all`` (level 2)); ``GET /is_sleeping`` → ``{"is_sleeping": bool}``
(``entrypoints/serve/dev/sleep/api_router.py``) and ``GET /is_paused`` → ``{"is_paused":
bool}`` (``entrypoints/rl/online/api_router.py``), both only under ``VLLM_SERVER_DEV_MODE=1``
(404 otherwise); the log lines of ``v1/core/sched/scheduler.py``, ``v1/executor/abstract.py``,
``v1/worker/gpu_worker.py``, the sleep router and ``v1/fault_tolerance/engine_core_sentinel.py``
(``[FT]``). ``/is_sleeping`` is also true while only paused (the engine core's ``is_sleeping``
is "scheduler paused or executor asleep"): the gauge and the log tell the two apart.
"""

from __future__ import annotations

import re

from eagle_tui.model.engines.facets.hold import HoldFacet, HoldQuery
from eagle_tui.model.events.hold import (
    ASLEEP,
    AWAKE,
    FT_FAULT,
    FT_GAVE_UP,
    FT_HEALTHY,
    FT_NOTE,
    PAUSED,
    RESUMED,
    WAKING,
    HoldLine,
)

_PAUSE = re.compile(r"setting pause state to (UNPAUSED|PAUSED_NEW|PAUSED_ALL)\b")
_ASLEEP = re.compile(r"It took [\d.]+ seconds to fall asleep\.")
_FREED = re.compile(r"Sleep mode freed ([\d.]+) GiB memory, ([\d.]+) GiB memory is still in use")
_WAKING = re.compile(r"wake up the engine with tags: (.{0,80})")
_WOKE = re.compile(r"It took [\d.]+ seconds to wake up tags (.{0,80}?)\.?$")
_FT_RAISED = re.compile(r"\[FT\] Busy loop raised (\w{1,80})\. Waiting for recovery")
_FT_STATUS = re.compile(r"\[FT\] Engine (\d{1,6}) status -> ([A-Z]{1,20})")
_FT_TIMEOUT = re.compile(r"\[FT\] No recovery within (\d{1,9})s timeout")
_FT_ANY = re.compile(r"\[FT\] (.{0,160})")


def _woke_all(tags: str) -> bool:
    """Whether a wake-up woke everything: without tags it prints the sleeping set; a partial
    wake names the tags it woke, the KV cache last (vLLM's documented order)."""
    return tags.startswith(("{", "None", "set(")) or "kv_cache" in tags


def read_line(msg: str, lineno: int, time: str | None) -> HoldLine | None:
    """The hold event of one vLLM message, or None (cheap for the lines that hold none)."""
    if "[FT]" in msg:
        if (m := _FT_STATUS.search(msg)) is not None:
            engine, status = m.group(1), m.group(2)
            what = FT_HEALTHY if status == "HEALTHY" else FT_FAULT
            return HoldLine(what, lineno, time, detail=f"engine {engine} {status}")
        if (m := _FT_RAISED.search(msg)) is not None:
            return HoldLine(FT_FAULT, lineno, time,
                            detail=f"busy loop raised {m.group(1)}, waiting for recovery")
        if (m := _FT_TIMEOUT.search(msg)) is not None:
            return HoldLine(FT_GAVE_UP, lineno, time,
                            detail=f"no recovery within {m.group(1)} s")
        m = _FT_ANY.search(msg)
        return HoldLine(FT_NOTE, lineno, time, detail=m.group(1).strip() if m else "")
    if "pause state" in msg and (m := _PAUSE.search(msg)) is not None:
        state = m.group(1)
        return HoldLine(RESUMED if state == "UNPAUSED" else PAUSED, lineno, time, detail=state)
    if "asleep" in msg and _ASLEEP.search(msg):
        return HoldLine(ASLEEP, lineno, time)
    if "Sleep mode freed" in msg and (m := _FREED.search(msg)) is not None:
        return HoldLine(ASLEEP, lineno, time,
                        detail=f"freed {m.group(1)} GiB, {m.group(2)} GiB still in use")
    if "wake up" in msg:
        if (m := _WOKE.search(msg)) is not None:
            tags = m.group(1)
            return HoldLine(AWAKE if _woke_all(tags) else WAKING, lineno, time,
                            detail=f"woke {tags}")
        if (m := _WAKING.search(msg)) is not None:
            return HoldLine(WAKING, lineno, time, detail=f"tags {m.group(1).strip()}")
    return None


HOLD = HoldFacet(
    sleep_gauge="vllm:engine_sleep_state", sleep_label="sleep_state", awake_value="awake",
    level_values=(("weights_offloaded", 1), ("discard_all", 2)),
    queries=(HoldQuery("/is_sleeping", "is_sleeping", "sleeping"),
             HoldQuery("/is_paused", "is_paused", "paused")),
    read_line=read_line,
)

__all__ = ["HOLD", "read_line"]
