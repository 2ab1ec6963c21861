"""The simulated scheduler: admits requests, runs verify steps, streams tokens, logs stats.

Every verify step of a batch of ``b`` requests takes ``VERIFY_STEP_S * (1 + 0.06 (b-1))`` real
seconds and commits ``accepted + 1`` tokens per request (one SSE event each), so the tokens a
client receives, the ``gen throughput`` / ``Avg generation throughput`` the log prints and the
``/metrics`` counters all agree with each other and with the scenario. Serving runs in real
time whatever ``--speed`` is: tok/s is compared against a baseline and must not be compressed.

Steps are scheduled against absolute deadlines so event-loop latency does not bend the rate.
The bookkeeping (:meth:`ServingEngine.admit`, :meth:`ServingEngine.verify_step`, the stats lines)
is synchronous and reads an injectable clock, so tests can drive exactly the lines the real-time
loop would print without waiting for them.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import sglang_log, vllm_log
from .histogram import Histogram
from .scenario import BATCH_STEP_COST, NUM_SPEC_STEPS, VERIFY_STEP_S, ServerConfig
from .specmodes import SpecModes
from .textfmt import number_tokens

MAX_RUNNING = sglang_log.MAX_RUNNING
PREFILL_BASE_S = 0.025
PREFILL_PER_TOKEN_S = 2e-5


@dataclass(eq=False)
class Request:
    """One generation. ``out`` receives one list of token strings per verify step, then None."""

    rid: str
    prompt_tokens: int
    max_tokens: int
    start: int  # the number the counting text starts at
    arrived: float
    generated: int = 0
    verify_ct: int = 0
    first_token_at: float | None = None
    last_token_at: float | None = None
    finish_reason: str | None = None
    out: asyncio.Queue[list[str] | None] = field(default_factory=asyncio.Queue)
    _pending: collections.deque[str] = field(default_factory=collections.deque)

    def take(self, n: int) -> list[str]:
        while len(self._pending) < n:
            self._pending.extend(number_tokens(self.start))
            self.start = self.start % 999 + 1
        return [self._pending.popleft() for _ in range(n)]

    @property
    def remaining(self) -> int:
        return self.max_tokens - self.generated


class ServingEngine:
    """Shared by the HTTP handlers (submit/cancel), ``/metrics`` and ``/server_info`` (read)."""

    def __init__(self, cfg: ServerConfig, log: Callable[[list[str]], None],
                 epoch: Callable[[], float], clock: Callable[[], float] = time.monotonic) -> None:
        self.cfg = cfg
        self._log = log
        self._epoch = epoch
        self._clock = clock
        self._rng = random.Random(cfg.seed * 7919 + 1)
        self.modes = SpecModes(cfg, self._rng)  # the tier, blocks and DP ranks (SGLang's)
        self.waiting: collections.deque[Request] = collections.deque()
        self.running: list[Request] = []
        self._ids = itertools.count(1)
        self._wake = asyncio.Event()
        self.serving = False
        self.created = time.time()
        # lifetime counters (/metrics, /server_info)
        self.prompt_tokens = self.generation_tokens = self.finished_requests = 0
        self.drafts = self.draft_tokens = self.accepted = 0
        self.accepted_per_pos = [0] * cfg.max_drafts
        self.finished_by_reason: dict[str, int] = {}
        # SGLang's tokenizer-side counters: a request's figures added when it finishes
        self.done_prompt_tokens = self.done_generation_tokens = self.done_verify_calls = 0
        self.ttft, self.itl, self.e2e = Histogram(), Histogram(), Histogram()
        # what the engine measured of its startup (SGLang: /metrics gauges, /server_info)
        self.startup_time: dict[str, Any] | None = None
        self.last_gen_throughput = 0.0
        self.last_accept_len = 0.0  # SGLang's gauge reads 0 until its first decode log line
        self.last_accept_rate = 0.0
        # the current stats interval
        self._i_steps = 0  # batch steps (SGLang logs every decode_log_interval of them)
        self._i_tokens = self._i_prompt = self._i_drafts = self._i_accepted = 0
        self._i_pos = [0] * cfg.max_drafts
        self._i_started = clock()
        self._prev_idle = True
        # asleep at this level (None: awake) or paused (.hold): no step runs while held
        self.sleep_level: int | None = None
        self.paused = False

    # ------------------------------------------------------------------ requests
    def submit(self, prompt_tokens: int, max_tokens: int) -> Request:
        req = Request(f"{next(self._ids):016x}", max(1, prompt_tokens), max(1, max_tokens),
                      self._rng.randrange(1, 999), self._clock())
        self.waiting.append(req)
        self._wake.set()
        return req

    def cancel(self, req: Request) -> None:
        """The client went away: drop the request wherever it is."""
        if req in self.waiting:
            self.waiting.remove(req)
        if req in self.running:
            self.running.remove(req)
            self._finish(req, "abort")

    @property
    def held(self) -> bool:
        return self.paused or self.sleep_level is not None

    def nudge(self) -> None:
        """Held or released: the loop looks again."""
        self._wake.set()

    def start_serving(self) -> None:
        self.serving = True
        self._i_started = self._clock()
        self._wake.set()

    @property
    def used_tokens(self) -> int:
        return sum(r.prompt_tokens + r.generated for r in self.running)

    @property
    def token_usage(self) -> float:
        return self.used_tokens / max(1, self.cfg.kv_tokens)

    @property
    def avg_accept_len(self) -> float | None:
        """Lifetime accepted-incl-bonus per verify step (SGLang ``avg_spec_accept_length``)."""
        return 1.0 + self.accepted / self.drafts if self.drafts else None

    # ------------------------------------------------------------------ the loop
    def step_seconds(self) -> float:
        """How long the next verify step of the current batch takes."""
        return VERIFY_STEP_S * (1.0 + BATCH_STEP_COST * (len(self.running) - 1))

    def prefill_seconds(self) -> float:
        room = MAX_RUNNING - len(self.running)
        tokens = sum(r.prompt_tokens for r in itertools.islice(self.waiting, max(0, room)))
        return PREFILL_BASE_S + tokens * PREFILL_PER_TOKEN_S

    async def run(self) -> None:
        """Serve forever (cancelled by the runtime on shutdown)."""
        deadline = self._clock()
        while True:
            if not self.serving or self.held or not (self.running or self.waiting):
                self._wake.clear()
                await self._wake.wait()
                deadline = self._clock()
                continue
            if self.waiting and len(self.running) < MAX_RUNNING:
                took = self.prefill_seconds()
                await asyncio.sleep(took)
                self.admit(took)
                deadline = self._clock()
            if not self.running:
                continue
            deadline += self.step_seconds()
            await asyncio.sleep(max(0.0, deadline - self._clock()))
            self.verify_step()

    def admit(self, took: float) -> None:
        """Prefill the waiting requests (``took`` seconds were spent on it) into the batch."""
        batch: list[Request] = []
        while self.waiting and len(self.running) + len(batch) < MAX_RUNNING:
            batch.append(self.waiting.popleft())
        tokens = sum(r.prompt_tokens for r in batch)
        self.prompt_tokens += tokens
        self._i_prompt += tokens
        self.running.extend(batch)
        cfg, now = self.cfg, self._epoch()
        if cfg.engine == "sglang":
            self._log([sglang_log.prefill_line(cfg, now, len(batch), tokens, 0, self.token_usage,
                                               len(self.running) - len(batch), len(self.waiting),
                                               tokens / took),
                       sglang_log.debug_line(tokens, cfg.hidden_dim)])
        else:
            self._log([vllm_log.debug_line(cfg, tokens, cfg.hidden_dim)])

    def verify_step(self) -> None:
        """One verify step for every running request: tokens out, counters, stats lines."""
        now = self._clock()
        batch = len(self.running)
        for req in list(self.running):
            accepted = self.modes.draw(req.rid)
            n = min(accepted + 1, req.remaining)
            self.drafts += 1
            self.draft_tokens += self.modes.drafts
            self.accepted += accepted
            self._i_drafts += 1
            self._i_accepted += accepted
            for i in range(accepted):
                self.accepted_per_pos[i] += 1
                self._i_pos[i] += 1
            req.generated += n
            req.verify_ct += 1
            self.generation_tokens += n
            self._i_tokens += n
            if req.first_token_at is None:
                req.first_token_at = now
                self.ttft.observe(now - req.arrived)
            else:
                self.itl.observe((now - (req.last_token_at or now)) / n)
            req.last_token_at = now
            req.out.put_nowait(req.take(n))
            if req.remaining <= 0:
                self.running.remove(req)
                self._finish(req, "length")
        self._i_steps += 1
        if self.cfg.engine == "sglang" and self._i_steps >= self.cfg.decode_log_interval:
            self._log_sglang_decode(batch)

    def _finish(self, req: Request, reason: str) -> None:
        req.finish_reason = reason
        self.finished_requests += 1
        self.done_prompt_tokens += req.prompt_tokens
        self.done_generation_tokens += req.generated
        self.done_verify_calls += req.verify_ct
        self.finished_by_reason[reason] = self.finished_by_reason.get(reason, 0) + 1
        self.e2e.observe(self._clock() - req.arrived)
        req.out.put_nowait(None)

    # ------------------------------------------------------------------ stats lines
    def _take_interval(self) -> tuple[float, float]:
        """Close the stats interval: (its length in seconds, its mean accept length)."""
        now = self._clock()
        seconds = max(1e-6, now - self._i_started)
        accept = 1.0 + self._i_accepted / self._i_drafts if self._i_drafts else 1.0
        self._i_started = now
        self.modes.sampler.new_interval()
        return seconds, accept

    def _reset_interval(self) -> None:
        self._i_steps = self._i_tokens = self._i_prompt = self._i_drafts = self._i_accepted = 0
        self._i_pos = [0] * self.cfg.max_drafts

    def _log_sglang_decode(self, batch: int) -> None:
        """The decode line of the batch that ran the interval's last step."""
        tokens = self._i_tokens
        seconds, accept = self._take_interval()
        self.last_gen_throughput = tokens / seconds
        self.last_accept_len = accept
        modes = self.modes
        window = modes.draft_tokens
        self.last_accept_rate = (accept - 1.0) / (window - 1)
        modes.decode_line(accept)
        cfg, epoch = self.cfg, self._epoch()
        lines = [sglang_log.decode_line(cfg, epoch, batch, self.used_tokens, self.token_usage,
                                        accept, self.last_gen_throughput, len(self.waiting),
                                        window, modes.last_cap_len, modes.last_block_accept_len),
                 sglang_log.debug_line(batch * window, cfg.hidden_dim)]
        if (moved := modes.adapt()) is not None:
            lines.append(sglang_log.adaptive_line(cfg, epoch, *moved, ema=accept - 1.0))
        self._log(lines)
        self._reset_interval()

    async def run_vllm_stats(self) -> None:
        """vLLM's ``LoggingStatLogger``: every interval from the API server; an idle interval that
        follows an idle one is logged at DEBUG, i.e. not at all."""
        while True:
            await asyncio.sleep(self.cfg.stats_interval_s)
            self.log_vllm_stats()

    def log_vllm_stats(self) -> None:
        tokens, prompt, drafts, accepted = (self._i_tokens, self._i_prompt, self._i_drafts,
                                            self._i_accepted)
        per_pos = tuple(self._i_pos)
        seconds, accept = self._take_interval()
        idle = tokens == 0 and prompt == 0
        self.last_gen_throughput = tokens / seconds
        if drafts:
            self.last_accept_len = accept
        if not (idle and self._prev_idle):
            self._log(vllm_log.stats_lines(
                self.cfg, self._epoch(), prompt / seconds, tokens / seconds, len(self.running),
                len(self.waiting), self.token_usage, accepted, drafts * NUM_SPEC_STEPS, drafts,
                per_pos, seconds))
        self._prev_idle = idle
        self._reset_interval()
