"""SGLang's adaptive-speculation line: the draft steps an ``--speculative-adaptive`` server moved
to, as ``AdaptiveStepSlot._apply_target_steps`` logs it on rank 0 (SGLang 0.5.23,
``srt/speculative/adaptive_spec_params.py``):
``Adaptive spec params updated: steps 3 -> 5 (ema_accept_len=4.12)``."""

from __future__ import annotations

import re

from eagle_tui.model.events import Event, SpecTier

ADAPTIVE_TEXT = "Adaptive spec params updated: steps "
_ADAPTIVE = re.compile(r"Adaptive spec params updated: steps (\d{1,6}) -> (\d{1,6})\b", re.ASCII)


def adaptive_tier(msg: str, lineno: int, time: str | None) -> list[Event]:
    """The new steps of an adaptive line (none for a line that only looks like one)."""
    m = _ADAPTIVE.search(msg)
    return [SpecTier(lineno, int(m.group(2)), time)] if m is not None else []


__all__ = ["ADAPTIVE_TEXT", "adaptive_tier"]
