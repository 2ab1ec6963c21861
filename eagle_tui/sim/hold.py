"""The simulator's sleep and pause endpoints, answered and logged as the engines do.

vLLM 0.32 (only under ``VLLM_SERVER_DEV_MODE=1``, as vLLM registers them): ``POST /sleep?level=N``
→ ``{"status": "sleeping", "level": N}``, ``POST /wake_up`` → ``{"status": "awake", "tags":
null}``, ``GET /is_sleeping`` → ``{"is_sleeping": bool}`` (true while paused too),
``POST /pause`` → ``{"status": "paused"}``, ``POST /resume`` → ``{"status": "resumed"}``,
``GET /is_paused`` → ``{"is_paused": bool}``; the gauge ``vllm:engine_sleep_state`` in
:mod:`.metrics`; the log lines of its scheduler, executor, GPU worker and sleep router.
SGLang 0.5.23: ``POST /pause_generation`` / ``POST /continue_generation`` → ``{"message":
"Generation paused successfully.", "status": "ok"}`` (and "continued"); while paused ``/ready``
answers 503 and ``/ping`` 200; no log line.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from . import vllm_log
from .engine import ServingEngine

Handler = Callable[[str], tuple[int, Any]]  # (the query string) → (status, payload)
ASLEEP_S, WOKE_S = 0.412731, 0.853104  # the seconds the executor's lines say it took


class SimHold:
    """The endpoints that put one simulated engine to sleep or pause it (its ``sleep_level``
    and ``paused``: the engine's loop generates nothing while either is set)."""

    def __init__(self, engine: ServingEngine, log: Callable[[list[str]], None],
                 epoch: Callable[[], float]) -> None:
        self.engine = engine
        self.cfg = engine.cfg
        self._log = log
        self._epoch = epoch
        self.dev_mode = os.environ.get("VLLM_SERVER_DEV_MODE", "") in ("1", "true", "True")

    def _set(self, level: int | None, paused: bool) -> None:
        self.engine.sleep_level, self.engine.paused = level, paused
        self.engine.nudge()

    def _line(self, index: int, src: str, msg: str) -> str:
        return vllm_log.line(self.cfg, index, self._epoch(), src, msg)

    def _pause_state(self, state: str) -> str:
        return self._line(0, "scheduler.py:2756", f"setting pause state to {state}")

    # ------------------------------------------------------------------ vLLM
    def _sleep(self, query: str) -> tuple[int, Any]:
        raw = parse_qs(query).get("level", ["1"])[0]
        if not raw.isdigit() or not 0 <= int(raw) <= 2:
            return 422, {"detail": [{"type": "less_than_equal", "loc": ["query", "level"],
                                     "msg": "Input should be less than or equal to 2"}]}
        level = int(raw)
        lines = [self._pause_state("PAUSED_NEW")]
        if level >= 1:
            lines.append(self._line(1, "gpu_worker.py:326", "Sleep mode freed 61.37 GiB memory, "
                                    "2.18 GiB memory is still in use."))
            lines.append(self._line(0, "abstract.py:390",
                                    f"It took {ASLEEP_S:.6f} seconds to fall asleep."))
        self._log(lines)
        self._set(level, True)
        return 200, {"status": "sleeping", "level": level}

    def _wake_up(self, _query: str) -> tuple[int, Any]:
        lines = [self._line(-1, "api_router.py:50", "wake up the engine with tags: None")]
        level = self.engine.sleep_level
        if level is not None and level >= 1:
            lines.append(self._line(0, "abstract.py:408", f"It took {WOKE_S:.6f} seconds to "
                                    "wake up tags {'weights', 'kv_cache'}."))
        lines.append(self._pause_state("UNPAUSED"))
        self._log(lines)
        self._set(None, False)
        return 200, {"status": "awake", "tags": None}

    def _pause(self, _query: str) -> tuple[int, Any]:
        self._log([self._pause_state("PAUSED_NEW")])
        self._set(self.engine.sleep_level, True)
        return 200, {"status": "paused"}

    def _resume(self, _query: str) -> tuple[int, Any]:
        if self.engine.sleep_level is None:  # (the scheduler resumes; a sleep stays asleep)
            self._log([self._pause_state("UNPAUSED")])
            self._set(None, False)
        return 200, {"status": "resumed"}

    # ------------------------------------------------------------------ SGLang
    def _pause_generation(self, _query: str) -> tuple[int, Any]:
        self._set(None, True)
        return 200, {"message": "Generation paused successfully.", "status": "ok"}

    def _continue_generation(self, _query: str) -> tuple[int, Any]:
        self._set(None, False)
        return 200, {"message": "Generation continued successfully.", "status": "ok"}

    def routes(self) -> tuple[dict[str, Handler], dict[str, Handler]]:
        """(GET routes, POST routes) this engine has (vLLM's only in its dev mode)."""
        if self.cfg.engine == "sglang":
            return {}, {"/pause_generation": self._pause_generation,
                        "/continue_generation": self._continue_generation}
        if not self.dev_mode:
            return {}, {}
        e = self.engine
        return ({"/is_sleeping": lambda _q: (200, {"is_sleeping": e.held}),
                 "/is_paused": lambda _q: (200, {"is_paused": e.paused})},
                {"/sleep": self._sleep, "/wake_up": self._wake_up, "/pause": self._pause,
                 "/resume": self._resume})


__all__ = ["SimHold"]
