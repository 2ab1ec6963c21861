"""SGLang's speculative modes in the simulator: the adaptive tier, DSpark blocks, DP ranks.

* **Adaptive** (``--speculative-adaptive``): the draft steps move through the scenario's
  ``adaptive_steps`` every :data:`ADAPTIVE_EVERY` decode lines, each move logged as SGLang 0.5.23
  logs it (``Adaptive spec params updated: steps 3 -> 5 (ema_accept_len=4.12)``); acceptance
  scales with the steps (the scenario's range is the one of 3 steps).
* **DSpark**: one step drafts a block; the verify window is the block + 1, the decode line adds
  ``cap len`` and ``block accept len`` and the gauges say the same.
* **DP ranks**: requests go to the ranks in turn; ``/v1/loads`` answers each rank's lifetime accept
  length (accepted tokens over verify steps, folded in at each decode line as the real
  scheduler's totals are); the collapsed rank accepts nothing after :data:`COLLAPSE_AFTER`
  decode lines.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

from .acceptance import AcceptSampler
from .scenario import GPU_NAME, NUM_SPEC_STEPS, ServerConfig

ADAPTIVE_EVERY = 3  # decode lines between two moves of an adaptive tier
COLLAPSE_AFTER = 2  # decode lines before the collapsing rank loses its drafts
CAP_MARGIN = 2.4  # a DSpark verify window's mean above the accept length (within the block)
BLOCK_GAIN = 0.7  # the uncapped block accept length above the capped one
LOADS_VERSION = "0.5.23"


class SpecModes:
    """The tier in effect and the per-rank totals of one simulated server."""

    def __init__(self, cfg: ServerConfig, rng: random.Random) -> None:
        self.cfg = cfg
        self._rng = rng
        s = cfg.scenario
        self.ranks = max(1, s.dp_ranks)
        self.steps = cfg.num_steps
        self._tier_index = 0
        self._lines = 0
        self.sampler = self._sampler()
        # per rank: lifetime (accepted + bonus tokens, verify steps), and this interval's
        self.total = [[0, 0] for _ in range(self.ranks)]
        self._interval = [[0, 0] for _ in range(self.ranks)]
        self.last_cap_len = self.last_block_accept_len = 0.0
        self.reported = False  # the gauges read 0 until the first decode line (as SGLang's)

    @property
    def drafts(self) -> int:
        """Drafts per verify step: the block, else the current steps."""
        return self.cfg.scenario.block or self.steps

    @property
    def draft_tokens(self) -> int:
        """The active ``speculative_num_draft_tokens`` (topk 1: steps + 1)."""
        return self.drafts + 1

    def _sampler(self) -> AcceptSampler:
        lo, hi = self.cfg.scenario.accept_len
        if self.cfg.scenario.adaptive_steps:  # the range given is the one of 3 steps
            f = self.steps / NUM_SPEC_STEPS
            lo, hi = 1.0 + (lo - 1.0) * f, 1.0 + (hi - 1.0) * f
        return AcceptSampler((lo, hi), self.drafts, self._rng)

    def draw(self, rid: str) -> int:
        """Accepted drafts of request ``rid`` (a hex count: the DP controller's round robin
        over the ranks) for one verify step."""
        rank = int(rid, 16) % self.ranks if rid.isalnum() else 0
        accepted = self.sampler.draw()
        if rank == self.cfg.scenario.collapsed_rank and self._lines >= COLLAPSE_AFTER:
            accepted = 0
        self._interval[rank][0] += accepted + 1
        self._interval[rank][1] += 1
        return accepted

    def decode_line(self, accept: float) -> None:
        """A decode line closed the interval: fold the ranks' totals, the block figures."""
        self.reported = True
        self._lines += 1
        for rank, (tokens, steps) in enumerate(self._interval):
            self.total[rank][0] += tokens
            self.total[rank][1] += steps
        self._interval = [[0, 0] for _ in range(self.ranks)]
        if self.cfg.scenario.block is not None:
            self.last_cap_len = min(self.draft_tokens, accept + CAP_MARGIN)
            self.last_block_accept_len = min(self.draft_tokens, accept + BLOCK_GAIN)

    def adapt(self) -> tuple[int, int] | None:
        """``(old, new)`` steps when an adaptive tier moves after this decode line."""
        tiers = self.cfg.scenario.adaptive_steps
        if not tiers or self._lines % ADAPTIVE_EVERY:
            return None
        self._tier_index = (self._tier_index + 1) % len(tiers)
        old, self.steps = self.steps, tiers[self._tier_index]
        if old == self.steps:
            return None
        self.sampler = self._sampler()
        return old, self.steps

    def loads(self, running: int, waiting: int, used: int, usage: float,
              gen_tps: float) -> dict[str, Any]:
        """``GET /v1/loads`` (``v1_loads.py`` and ``LoadSnapshot.to_dict``, SGLang 0.5.23)."""
        out = []
        for rank in range(self.ranks):
            share = running // self.ranks + (1 if rank < running % self.ranks else 0)
            load: dict[str, Any] = {
                "timestamp": datetime.now(UTC).timestamp(), "dp_rank": rank,
                "num_running_reqs": share, "num_waiting_reqs": waiting if rank == 0 else 0,
                "num_waiting_uncached_tokens": 0, "num_used_tokens": used // self.ranks,
                "num_total_tokens": used // self.ranks, "num_active_tokens": used // self.ranks,
                "num_prealloc_ready_tokens": 0, "max_total_num_tokens": self.cfg.kv_tokens,
                "max_running_requests": 48, "token_usage": round(usage, 4),
                "gen_throughput": round(gen_tps / self.ranks, 2), "cache_hit_rate": 0.0,
                "utilization": round(usage, 4), "total_prefill_uncached_tokens": 0,
                "total_prefill_busy_us": 0, "decode_moments": None,
            }
            tokens, steps = self.total[rank]
            if steps > 0:
                accept = tokens / steps
                load["speculative"] = {"accept_length": accept,
                                       "accept_rate": (accept - 1.0) / self.drafts}
            out.append(load)
        return {"timestamp": datetime.now(UTC).isoformat(), "version": LOADS_VERSION,
                "accelerator": GPU_NAME, "num_accelerators": max(1, self.cfg.tp // self.ranks),
                "loads": out}


__all__ = ["ADAPTIVE_EVERY", "COLLAPSE_AFTER", "SpecModes"]
