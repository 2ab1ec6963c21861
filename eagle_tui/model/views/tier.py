"""The speculative tier in effect, and the accept lengths that are low or healthy for it.

An accept length means something only against the most a verify step can commit: 1 + the
draft steps (a chain of 3 steps: at most 4), or the verify window of a block drafter (a DSpark
block of 16: at most 17, and ~10 is normal there). An adaptive engine changes its steps while
it serves, so the tier is the engine's own active-tier gauges where it exports them, else the
launch's settings. The drafts-rejected thresholds scale with it: the fixed ones hold up to a
chain of 3 steps, and a longer tier raises them in proportion (so 1.3 on a block of 16 is a
collapse, and 10 is not out of range).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eagle_tui.model.engines import profile_of
from eagle_tui.model.record import Record, record

if TYPE_CHECKING:
    from eagle_tui.model.state import DashboardState

REJECT_ACCEPT_LEN = 1.10  # a stats line at or below this: drafts are being rejected
RECOVER_ACCEPT_LEN = 1.20  # recovered only above this (hysteresis: a noisy line is not recovery)
BASE_DRAFTS = 3  # the drafts per verify step the fixed thresholds were set for


@record
class Tier(Record):
    """The drafting in effect: ``steps`` draft steps and ``draft_tokens`` per verify step, or a
    block of ``block`` drafts; ``active``: read from the engine's live gauges (else the launch's
    settings); ``cap_len``/``block_accept_len``: a block drafter's means per verify step."""

    steps: int | None = None
    draft_tokens: int | None = None
    block: int | None = None
    active: bool = False
    cap_len: float | None = None
    block_accept_len: float | None = None
    source: str = ""  # where an active tier was read: "/metrics", "prometheus", "log"

    @property
    def off(self) -> bool:
        """An adaptive engine's tier of 0 steps (its verify window 1 token): it decodes without
        drafting for now. (NGRAM's 0 steps come with its window of draft tokens: drafting.)"""
        return (self.active and self.steps == 0 and (self.draft_tokens or 0) <= 1
                and not self.block)

    @property
    def drafts(self) -> int | None:
        """Drafts per verify step: the most one step can accept (the bonus token aside)."""
        if self.block:
            return self.block
        if self.steps:
            return self.steps
        return self.draft_tokens - 1 if self.draft_tokens and self.draft_tokens > 1 else None

    @property
    def ceiling(self) -> int | None:
        """The largest accept length one verify step can give (drafts + the bonus token)."""
        d = self.drafts
        return d + 1 if d else None

    def text(self) -> str:
        """``"block 16"`` / ``"steps 3 · 4 draft tok"`` (empty: nothing known)."""
        if self.block:
            return f"block {self.block}"
        if self.off:
            return "steps 0 (drafting off)"
        bits = ([f"steps {self.steps}"] if self.steps else []) + (
            [f"{self.draft_tokens} draft tok"] if self.draft_tokens else [])
        return " · ".join(bits)


def _is_block(state: DashboardState, algorithm: str | None) -> bool:
    """Whether the engine names ``algorithm`` a block drafter (its profile says which)."""
    profile = profile_of(state.startup.engine)
    return bool(algorithm) and profile is not None and (
        algorithm.upper() in profile.metrics.block_algorithms)  # type: ignore[union-attr]


def _block_window(steps: int | None, window: int | None, topk: int | None) -> bool:
    """One draft step with a verify window wider than a chain's (steps + 1) and no tree (top-k
    1): a block drafter's shape (DSpark runs 1 step of a whole block, speculative_hook.py,
    SGLang 0.5.23), whatever the algorithm is called."""
    return steps == 1 and window is not None and window > 2 and topk in (None, 1)


def tier(state: DashboardState) -> Tier:
    """The active tier (``/metrics``' gauges, else the log's adaptive line), else the launch's
    (the spec settings). Both gauges
    at 0 (a server without speculation) are no tier; 0 steps with a window of 1 is an adaptive
    engine's "drafting off"."""
    spec = state.config.spec
    block_algo = _is_block(state, spec.algorithm if spec is not None else None)
    m = state.metrics.last
    topk = spec.eagle_topk if spec is not None else None
    if m is not None and (m.spec_steps or m.spec_draft_tokens):
        window = m.spec_draft_tokens
        block = bool(m.spec_cap_len or m.spec_block_accept_len) or block_algo or \
            _block_window(m.spec_steps, window, topk)
        return Tier(m.spec_steps, window,
                    window - 1 if block and window and window > 1 else None, True,
                    m.spec_cap_len, m.spec_block_accept_len, m.source)
    steps = state.config.active_steps
    if steps is not None:  # the log's adaptive line (a chain: top-k 1 drafts steps + 1 tokens)
        window = steps + 1 if topk in (None, 1) else spec.num_draft_tokens if spec else None
        return Tier(steps, window, None, True, source="log")
    if spec is None:
        return Tier()
    window = spec.num_draft_tokens
    block = block_algo or _block_window(spec.num_steps, window, topk)
    block_size = window - 1 if block and window and window > 1 else None
    return Tier(spec.num_steps, window, block_size)


def scale(t: Tier) -> float:
    """How much longer than the base tier this one is (1 for 3 drafts or fewer, or unknown)."""
    d = t.drafts
    return max(1.0, d / BASE_DRAFTS) if d else 1.0


def thresholds(t: Tier) -> tuple[float, float]:
    """``(reject at or below, recovered above)`` for the tier: the fixed ones' distance from 1
    (nothing accepted) scaled by :func:`scale`."""
    k = scale(t)
    return 1.0 + (REJECT_ACCEPT_LEN - 1.0) * k, 1.0 + (RECOVER_ACCEPT_LEN - 1.0) * k


__all__ = ["RECOVER_ACCEPT_LEN", "REJECT_ACCEPT_LEN", "Tier", "scale",
           "thresholds", "tier"]
