"""The figures as plain data and as one line of text: what headless output and ``report`` print.

The dashboard renders :class:`~.figures.Figures` with styles; ``watch``/``wait`` (text and JSON
lines) and ``report`` print the same figures through these two functions, so every consumer
says the same number, with the same source, window and state. A figure that is not current says
so in both forms (``freshness``, ``age_s``; "last active", "45 s old").
"""

from __future__ import annotations

from typing import Any, TypeVar

from eagle_tui.model.views.figures import Figure, Figures
from eagle_tui.model.views.liveness import HELD
from eagle_tui.model.views.numtext import fixed

T = TypeVar("T")


def _r(x: float | None, digits: int = 3) -> float | None:
    return round(x, digits) if x is not None else None


def figure_dict(fig: Figure[T], digits: int = 3) -> dict[str, Any] | None:
    """``{"value", "source", "window", "freshness", "age_s"}`` (``None``: unknown)."""
    if not fig.known:
        return None
    v: Any = fig.value
    value = tuple(round(x, digits) for x in v) if isinstance(v, tuple) else (
        round(v, digits) if isinstance(v, float) else v)
    return {"value": list(value) if isinstance(value, tuple) else value, "source": fig.source,
            "window": fig.window, "freshness": fig.freshness, "age_s": _r(fig.age_s, 1)}


def figures_dict(figs: Figures) -> dict[str, Any]:
    """Every figure and the server's state, for JSON output (headless lines, ``report``)."""
    live = figs.live
    return {
        "state": live.activity or None,
        "state_reason": live.reason or None,
        "data_age_s": _r(live.data_age_s, 1),
        "restarted_ago_s": _r(live.restarted_ago_s, 1),
        "restart_reason": live.restart_reason or None,
        "tok_s": figure_dict(figs.tok_s, 1),
        "accept_len": figure_dict(figs.accept_len),
        "accept_len_mean": figure_dict(figs.accept_mean),
        "accept_len_lifetime": figure_dict(figs.accept_lifetime),
        "acceptance_rate": figure_dict(figs.accept_rate),
        "per_position": figure_dict(figs.per_position),
        "accepted_distribution": figure_dict(figs.accept_dist),
        "speedup": figure_dict(figs.speedup),
    }


STATE_WORD = {"idle": "IDLE", "stale": "STALE", "dead": "DEAD", "stopped": "STOPPED",
              "sleeping": "SLEEPING", "paused": "PAUSED", "recovering": "RECOVERING"}


def state_text(figs: Figures) -> str:
    """``"IDLE 45 s"`` / ``"STALE (no data for 40 s)"`` / ``"DEAD (process 12 exited …)"``."""
    live = figs.live
    word = STATE_WORD.get(live.activity)
    if word is None:
        return ""
    if live.activity == "idle" or live.activity in HELD:  # (a hold's sentence: .hold)
        return word
    return f"{word} ({live.reason})" if live.reason else word


def figures_text(figs: Figures) -> str | None:
    """``"tok/s 176.9 · accept 3.27 (mean 3.35, last 5 intervals weighted by drafts) [log]"``;
    prefixed ``"last active:"`` / ``"40 s old:"`` when not current; ``None`` with no figure."""
    parts: list[str] = []
    if figs.tok_s.value is not None:
        parts.append(f"tok/s {fixed(figs.tok_s.value, 1)} [{figs.tok_s.source}]")
    acc, mean = figs.accept_len, figs.accept_mean
    if acc.value is not None:
        text = f"accept {fixed(acc.value, 2)}"
        if mean.value is not None:
            text += f" (mean {fixed(mean.value, 2)}, {mean.window})"
        parts.append(f"{text} [{acc.source}]")
    if figs.accept_dist.value:
        dist = " ".join(f"{fixed(p, 2)}" for p in figs.accept_dist.value)
        parts.append(f"P(0..{len(figs.accept_dist.value) - 1} accepted) {dist}")
    if figs.speedup.value is not None:
        parts.append(f"speedup {fixed(figs.speedup.value, 2)}×")
    if not parts:
        return None
    lead = figs.tok_s if figs.tok_s.known else figs.accept_len
    prefix = ""
    if lead.freshness == "last_active":
        prefix = "last active: "
    elif lead.freshness in ("stale", "dead", "stopped") and lead.age_s is not None:
        prefix = f"{fixed(lead.age_s, 0)} s old: "
    state = state_text(figs)
    return (f"{state} · " if state else "") + prefix + " · ".join(parts)


__all__ = ["STATE_WORD", "figure_dict", "figures_dict", "figures_text", "state_text"]
